package gnarksrc_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"

	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// TestCompressedKeyLoadsUnderAShortDeadline: a proving key in gnark's
// default encoding (pk.WriteTo: compressed, a square root a point to load)
// loads with a load timeout far shorter than its decompression takes on
// this machine, because the deadline counts only the time spent waiting
// for the file; the circuit then proves, and gnark's groth16.Verify
// accepts the proof. A FIFO in the key's place, which nobody writes to, is
// still refused at the deadline, saying so. Before, the whole load had
// LoadTimeout + 1 s each 32 MiB, and a compressed key that took longer to
// decompress was refused as a stalled FIFO.
func TestCompressedKeyLoadsUnderAShortDeadline(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	if _, err := gnarksrc.Setup("commit", 1<<14, dir); err != nil {
		t.Fatal(err)
	}
	pkPath := filepath.Join(dir, gnarksrc.PKFile)
	raw, err := os.ReadFile(pkPath)
	if err != nil {
		t.Fatal(err)
	}
	pk := groth16.NewProvingKey(ecc.BN254)
	if _, err := pk.ReadFrom(bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := pk.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pkPath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	const deadline = 100 * time.Millisecond
	t0 := time.Now()
	c, err := gnarksrc.LoadDirWith(dir, gnarksrc.Options{LoadTimeout: deadline})
	if err != nil {
		t.Fatalf("compressed key (%d bytes) under a %v load timeout: %v", buf.Len(), deadline, err)
	}
	t.Logf("compressed key of %d bytes loaded in %v (load timeout %v)", buf.Len(), time.Since(t0), deadline)
	out := t.TempDir()
	jobs := []*stages.Job{{Request: stream.Request{ID: "p", Generate: &stream.Generate{Seed: 3}}}}
	res := provertest.Run(t, provertest.Config(out, 1, 1), []*stages.Circuit{c}, jobs, 5*time.Minute)
	if len(res) != 1 || res[0].Error != "" {
		t.Fatalf("prove with the compressed key: %+v", res)
	}
	vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(dir, gnarksrc.VKFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := gnarksrc.VerifyFiles(vk, res[0].Proof, res[0].Public); err != nil {
		t.Fatalf("gnark rejects the proof: %v", err)
	}

	// a stall is still a stall
	if err := os.Remove(pkPath); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(pkPath, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	_, err = gnarksrc.LoadDirWith(dir, gnarksrc.Options{LoadTimeout: deadline})
	if err == nil || !strings.Contains(err.Error(), "no complete read within") || !strings.Contains(err.Error(), gnarksrc.PKFile) {
		t.Fatalf("a FIFO for the key: %v, want a timeout naming it", err)
	}
}
