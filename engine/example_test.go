package engine_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"math/big"
	"os"
	"path/filepath"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/constraint/solver"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

// inverseHint computes 1/x outside the circuit; the circuit only checks
// x·(1/x) = 1, one constraint instead of an inversion.
func inverseHint(field *big.Int, in, out []*big.Int) error {
	if out[0].ModInverse(in[0], field) == nil {
		return fmt.Errorf("%s has no inverse", in[0])
	}
	return nil
}

// Inverses proves knowledge of nonzero X₀…X₇ whose product is the public P.
type Inverses struct {
	X [8]frontend.Variable
	P frontend.Variable `gnark:",public"`
}

func (c *Inverses) Define(api frontend.API) error {
	product := frontend.Variable(1)
	for _, x := range c.X {
		inv, err := api.Compiler().NewHint(inverseHint, 1, x)
		if err != nil {
			return err
		}
		api.AssertIsEqual(api.Mul(x, inv[0]), 1)
		product = api.Mul(product, x)
	}
	api.AssertIsEqual(product, c.P)
	return nil
}

// Example proves a stream of four witnesses of a circuit with its own hint.
func Example() {
	// 1. The hint, registered before any job is solved.
	solver.RegisterHint(inverseHint)

	// 2. The circuit and its keys (a real deployment loads them from a
	// circuit directory with gnarksrc.LoadDir).
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &Inverses{})
	if err != nil {
		log.Fatal(err)
	}
	pk, vk, err := groth16.Setup(ccs)
	if err != nil {
		log.Fatal(err)
	}
	circuit, err := gnarksrc.New("inverses", ccs, pk, vk, nil)
	if err != nil {
		log.Fatal(err)
	}

	// 3. The engine, on the CPU, writing proofs into a directory of its own.
	dir, err := os.MkdirTemp("", "zkpipe-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	eng, err := engine.New(ctx, engine.Options{Device: "cpu", Out: filepath.Join(dir, "proofs"), Log: io.Discard}, circuit)
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()

	// 4. Jobs: each names a witness file in gnark's binary encoding.
	jobs := make(chan stream.Line)
	go func() {
		defer close(jobs)
		for i := 1; i <= 4; i++ {
			a := &Inverses{P: 1}
			p := big.NewInt(1)
			for k := range a.X {
				x := big.NewInt(int64(i*10 + k + 1))
				a.X[k] = x
				p.Mul(p, x)
			}
			a.P = p
			w, err := frontend.NewWitness(a, ecc.BN254.ScalarField())
			if err != nil {
				log.Fatal(err)
			}
			data, err := w.MarshalBinary()
			if err != nil {
				log.Fatal(err)
			}
			path := filepath.Join(dir, fmt.Sprintf("w%d", i))
			if err := os.WriteFile(path, data, 0o644); err != nil {
				log.Fatal(err)
			}
			jobs <- stream.Line{Number: i, Request: stream.Request{ID: fmt.Sprintf("job-%d", i), Witness: path}}
		}
	}()

	// 5. Results, each proof checked here with gnark's own verifier.
	err = eng.Run(ctx, jobs, func(r stream.Result) error {
		if r.Error != "" {
			fmt.Println(r.ID, "failed:", r.Error)
			return nil
		}
		if err := gnarksrc.VerifyFiles(vk, r.Proof, r.Public); err != nil {
			fmt.Println(r.ID, "rejected by gnark:", err)
			return nil
		}
		fmt.Println(r.ID, "verified by gnark")
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Unordered output:
	// job-1 verified by gnark
	// job-2 verified by gnark
	// job-3 verified by gnark
	// job-4 verified by gnark
}

// ExampleEngine_Prove proves witnesses in memory, as gnark's
// groth16.Prove(ccs, pk, w) does, on an engine opened once: no witness
// file, no proof file, and the proof is gnark's own type.
func ExampleEngine_Prove() {
	solver.RegisterHint(inverseHint)
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &Inverses{})
	if err != nil {
		log.Fatal(err)
	}
	pk, vk, err := groth16.Setup(ccs)
	if err != nil {
		log.Fatal(err)
	}
	circuit, err := gnarksrc.New("inverses", ccs, pk, vk, nil)
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "zkpipe-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	eng, err := engine.New(ctx, engine.Options{Device: "cpu", Out: filepath.Join(dir, "proofs"), Log: io.Discard}, circuit)
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()

	for i := 1; i <= 2; i++ {
		a := &Inverses{}
		p := big.NewInt(1)
		for k := range a.X {
			x := big.NewInt(int64(i*10 + k + 1))
			a.X[k] = x
			p.Mul(p, x)
		}
		a.P = p
		w, err := frontend.NewWitness(a, ecc.BN254.ScalarField())
		if err != nil {
			log.Fatal(err)
		}
		proof, err := eng.Prove(ctx, "inverses", w) // safe from many goroutines
		if err != nil {
			log.Fatal(err)
		}
		public, err := w.Public()
		if err != nil {
			log.Fatal(err)
		}
		if err := groth16.Verify(proof, vk, public); err != nil {
			fmt.Println("proof", i, "rejected by gnark:", err)
			continue
		}
		fmt.Println("proof", i, "verified by gnark")
	}
	// Output:
	// proof 1 verified by gnark
	// proof 2 verified by gnark
}
