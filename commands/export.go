package commands

import (
	"bytes"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/ioplan"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "export what a circuit needs elsewhere",
		Subcommands: []*cli.Command{{
			Name:      "solidity",
			Usage:     "gnark's Solidity verifier contract for a circuit directory's verifying key",
			UsageText: "zkpipe export solidity --circuit DIR [--contract Verifier.sol]   (proofs' calldata: zkpipe prove --calldata)",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "circuit", Usage: "gnark circuit directory (its circuit.vk and hash-to-field)", Required: true, EnvVars: env("export-circuit")},
				&cli.StringFlag{Name: "contract", Usage: "contract file to write (atomically); - or none for stdout", Value: "-", EnvVars: env("export-contract")},
				oldString("out", "contract", env("export-out")...),
			},
			Action: func(c *cli.Context) error {
				if c.NArg() > 0 {
					return usageErrorf(c, "takes no arguments, got %q", c.Args().Slice())
				}
				name, err := spelling(c, "contract", "out")
				if err != nil {
					return err
				}
				// the contract is checked against the circuit's files
				// before they are read: --contract DIR/circuit.pk (or
				// a link to it, or /proc/self/cwd/…) would replace the key
				var plan ioplan.Plan
				readCircuitDir(&plan, c.String("circuit"))
				plan.Replace("--"+name, c.String(name))
				if err := plan.Check(); err != nil {
					return err
				}
				var buf bytes.Buffer
				if err := gnarksrc.ExportSolidity(c.String("circuit"), &buf); err != nil {
					return err
				}
				if p := c.String(name); p != "-" {
					_, err := blob.Dir(filepath.Dir(p)).Write(filepath.Base(p), buf.Bytes())
					return err
				}
				_, err = os.Stdout.Write(buf.Bytes())
				return err
			},
		}},
	}
}
