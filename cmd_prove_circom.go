package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/source/circomsrc"
)

// circom circuits join zkpipe prove: --zkey FILE loads a snarkjs Groth16
// proving key (jobs {"id","wtns"}); --wasm FILE, given in the same order,
// adds its circuit's witness calculator (jobs {"id","input":{…}}); --r1cs
// FILE, likewise, its constraints, to reject an unsatisfied witness before
// the MSMs (without, the proof is checked before it is written).
// A package-level var, not init: the prove command reads proveHooks in its
// own init, and package variables are set before any init runs.
var _ = registerProveHook(proveHook{
	flags: []cli.Flag{
		&cli.StringSliceFlag{Name: "zkey", Usage: "circom circuit: snarkjs Groth16 proving key (repeatable); the circuit is named after the file, less .zkey", EnvVars: env("zkey"), Category: "circom"},
		&cli.StringSliceFlag{Name: "wasm", Usage: "circom witness calculator (circuit_js/circuit.wasm) of the --zkey in the same position, for input jobs", EnvVars: env("wasm"), Category: "circom"},
		&cli.StringSliceFlag{Name: "r1cs", Usage: "circom constraint system of the --zkey in the same position: unsatisfied witnesses fail in synthesize", EnvVars: env("r1cs"), Category: "circom"},
	},
	setup: func(c *cli.Context, run *proveRun) (func(), error) {
		zkeys, wasms, r1css := c.StringSlice("zkey"), c.StringSlice("wasm"), c.StringSlice("r1cs")
		if len(wasms) > len(zkeys) {
			return nil, fmt.Errorf("%d --wasm for %d --zkey: give each --wasm after its --zkey", len(wasms), len(zkeys))
		}
		if len(r1css) > len(zkeys) {
			return nil, fmt.Errorf("%d --r1cs for %d --zkey: give each --r1cs after its --zkey", len(r1css), len(zkeys))
		}
		var loaded []*circomsrc.Source
		cleanup := func() {
			for _, s := range loaded {
				s.Close(context.Background())
			}
		}
		for i, zk := range zkeys {
			files := circomsrc.Files{Zkey: zk}
			if i < len(wasms) {
				files.Wasm = wasms[i]
			}
			if i < len(r1css) {
				files.R1CS = r1css[i]
			}
			circ, err := circomsrc.LoadFiles(c.Context, files)
			if err != nil {
				cleanup()
				return nil, err
			}
			loaded = append(loaded, circ.Source.(*circomsrc.Source))
			run.circuits = append(run.circuits, circ)
		}
		return cleanup, nil
	},
})
