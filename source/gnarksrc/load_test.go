package gnarksrc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// squareChain has mulchain's shape (one public, one secret, a wire and a
// constraint per step) but not its matrices: x_{i+1} = (x_i + i + 1)².
type squareChain struct {
	X frontend.Variable
	Y frontend.Variable `gnark:",public"`
	N int               `gnark:"-"`
}

func (c *squareChain) Define(api frontend.API) error {
	x := c.X
	for i := 0; i < c.N; i++ {
		t := api.Add(x, i+1)
		x = api.Mul(t, t)
	}
	api.AssertIsEqual(x, c.Y)
	return nil
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A circuit directory holding a file of another circuit of the same size,
// or of another setup of the same circuit, is refused at load, naming the
// file. Before, each loaded, and every job's proof failed every verifier.
func TestLoadDirRefusesKeysOfAnotherSetupOrCircuit(t *testing.T) {
	const n = 64
	a, b := setup(t, "mulchain", n), setup(t, "mulchain", n)
	bits := setup(t, "bits", n)
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &squareChain{N: n - 1})
	if err != nil {
		t.Fatal(err)
	}
	square := filepath.Join(t.TempDir(), gnarksrc.R1CSFile)
	f, _ := os.Create(square)
	if _, err := ccs.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	f.Close()

	cases := []struct {
		name, want string
		spoil      func(dir string)
	}{
		{"vk of another setup", gnarksrc.VKFile, func(d string) { copyFile(t, filepath.Join(b, gnarksrc.VKFile), filepath.Join(d, gnarksrc.VKFile)) }},
		{"pk of another setup", gnarksrc.PKFile, func(d string) { copyFile(t, filepath.Join(b, gnarksrc.PKFile), filepath.Join(d, gnarksrc.PKFile)) }},
		{"r1cs of another circuit of the same size", gnarksrc.R1CSFile, func(d string) { copyFile(t, square, filepath.Join(d, gnarksrc.R1CSFile)) }},
		{"circuit.json of another size", gnarksrc.MetaFile, func(d string) {
			meta, _ := json.Marshal(gnarksrc.Meta{Builtin: "mulchain", Constraints: 2 * n})
			os.WriteFile(filepath.Join(d, gnarksrc.MetaFile), meta, 0o644)
		}},
		{"circuit.json of another circuit", gnarksrc.MetaFile, func(d string) {
			copyFile(t, filepath.Join(bits, gnarksrc.MetaFile), filepath.Join(d, gnarksrc.MetaFile))
		}},
		{"circuit.json with another r1cs count", gnarksrc.MetaFile, func(d string) {
			meta, _ := json.Marshal(gnarksrc.Meta{Builtin: "mulchain", Constraints: n, R1CSConstraints: n + 1})
			os.WriteFile(filepath.Join(d, gnarksrc.MetaFile), meta, 0o644)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "c")
			os.MkdirAll(dir, 0o755)
			for _, f := range []string{gnarksrc.R1CSFile, gnarksrc.PKFile, gnarksrc.VKFile, gnarksrc.MetaFile} {
				copyFile(t, filepath.Join(a, f), filepath.Join(dir, f))
			}
			tc.spoil(dir)
			_, err := gnarksrc.LoadDir(dir)
			if err == nil {
				t.Fatal("loaded a directory whose files are not of one circuit and setup")
			}
			if !strings.Contains(err.Error(), "circuit c") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q should name the circuit and %s", err, tc.want)
			}
		})
	}
	// and the untouched directories load
	for _, d := range []string{a, b} {
		if _, err := gnarksrc.LoadDir(d); err != nil {
			t.Fatal(err)
		}
	}
}

// tampering corrupts a proof's C between assemble and the source's Emit.
type tampering struct{ stages.Source }

func (s tampering) Emit(ctx context.Context, j *stages.Job, p *stages.Points, out stages.Output) (stages.Emitted, error) {
	q := *p
	krs := *p.Krs.(*bn254.G1Affine)
	krs.Add(&krs, p.Ar.(*bn254.G1Affine))
	q.Krs = &krs
	return s.Source.Emit(ctx, j, &q, out)
}

