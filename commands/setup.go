package commands

import (
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

func setupCommand() *cli.Command {
	return &cli.Command{
		Name:  "setup",
		Usage: "compile a built-in circuit and run gnark's Groth16 setup into a circuit directory",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "circuit", Usage: fmt.Sprintf("built-in circuit: %v", circuits.Names()), Value: "mulchain", EnvVars: env("circuit")},
			&cli.IntFlag{Name: "constraints", Aliases: []string{"n"}, Usage: "about how many constraints", Value: 1 << 12, EnvVars: env("constraints")},
			&cli.StringFlag{Name: "out", Usage: "circuit directory to write (its base name is the circuit's name)", Required: true, EnvVars: env("out")},
			&cli.StringFlag{Name: "hash-to-field", Value: string(gnarksrc.HashDefault), Usage: "how commitments hash to their challenge, recorded in the directory for prove and verify: default (gnark's), sha256 (what gnark's Solidity verifier computes) or keccak256", EnvVars: env("hash-to-field")},
		},
		Action: func(c *cli.Context) error {
			htf, err := gnarksrc.ParseHashToField(c.String("hash-to-field"))
			if err != nil {
				return err
			}
			start := time.Now()
			info, err := gnarksrc.Setup(c.String("circuit"), c.Int("constraints"), c.String("out"))
			if errors.Is(err, circuits.ErrTooLarge) {
				return refusedError{err}
			}
			if err != nil {
				return err
			}
			if err := gnarksrc.WriteHashToField(c.String("out"), htf); err != nil {
				return err
			}
			fmt.Printf("%s: %s, %d constraints (domain %d), %d wires, in %s\n",
				c.String("out"), c.String("circuit"), info.Constraints, info.Domain, info.Wires, time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
}

// refusedError is a setup refused before any work, for a size the machine
// (or zkpipe's limits) cannot hold: exit 2, the code of a request refused as
// given, as for usage errors, rather than 1, a run that failed.
type refusedError struct{ error }

func (refusedError) exitCode() int { return ExitUsage }

func (e refusedError) Unwrap() error { return e.error }
