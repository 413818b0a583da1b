package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/source/circomsrc"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

func proveCommand() *cli.Command {
	return &cli.Command{
		Name:      "prove",
		Usage:     "prove a stream of jobs (JSON Lines) through the staged pipeline",
		UsageText: "zkpipe prove --circuit DIR [--circuit DIR…] --jobs FILE|- --out DIR [--results FILE]",
		Flags:     proveFlags(),
		Action:    prove,
	}
}

func proveFlags() []cli.Flag {
	return engineFlags(
		&cli.StringSliceFlag{Name: "circuit", Usage: "gnark circuit directory (repeatable); the circuit is named after the directory", EnvVars: env("circuit")},
		&cli.StringFlag{Name: "jobs", Value: "-", Usage: "JSON Lines of jobs, - for stdin (read as lines arrive)", EnvVars: env("jobs")},
		&cli.StringFlag{Name: "out", Value: "out", Usage: "directory for proofs (locked while zkpipe runs)", EnvVars: env("out")},
		&cli.StringFlag{Name: "results", Value: "-", Usage: "JSON Lines of results, - for stdout (opened once the circuits are loaded)", EnvVars: env("results")},
		metricsFlag(),
		calldataFlag(""),
		&cli.BoolFlag{Name: "skip-done", Usage: "answer a job whose proof is already in --out, verifies, and has the public inputs of the job's own witness (or seed) from those files (its result line says \"resumed\") instead of proving it again; " +
			"circom input jobs are always proven again (their public inputs are known only once the wasm computes the witness)", EnvVars: env("skip-done")},
		&cli.IntFlag{Name: "max-partitions", Value: stream.DefaultMaxPartitions, Usage: "the most partitions a request of partitions (a job line with \"partitions\") may have; a request of more is refused", EnvVars: env("max-partitions")},
		&cli.StringSliceFlag{Name: "zkey", Usage: "circom circuit: snarkjs Groth16 proving key (repeatable); the circuit is named after the file, less .zkey", EnvVars: env("zkey"), Category: "circom"},
		&cli.StringSliceFlag{Name: "wasm", Usage: "circom witness calculator (circuit_js/circuit.wasm) of the --zkey in the same position, for input jobs", EnvVars: env("wasm"), Category: "circom"},
		&cli.StringSliceFlag{Name: "r1cs", Usage: "circom constraint system of the --zkey in the same position: unsatisfied witnesses fail in synthesize", EnvVars: env("r1cs"), Category: "circom"},
	)
}

// prove runs the stream of --jobs over the --circuit directories and --zkey
// files. The first SIGINT or SIGTERM stops reading jobs and lets those in
// flight finish (exit code ExitDrained when jobs were left unread); a second
// cancels them.
func prove(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageErrorf(c, "takes no positional arguments, got %q (jobs come from --jobs; for snarkjs's or rapidsnark's order: zkpipe groth16 prove ZKEY WTNS PROOF.json PUBLIC.json)", c.Args().Slice())
	}
	in := io.Reader(os.Stdin)
	if p := c.String("jobs"); p != "-" {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	// a user who typed zkpipe prove without --jobs sees why nothing happens
	tty, onTerminal := in.(*os.File)
	onTerminal = onTerminal && isatty.IsTerminal(tty.Fd())
	opts, err := engineOptions(c, proofsOut(c))
	if err != nil {
		return err
	}
	opts.MaxPartitions = c.Int("max-partitions")
	if opts.MaxPartitions < 1 || opts.MaxPartitions > engine.MaxPartitionsLimit {
		return usageErrorf(c, "--max-partitions %d: want 1 to %d", opts.MaxPartitions, engine.MaxPartitionsLimit)
	}
	if err := runPlan(c, opts.Out).Check(); err != nil {
		return err
	}
	if p := c.String("results"); p != "-" {
		opts.Writes = []engine.Output{{Flag: "--results", Path: p}}
	}
	circuits, err := loadCircuits(c)
	if err != nil {
		return err
	}
	if len(circuits) == 0 {
		return fmt.Errorf("no circuit: give --circuit DIR (or --zkey FILE for circom)")
	}
	opts.SkipDone = c.Bool("skip-done")
	var results *stream.Writer
	var resultsFile *os.File
	defer func() {
		if resultsFile != nil {
			resultsFile.Close()
		}
	}()
	failed, total := 0, 0
	err = runStream(c, opts, circuits, in, func() error {
		// Opened only now: a run that fails to start leaves an earlier
		// results file as it was.
		out := io.Writer(os.Stdout)
		if p := c.String("results"); p != "-" {
			if resultsFile, err = os.Create(p); err != nil {
				return err
			}
			out = resultsFile
		}
		results = stream.NewWriter(out)
		if onTerminal {
			fmt.Fprintln(logOut(c), "zkpipe: waiting for jobs on the terminal, one JSON line each (Ctrl-D to end); --jobs FILE reads them from a file")
		}
		return nil
	}, func(line stream.Result) error {
		total++
		if line.Error != "" {
			failed++
		}
		return results.Write(line)
	})
	var drained *engine.Drained
	if errors.As(err, &drained) {
		err = &DrainedError{Drained: drained, Failed: failed, Total: total}
	}
	if resultsFile != nil {
		f := resultsFile
		resultsFile = nil
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("--results: %w", cerr)
		}
	}
	if err != nil {
		return err
	}
	if failed > 0 {
		return &JobsFailedError{Failed: failed, Total: total}
	}
	return nil
}

