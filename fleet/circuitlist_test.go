package fleet_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/source/circomsrc"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

// zkpipe circuit list shows each circuit's kind, curve, constraints and
// hash-to-field beside its name: a gnark circuit on BN254 with gnark's
// default, one on BLS12-381 with sha256, a circom zkey; and for circuits
// an older zkpipe pushed (no metadata), what their circuit.json says, or
// ? where nothing does. Before, it listed names only.
func TestCircuitListSaysWhatEachIs(t *testing.T) {
	bin := binary(t)
	q, url := startQueue(t, 5*time.Second)
	ctx := context.Background()
	pushChain(t, q) // mulchain 200 on BN254, zkpipe setup's circuit.json
	bls := filepath.Join(t.TempDir(), "blschain")
	if _, err := gnarksrc.SetupOn(curve.BLS12_381, "mulchain", 100, bls); err != nil {
		t.Fatal(err)
	}
	if err := gnarksrc.WriteHashToField(bls, gnarksrc.HashSHA256); err != nil {
		t.Fatal(err)
	}
	run(t, bin, "", "circuit", "push", "--nats", url, bls)
	zkey, err := filepath.Abs(filepath.Join("..", "source", "circomsrc", "testdata", "mul.zkey"))
	if err != nil {
		t.Fatal(err)
	}
	run(t, bin, "", "circuit", "push", "--nats", url, "--zkey", zkey)
	// as an older zkpipe pushed them: the files, no metadata
	chain := circuitDir(t)
	old := func(name string, files ...string) {
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(chain, f))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := q.Circuits.PutBytes(ctx, name+"/"+f, b); err != nil {
				t.Fatal(err)
			}
		}
	}
	old("oldsetup", gnarksrc.R1CSFile, gnarksrc.PKFile, gnarksrc.VKFile, gnarksrc.MetaFile)
	old("oldbare", gnarksrc.R1CSFile, gnarksrc.PKFile, gnarksrc.VKFile)

	out := run(t, bin, "", "circuit", "list", "--nats", url)
	rows := map[string][]string{}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) == 0 || strings.Join(strings.Fields(lines[0]), " ") != "NAME KIND CURVE CONSTRAINTS HASH-TO-FIELD" {
		t.Fatalf("circuit list:\n%s", out)
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		rows[f[0]] = f[1:]
	}
	// mul.circom's constraints, as circom counts them
	r1cs, err := circomsrc.ReadR1CSFile(strings.TrimSuffix(zkey, ".zkey") + ".r1cs")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"chain":    "gnark bn254 200 default",
		"blschain": "gnark bls12-381 100 sha256",
		"mul":      fmt.Sprintf("circom bn254 %d -", len(r1cs.Constraints)),
		"oldsetup": "gnark bn254 200 default",
		"oldbare":  "gnark ? ? default",
	}
	for name, w := range want {
		if got := strings.Join(rows[name], " "); got != w {
			t.Errorf("%s: %q, want %q\n%s", name, got, w, out)
		}
	}
	if len(rows) != len(want) {
		t.Errorf("%d circuits listed, want %d:\n%s", len(rows), len(want), out)
	}
	// and the library's list agrees
	list, err := fleet.CircuitList(ctx, q)
	if err != nil || len(list) != len(want) {
		t.Fatalf("CircuitList: %v, %v", list, err)
	}
}
