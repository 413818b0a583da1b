// Package stdfixture_test proves a circuit built from gnark's standard
// library (emulated secp256k1 arithmetic, a range check, BSB22 lookups)
// from a circuit directory made by another program (testdata, written by
// gnarksrc's TestWriteStdFixture). Its test binary imports no gnark/std
// package, as a zkpipe binary need not: the std hints must come from
// gnarksrc itself, or the solver fails with "missing hint".
package stdfixture_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

func TestAStdCircuitMadeElsewhereProves(t *testing.T) {
	dir := filepath.Join("testdata", "emulated")
	c, err := gnarksrc.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	res := provertest.Run(t, provertest.Config(out, 1, 1), []*stages.Circuit{c},
		[]*stages.Job{{Request: stream.Request{ID: "emu", Witness: filepath.Join("testdata", "emulated.witness")}}}, 2*time.Minute)
	if len(res) != 1 || res[0].Error != "" {
		t.Fatalf("results %+v", res)
	}
	vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(dir, gnarksrc.VKFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := gnarksrc.VerifyFiles(vk, res[0].Proof, res[0].Public); err != nil {
		t.Fatalf("gnark rejects the proof: %v", err)
	}
}
