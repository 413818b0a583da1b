package commands

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/stream"
)

func resultsCommand() *cli.Command {
	flags := append(natsFlags(true), queueFlags()...)
	flags = append(flags,
		&cli.StringFlag{Name: "out", Value: "out", EnvVars: env("out"), Usage: "directory for ID.proof, ID.public (and ID.proof.json), written atomically"},
		&cli.StringFlag{Name: "results", Value: "-", EnvVars: env("results"), Usage: "JSON Lines of results, - for stdout"},
		&cli.BoolFlag{Name: "follow", EnvVars: env("follow"), Usage: "wait for more results (until SIGINT); without it, stop when caught up"},
	)
	return &cli.Command{
		Name:      "results",
		Usage:     "collect the fleet's result lines and proof files, as zkpipe prove writes them",
		UsageText: "zkpipe results --nats URL --out DIR [--results FILE] [--follow]",
		Flags:     flags,
		Action: func(c *cli.Context) error {
			q, err := openQueue(c, "results")
			if err != nil {
				return err
			}
			defer q.Conn.Close()
			out := io.Writer(os.Stdout)
			var f *os.File
			if p := c.String("results"); p != "-" {
				if f, err = os.Create(p); err != nil {
					return err
				}
				defer f.Close()
				out = f
			}
			sig := watchSignals(c.Context, logOut(c))
			defer sig.stop()
			w := stream.NewWriter(out)
			err = fleet.Collect(sig.intake, q, fleet.ResultsOptions{Out: c.String("out"), Follow: c.Bool("follow")}, w.Write)
			if err != nil && !(errors.Is(err, sig.intake.Err()) && sig.intake.Err() != nil) {
				return err
			}
			if f != nil {
				if err := f.Close(); err != nil {
					return fmt.Errorf("--results: %w", err)
				}
			}
			return nil
		},
	}
}