// A proof that fails the verifying key fails its job and is never written;
// with SkipVerify (benchmarks) it would be.
func TestACorruptedProofFailsItsJobAndIsNotWritten(t *testing.T) {
	keys := provertest.Setup(t, "mulchain", 300)
	for _, skip := range []bool{false, true} {
		t.Run(fmt.Sprintf("SkipVerify=%v", skip), func(t *testing.T) {
			c, err := gnarksrc.NewWith("chain", keys.CCS, keys.PK, keys.VK, &gnarksrc.Meta{Builtin: "mulchain", Constraints: 300}, gnarksrc.Options{SkipVerify: skip})
			if err != nil {
				t.Fatal(err)
			}
			c.Source = tampering{c.Source}
			dir := t.TempDir()
			jobs := []*stages.Job{{Request: stream.Request{ID: "t", Generate: &stream.Generate{Seed: 1}}}}
			res := provertest.Run(t, provertest.Config(dir, 1, 1), []*stages.Circuit{c}, jobs, time.Minute)
			if len(res) != 1 {
				t.Fatalf("%d results", len(res))
			}
			_, statErr := os.Stat(filepath.Join(dir, "t.proof"))
			if skip {
				if res[0].Error != "" || statErr != nil {
					t.Fatalf("SkipVerify: %q, %v", res[0].Error, statErr)
				}
				if err := gnarksrc.VerifyFiles(keys.VK, res[0].Proof, res[0].Public); err == nil {
					t.Fatal("gnark accepts the corrupted proof")
				}
				return
			}
			if !strings.Contains(res[0].Error, "job t: assemble: the proof fails circuit chain's verifying key") {
				t.Errorf("error %q", res[0].Error)
			}
			if statErr == nil {
				t.Error("the corrupted proof was written")
			}
		})
	}
}

// A witness path that is a FIFO nobody writes to fails its job within the
// read timeout; /dev/zero, a 1 GiB sparse file and files with a random
// header fail theirs at once; and the jobs after them are proved.
func TestBadWitnessPathsFailTheirJobsAlone(t *testing.T) {
	keys := provertest.Setup(t, "mulchain", 300)
	c, err := gnarksrc.NewWith("chain", keys.CCS, keys.PK, keys.VK, &gnarksrc.Meta{Builtin: "mulchain", Constraints: 300}, gnarksrc.Options{ReadTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "w.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	sparse := filepath.Join(dir, "sparse.witness")
	if err := os.WriteFile(sparse, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(sparse, 1<<30); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	random := func(name string, n int) string {
		b := make([]byte, n)
		rng.Read(b)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	jobs := []*stages.Job{
		{Request: stream.Request{ID: "fifo", Witness: fifo}},
		{Request: stream.Request{ID: "zero", Witness: "/dev/zero"}},
		{Request: stream.Request{ID: "sparse", Witness: sparse}},
		{Request: stream.Request{ID: "r76", Witness: random("r76", 76)}},
		{Request: stream.Request{ID: "r4k", Witness: random("r4k", 4096)}},
		{Request: stream.Request{ID: "after", Generate: &stream.Generate{Seed: 2}}},
	}
	t0 := time.Now()
	res := provertest.Run(t, provertest.Config(dir, 1, 1), []*stages.Circuit{c}, jobs, time.Minute)
	if el := time.Since(t0); el > 20*time.Second {
		t.Errorf("the stream took %v", el)
	}
	got := map[string]stream.Result{}
	for _, r := range res {
		got[r.ID] = r
	}
	if r := got["fifo"]; !strings.Contains(r.Error, "no complete read within 1s") || r.FailedStage != stages.Parse {
		t.Errorf("fifo: %q in %s", r.Error, r.FailedStage)
	}
	for id, want := range map[string]string{
		"zero":   "cannot be read with a deadline",
		"sparse": "not a witness of circuit chain: its header does not give the 1 public and 1 secret values",
		"r76":    "the 1 public and 1 secret values the circuit wants",
		"r4k":    "the 1 public and 1 secret values the circuit wants",
	} {
		if r := got[id]; !strings.Contains(r.Error, want) {
			t.Errorf("%s: %q, want %q", id, r.Error, want)
		}
	}
	if r := got["after"]; r.Error != "" {
		t.Errorf("after: %q", r.Error)
	} else if err := gnarksrc.VerifyFiles(keys.VK, r.Proof, r.Public); err != nil {
		t.Error(err)
	}
}
