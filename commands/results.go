package commands

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/ioplan"
	"github.com/zkpipe/zkpipe/stream"
)

func resultsCommand() *cli.Command {
	flags := append(natsFlags(true), queueFlags()...)
	flags = append(flags,
		&cli.StringFlag{Name: "out", Value: "out", EnvVars: env("out"), Usage: "directory for proofs: ID.proof, ID.public (and ID.proof.json), written atomically"},
		&cli.StringFlag{Name: "results", Value: "-", EnvVars: env("results"), Usage: "JSON Lines of results, - for stdout"},
		&cli.BoolFlag{Name: "follow", EnvVars: env("follow"), Usage: "wait for more results (until SIGINT); without it, stop when caught up"},
		&cli.StringFlag{Name: "circuit", EnvVars: env("results-circuit"),
			Usage: "gnark circuit directory: check every proof against its circuit.vk, your own copy, rather than the circuit store's key (which anyone with access to the queue can replace)"},
		&cli.StringFlag{Name: "vkey", EnvVars: env("results-vkey"),
			Usage: "snarkjs verification_key.json: check every proof (circom) against it rather than the circuit store's key"},
		&cli.StringFlag{Name: "jobs", EnvVars: env("results-jobs"),
			Usage: "JSON Lines of jobs: the file given to zkpipe submit; a proof of one of its witness or wtns jobs must also have that witness's public inputs, or its line fails (generate and input jobs say \"not bound\")"},
	)
	return &cli.Command{
		Name:      "results",
		Usage:     "collect the fleet's result lines and proof files, as zkpipe prove writes them",
		UsageText: "zkpipe results --nats URL --out DIR [--results FILE] [--follow] [--circuit DIR | --vkey FILE] [--jobs FILE]",
		Description: "Each proof is checked against a verifying key before its files are written and its line says proved " +
			"(verified_with names the key): --circuit or --vkey if given, else the circuit store's key of the circuit the line names. " +
			"With --jobs, a proof of a witness or wtns job of that file must also be of the public inputs submitted (statement: bound). " +
			"A job whose stored proof is missing, unreadable, rejected or of other public inputs gets a failed line naming it and why; the lines after it go on.",
		Flags: flags,
		Action: func(c *cli.Context) error {
			// no output may be an input: --results naming --jobs would
			// truncate it before it is read
			var in ioplan.Plan
			if p := c.String("jobs"); p != "" {
				in.Read("--jobs "+p, p)
			}
			if d := c.String("circuit"); d != "" {
				readCircuitDir(&in, d)
			}
			if p := c.String("vkey"); p != "" {
				in.Read("--vkey "+p, p)
			}
			writeOut(&in, proofsOut(c))
			in.Write("--results", c.String("results"))
			if err := in.Check(); err != nil {
				return err
			}
			// the user's own key first: a file that cannot be read must
			// fail before anything is collected
			local, err := fleet.LocalVerifier(c.Context, c.String("circuit"), c.String("vkey"))
			if err != nil {
				return err
			}
			var statements *fleet.Statements
			if p := c.String("jobs"); p != "" {
				if statements, err = fleet.ReadStatements(c.Context, p); err != nil {
					return err
				}
			}
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
			// failed lines make exit code 2, as zkpipe prove's do
			var total, failed int
			emit := func(r stream.Result) error {
				total++
				if r.Error != "" {
					failed++
				}
				return w.Write(flagNamedResult(r))
			}
			// A job or request answered twice (a redelivery after a
			// server's or worker's death) is taken once: the later line
			// of an id is dropped, and counted.
			var dups, others int
			dup := func(first, again stream.Result) {
				if fleet.SameStatement(first, again) {
					dups++
					return
				}
				others++
				fmt.Fprintf(logOut(c), "zkpipe: results: job %s answered again with another statement (public inputs %v, first %v): the first answer stands\n",
					again.ID, again.PublicInputs, first.PublicInputs)
			}
			err = fleet.Collect(sig.intake, q, fleet.ResultsOptions{Out: c.String("out"), Follow: c.Bool("follow"), Verifier: local, Statements: statements,
				Duplicate: dup}, emit)
			if dups+others > 0 {
				fmt.Fprintf(logOut(c), "zkpipe: results: %d lines; %d duplicate answers dropped (an id answered again with the same statement), %d with another\n",
					total, dups, others)
			}
			if err != nil && !(errors.Is(err, sig.intake.Err()) && sig.intake.Err() != nil) {
				return err
			}
			if f != nil {
				if err := f.Close(); err != nil {
					return fmt.Errorf("--results: %w", err)
				}
			}
			if failed > 0 {
				return &JobsFailedError{Failed: failed, Total: total}
			}
			return nil
		},
	}
}
