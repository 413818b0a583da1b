package commands

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/fleet"
)

func circuitCommand() *cli.Command {
	flags := append(natsFlags(true), queueFlags()...)
	return &cli.Command{
		Name:  "circuit",
		Usage: "manage the circuits in a fleet's store",
		Subcommands: []*cli.Command{
			{
				Name:  "push",
				Usage: "put gnark circuit directories (or a circom zkey) in the store; workers fetch them on first use",
				Description: "A gnark directory holds circuit.r1cs, circuit.pk, circuit.vk (and circuit.json from zkpipe setup); " +
					"the circuit is named after it. A circom circuit is named after its zkey, less .zkey. A worker that " +
					"already holds a circuit of the name keeps its keys until it restarts.",
				UsageText: "zkpipe circuit push --nats URL DIR [DIR…] | --zkey FILE [--wasm FILE]",
				Flags: append(flags,
					&cli.StringFlag{Name: "zkey", Usage: "circom circuit: snarkjs Groth16 proving key", Category: "circom"},
					&cli.StringFlag{Name: "wasm", Usage: "circom witness calculator of --zkey, for input jobs", Category: "circom"},
				),
				Action: func(c *cli.Context) error {
					if c.NArg() == 0 && c.String("zkey") == "" {
						return fmt.Errorf("give a circuit directory, or --zkey")
					}
					if c.String("wasm") != "" && c.String("zkey") == "" {
						return fmt.Errorf("--wasm goes with --zkey")
					}
					q, err := openQueue(c, "circuit push")
					if err != nil {
						return err
					}
					defer q.Conn.Close()
					for _, dir := range c.Args().Slice() {
						name, err := fleet.PushDir(c.Context, q, dir)
						if err != nil {
							return err
						}
						fmt.Fprintf(logOut(c), "zkpipe: circuit %s stored\n", name)
					}
					if z := c.String("zkey"); z != "" {
						name, err := fleet.PushCircom(c.Context, q, z, c.String("wasm"))
						if err != nil {
							return err
						}
						fmt.Fprintf(logOut(c), "zkpipe: circuit %s stored\n", name)
					}
					return nil
				},
			},
			{
				Name:  "list",
				Usage: "list the circuits in the store: name, kind, curve, constraints, hash-to-field",
				Description: "A column is ? where the store does not say (a circuit an older zkpipe pushed: push it again); " +
					"a circom circuit's hash-to-field is -, its proofs having no commitments to hash.",
				Flags: flags,
				Action: func(c *cli.Context) error {
					q, err := openQueue(c, "circuit list")
					if err != nil {
						return err
					}
					defer q.Conn.Close()
					list, err := fleet.CircuitList(c.Context, q)
					if err != nil {
						return err
					}
					return writeCircuitList(c.App.Writer, list)
				},
			},
		},
	}
}

// writeCircuitList writes circuit list's table: a header, then a row a
// circuit.
func writeCircuitList(w io.Writer, list []fleet.CircuitInfo) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tCURVE\tCONSTRAINTS\tHASH-TO-FIELD")
	or := func(s, none string) string {
		if s == "" {
			return none
		}
		return s
	}
	for _, c := range list {
		n := "?"
		if c.Constraints > 0 {
			n = strconv.Itoa(c.Constraints)
		}
		htf := or(c.HashToField, "?")
		if c.Kind == "circom" {
			htf = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Name, c.Kind, or(c.Curve, "?"), n, htf)
	}
	return tw.Flush()
}
