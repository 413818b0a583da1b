package commands

import (
	"fmt"

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
				Usage: "list the circuits in the store",
				Flags: flags,
				Action: func(c *cli.Context) error {
					q, err := openQueue(c, "circuit list")
					if err != nil {
						return err
					}
					defer q.Conn.Close()
					names, err := fleet.Circuits(c.Context, q)
					if err != nil {
						return err
					}
					for _, n := range names {
						fmt.Fprintln(c.App.Writer, n)
					}
					return nil
				},
			},
		},
	}
}