// runStream opens the engine over circuits, calls started once it is ready,
// and streams the jobs read from in through it into emit, their errors
// naming flags (flagNamedResult). Signals: the first stops reading jobs, the
// second cancels those in flight (and ends the process 2 s later if the
// stream has not returned by then).
func runStream(c *cli.Context, opts engine.Options, circuits []*stages.Circuit, in io.Reader,
	started func() error, emit func(stream.Result) error) error {
	sig := watchSignals(c.Context, logOut(c))
	defer sig.stop()
	eng, err := engine.New(sig.hard, opts, circuits...)
	if err != nil {
		return err
	}
	defer eng.Close()
	observe, stopMetrics, err := serveMetrics(c, eng)
	if err != nil {
		return err
	}
	defer stopMetrics()
	write := emit
	emit = func(r stream.Result) error { observe(r); return write(flagNamedResult(r)) }
	if started != nil {
		if err := started(); err != nil {
			return err
		}
	}
	err = eng.Stream(sig.hard, sig.intake, in, emit)
	if sig.aborted() {
		return errInterrupted
	}
	if err != nil {
		if errors.Is(err, engine.ErrOutput) {
			return fmt.Errorf("stopped taking jobs: %w (the jobs in flight have their result lines)", err)
		}
		return err
	}
	return nil
}

// loadCircuits loads every --circuit directory and --zkey (with its --wasm
// and --r1cs, paired by position).
func loadCircuits(c *cli.Context) (circs []*stages.Circuit, err error) {
	return loadCircuitFiles(c, c.StringSlice("circuit"), c.StringSlice("zkey"), c.StringSlice("wasm"), c.StringSlice("r1cs"))
}

// loadCircuitFiles is loadCircuits over the lists given (bench --jobs has
// its own flags for them).
func loadCircuitFiles(c *cli.Context, dirs, zkeys, wasms, r1css []string) (circs []*stages.Circuit, err error) {
	defer func() {
		if err != nil {
			closeCircuits(circs)
		}
	}()
	for _, dir := range dirs {
		o := gnarkOptions(c)
		o.Calldata = c.Bool("calldata")
		circ, err := gnarksrc.LoadDirWith(dir, o)
		if err != nil {
			return circs, err
		}
		circs = append(circs, circ)
	}
	if len(wasms) > len(zkeys) {
		return circs, fmt.Errorf("%d --wasm for %d --zkey: give each --wasm after its --zkey", len(wasms), len(zkeys))
	}
	if len(r1css) > len(zkeys) {
		return circs, fmt.Errorf("%d --r1cs for %d --zkey: give each --r1cs after its --zkey", len(r1css), len(zkeys))
	}
	limits, err := circomLimits(c)
	if err != nil {
		return circs, err
	}
	for i, zk := range zkeys {
		files := circomsrc.Files{Zkey: zk, ReadTimeout: c.Duration("read-timeout"), WasmLimits: limits}
		if i < len(wasms) {
			files.Wasm = wasms[i]
		}
		if i < len(r1css) {
			files.R1CS = r1css[i]
		}
		circ, err := circomsrc.LoadFiles(c.Context, files)
		if err != nil {
			return circs, err
		}
		circs = append(circs, circ)
	}
	return circs, nil
}

// closeCircuits releases circuits no engine took.
func closeCircuits(circs []*stages.Circuit) {
	for _, c := range circs {
		c.Source.Close(context.Background())
	}
}

// calldataFlag is --calldata, of prove and of the fleet's workers (in
// category, "" for none): each gnark proof's Solidity calldata beside it.
func calldataFlag(category string) cli.Flag {
	return &cli.BoolFlag{Name: "calldata", Category: category, EnvVars: env("calldata"),
		Usage: "write beside each gnark proof ID.calldata: its call of the circuit's Solidity verifier (zkpipe export solidity), in hex; the result line names it (a worker stores it with the proof, and zkpipe results fetches it)"}
}
