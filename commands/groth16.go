package commands

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/fileprove"
)

// groth16Command is snarkjs's `groth16 prove` and `groth16 fullprove`, in
// their argument order (rapidsnark's `prover` takes prove's), for one proof.
func groth16Command() *cli.Command {
	return &cli.Command{
		Name:  "groth16",
		Usage: "one circom proof, snarkjs's way: the same arguments and output files as snarkjs groth16 prove/fullprove",
		Subcommands: []*cli.Command{
			{
				Name:      "prove",
				Usage:     "prove a witness (rapidsnark: prover ZKEY WTNS PROOF PUBLIC)",
				UsageText: "zkpipe groth16 prove [flags] circuit.zkey witness.wtns proof.json public.json",
				Flags:     engineFlags(),
				Action: func(c *cli.Context) error {
					a, err := positional(c, 4)
					if err != nil {
						return err
					}
					return groth16Prove(c, fileprove.Job{Zkey: a[0], Wtns: a[1], Proof: a[2], Public: a[3]})
				},
			},
			{
				Name:      "fullprove",
				Usage:     "compute the witness of input.json with the circuit's wasm, then prove it",
				UsageText: "zkpipe groth16 fullprove [flags] input.json circuit.wasm circuit.zkey proof.json public.json",
				Flags:     engineFlags(),
				Action: func(c *cli.Context) error {
					a, err := positional(c, 5)
					if err != nil {
						return err
					}
					return groth16Prove(c, fileprove.Job{Input: a[0], Wasm: a[1], Zkey: a[2], Proof: a[3], Public: a[4]})
				},
			},
		},
	}
}

// groth16Prove runs one job; the proof files exist only if it verified.
func groth16Prove(c *cli.Context, j fileprove.Job) error {
	opts, err := engineOptions(c, "")
	if err != nil {
		return err
	}
	j.ReadTimeout = c.Duration("read-timeout")
	// one proof: the first SIGINT or SIGTERM cancels it (nothing is written)
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := fileprove.Prove(ctx, opts, j); err != nil {
		if ctx.Err() != nil && c.Context.Err() == nil {
			return errInterrupted
		}
		return fmt.Errorf("%s: %w", j.Proof, err)
	}
	fmt.Fprintf(logOut(c), "zkpipe: %s and %s written; the proof verifies with the zkey's key\n", j.Proof, j.Public)
	return nil
}

// positional returns the command's n positional arguments, or a usage
// error (exit 2) saying what was given.
func positional(c *cli.Context, n int) ([]string, error) {
	if c.NArg() != n {
		return nil, usageErrorf(c, "%d arguments given, %d wanted", c.NArg(), n)
	}
	return c.Args().Slice(), nil
}
