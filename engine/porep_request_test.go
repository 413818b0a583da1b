package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/keygen"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

// The seed's workload in small (issue 49): a request of porep partitions
// on BLS12-381 under a memory budget that admits one partition at a time
// gives one line, every partition's proof accepted by gnark's verifier, and
// the governor never held two partitions at once.
func TestPorepRequestUnderABudgetOfOnePartition(t *testing.T) {
	const k = 3
	b, err := circuits.Lookup("porep")
	if err != nil {
		t.Fatal(err)
	}
	// the keys as internal/provertest sets them up (which this package's
	// own tests cannot import: it runs streams through the engine)
	n := max(b.Min(), 8192)
	ccs, err := b.CompileOn(curve.BLS12_381, n)
	if err != nil {
		t.Fatal(err)
	}
	pk, vk, err := keygen.Setup(ccs)
	if err != nil {
		t.Fatal(err)
	}
	o := cpuOptions(filepath.Join(t.TempDir(), "out"))
	var e *Engine
	for try := 0; ; try++ {
		c, err := gnarksrc.NewWith("porep", ccs, pk, vk, &gnarksrc.Meta{Builtin: b.Name, Constraints: n}, gnarksrc.Options{KeepProvingKey: true})
		if err != nil {
			t.Fatal(err)
		}
		debug.FreeOSMemory() // what the engine holds at rest follows RSS: steady it
		if e, err = New(context.Background(), o, c); err != nil {
			t.Fatal(err)
		}
		m, fp := e.gov.Stats(), c.Footprint()
		if fits := (m.Budget - m.Charged) / fp; o.Memory.Budget != "off" && fits == 1 {
			break
		}
		if e.Close(); try == 10 {
			t.Fatalf("no budget leaves room for exactly one partition: %+v", m)
		}
		o.Memory.Budget = fmt.Sprint(m.Charged + fp + fp/2)
	}
	defer e.Close()
	var parts []string
	for i := range k {
		parts = append(parts, fmt.Sprintf(`{"generate":{"seed":%d}}`, i+1))
	}
	var lines []stream.Result
	if err := e.Stream(context.Background(), context.Background(),
		strings.NewReader(`{"id":"porep-1","partitions":[`+strings.Join(parts, ",")+`]}`+"\n"),
		func(r stream.Result) error { lines = append(lines, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || lines[0].Error != "" || len(lines[0].Partitions) != k {
		t.Fatalf("%d lines for one request: %+v", len(lines), lines)
	}
	c := e.Circuits()[0]
	for _, p := range lines[0].Partitions {
		proof, pub := groth16.NewProof(ecc.BLS12_381), must(witness.New(ecc.BLS12_381.ScalarField()))
		if err := readInto(p.Proof, proof.ReadFrom); err != nil {
			t.Fatal(err)
		}
		if err := readInto(p.Public, pub.ReadFrom); err != nil {
			t.Fatal(err)
		}
		if err := groth16.Verify(proof, vk, pub); err != nil {
			t.Errorf("partition %d: gnark rejects its proof: %v", p.Index, err)
		}
	}
	if m := e.gov.Stats(); m.Granted != k || m.PeakAdmitted != 1 || m.Waits == 0 {
		t.Errorf("%d admissions for %d partitions, %d at once, %d waits under a budget of one partition (%s, resident %s, footprint %s)",
			m.Granted, k, m.PeakAdmitted, m.Waits, mem.FormatBytes(m.Budget), mem.FormatBytes(m.Charged), mem.FormatBytes(c.Footprint()))
	}
}

// readInto reads the file at path with read (a gnark ReadFrom).
func readInto(path string, read func(io.Reader) (int64, error)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = read(f)
	return err
}
