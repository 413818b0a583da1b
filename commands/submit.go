package commands

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/fleet"
)

func submitCommand() *cli.Command {
	flags := append(natsFlags(true), queueFlags()...)
	flags = append(flags,
		&cli.StringFlag{Name: "priority", Value: "normal", EnvVars: env("priority"),
			Usage: "high, normal or low: a worker takes every waiting job of one before any of the next"},
		&cli.StringFlag{Name: "default-circuit", EnvVars: env("default-circuit"),
			Usage: "name of the circuit of the jobs that name none (default: the store's only circuit)"},
		oldString("circuit", "default-circuit"), // ZKPIPE_CIRCUIT is prove's (a directory): not read here
	)
	return &cli.Command{
		Name:  "submit",
		Usage: "queue jobs (the JSON Lines of zkpipe prove) for the workers; witness files are uploaded",
		Description: "Each line is checked as prove checks it; its witness (or wtns) file goes to the object store. " +
			"A request of partitions is queued as one job per partition (ID/0, ID/1, …) that any worker may take, and answered by one result line. " +
			"An id already queued within the duplicate window, or already proven, is not queued again. " +
			"Prints one line per job not queued, and a summary, on stderr.",
		UsageText: "zkpipe submit --nats URL [--priority high|normal|low] JOBS|-",
		Flags:     flags,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return fmt.Errorf("give one job file, or - for stdin")
			}
			circuit, err := spelling(c, "default-circuit", "circuit")
			if err != nil {
				return err
			}
			in := io.Reader(os.Stdin)
			if p := c.Args().First(); p != "-" {
				f, err := os.Open(p)
				if err != nil {
					return err
				}
				defer f.Close()
				in = f
			}
			q, err := openQueue(c, "submit")
			if err != nil {
				return err
			}
			defer q.Conn.Close()
			log := logOut(c)
			var queued, dups, done int
			refused, err := fleet.Submit(c.Context, q, in, fleet.SubmitOptions{Priority: c.String("priority"), Circuit: c.String(circuit)},
				func(s fleet.Submitted) {
					switch {
					case s.Err != nil:
						fmt.Fprintf(log, "zkpipe: submit: %v\n", s.Err)
					case s.Duplicate:
						dups++
						fmt.Fprintf(log, "zkpipe: submit: line %d: job %s is already queued (duplicate window): not queued again\n", s.Line, s.ID)
					case s.Done:
						done++
						fmt.Fprintf(log, "zkpipe: submit: line %d: job %s is already proven (zkpipe results has it): not queued again\n", s.Line, s.ID)
					default:
						queued++
					}
				})
			fmt.Fprintf(log, "zkpipe: submit: %d queued at %s priority, %d already queued, %d already proven, %d refused\n",
				queued, c.String("priority"), dups, done, refused)
			if err != nil {
				return err
			}
			if refused > 0 {
				return fmt.Errorf("%d job line(s) refused", refused)
			}
			return nil
		},
	}
}
