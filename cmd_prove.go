package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/pipeline"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// proveRun is one zkpipe prove (or demo, or bench) being put together.
// Features such as the memory governor, tracing and circom join it through
// proveHooks rather than through this file.
type proveRun struct {
	cfg      stages.Config
	circuits []*stages.Circuit

	// onStart runs once the pipeline exists, just before the stream starts.
	onStart []func(p *pipeline.Pipeline[*stages.Job], t0 time.Time)
	// onResult runs for every job, in the order jobs finish, after its result
	// line is made and before it is written: hooks add fields or record spans.
	onResult []func(r pipeline.Result[*stages.Job], line *stream.Result)
}

// proveHook is a feature's part in zkpipe prove: its flags, and its setup,
// which runs after the built-in flags are read and before circuits load; the
// cleanup it returns runs when the stream is over.
type proveHook struct {
	flags []cli.Flag
	setup func(c *cli.Context, run *proveRun) (cleanup func(), err error)
}

var proveHooks []proveHook

// registerProveHook adds a feature's hook. Call it from a package-level
// variable's initialiser (var _ = registerProveHook(…)), not from init():
// the commands gather the hooks' flags in their own init(), which may run
// before another file's init().
func registerProveHook(h proveHook) bool {
	proveHooks = append(proveHooks, h)
	return true
}

// stageFlags are --NAME-workers and --NAME-queue for each stage.
func stageFlags() []cli.Flag {
	var fs []cli.Flag
	for _, name := range stages.Names {
		fs = append(fs,
			&cli.IntFlag{Name: name + "-workers", Value: 1, Usage: "workers of stage " + name, EnvVars: env(name + "-workers"), Category: "stages"},
			&cli.IntFlag{Name: name + "-queue", Value: 1, Usage: "queue depth in front of stage " + name, EnvVars: env(name + "-queue"), Category: "stages"},
		)
	}
	return fs
}

// computeFlags set the backends and the parallelism inside a stage.
func computeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "device", Value: "auto", Usage: "compute backend: auto, cpu or cuda", EnvVars: env("device"), Category: "compute"},
		&cli.StringFlag{Name: "bg2-device", Value: "cpu", Usage: "device of the B_G2 stage: cpu or cuda", EnvVars: env("bg2-device"), Category: "compute"},
		&cli.IntFlag{Name: "msm-tasks", Usage: "goroutines one CPU MSM or batch-addition may use (0: one per core)", EnvVars: env("msm-tasks"), Category: "compute"},
		&cli.IntFlag{Name: "fft-tasks", Usage: "goroutines one CPU NTT may use (0: one per core)", EnvVars: env("fft-tasks"), Category: "compute"},
	}
}

// engineFlags are a command's own flags followed by everything that shapes
// the engine: backends, stages and the hooks' flags (prove, demo, bench).
func engineFlags(own ...cli.Flag) []cli.Flag {
	fs := append(own, computeFlags()...)
	fs = append(fs, stageFlags()...)
	for _, h := range proveHooks {
		fs = append(fs, h.flags...)
	}
	return fs
}

func proveFlags() []cli.Flag {
	return engineFlags(
		&cli.StringSliceFlag{Name: "circuit", Usage: "gnark circuit directory (repeatable); the circuit is named after the directory", EnvVars: env("circuit")},
		&cli.StringFlag{Name: "jobs", Value: "-", Usage: "JSON Lines of jobs, - for stdin (read as lines arrive)", EnvVars: env("jobs")},
		&cli.StringFlag{Name: "out", Value: "out", Usage: "directory for proofs", EnvVars: env("out")},
		&cli.StringFlag{Name: "results", Value: "-", Usage: "JSON Lines of results, - for stdout", EnvVars: env("results")},
	)
}

func init() {
	commands = append(commands, &cli.Command{
		Name:      "prove",
		Usage:     "prove a stream of jobs (JSON Lines) through the staged pipeline",
		UsageText: "zkpipe prove --circuit DIR [--circuit DIR…] --jobs FILE|- --out DIR [--results FILE]",
		Flags:     proveFlags(),
		Action: func(c *cli.Context) error {
			in := io.Reader(os.Stdin)
			if p := c.String("jobs"); p != "-" {
				f, err := os.Open(p)
				if err != nil {
					return err
				}
				defer f.Close()
				in = f
			}
			out := io.Writer(os.Stdout)
			if p := c.String("results"); p != "-" {
				f, err := os.Create(p)
				if err != nil {
					return err
				}
				defer f.Close()
				out = f
			}
			failed := 0
			results := stream.NewWriter(out)
			err := prove(c, in, func(line stream.Result) error {
				if line.Error != "" {
					failed++
				}
				return results.Write(line)
			})
			if err != nil {
				return err
			}
			if failed > 0 {
				fmt.Fprintf(os.Stderr, "zkpipe: %d job(s) failed; see their result lines\n", failed)
			}
			return nil
		},
	})
}

// prove runs the stream read from in over the --circuit directories and
// hands each result line to emit.
func prove(c *cli.Context, in io.Reader, emit func(stream.Result) error) error {
	var circs []*stages.Circuit
	for _, dir := range c.StringSlice("circuit") {
		circ, err := gnarksrc.LoadDir(dir)
		if err != nil {
			return err
		}
		circs = append(circs, circ)
	}
	return proveWith(c, circs, c.String("out"), in, emit)
}

// proveWith runs the stream read from in over circuits (hooks may add more)
// into outDir. The first SIGINT or SIGTERM stops reading jobs and lets those
// in flight finish; a second cancels them.
func proveWith(c *cli.Context, circuits []*stages.Circuit, outDir string, in io.Reader, emit func(stream.Result) error) error {
	run, cleanup, err := newProveRun(c)
	if err != nil {
		return err
	}
	defer cleanup()
	run.circuits = append(circuits, run.circuits...)
	if len(run.circuits) == 0 {
		return fmt.Errorf("no circuit: give --circuit DIR (or --zkey FILE for circom)")
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	run.cfg.Out = stages.Dir(outDir)
	return run.stream(c.Context, in, emit)
}

// newProveRun reads the backend and stage flags and runs the hooks' setup.
func newProveRun(c *cli.Context) (*proveRun, func(), error) {
	run := &proveRun{cfg: stages.Config{Shapes: map[string]stages.Shape{}}}
	for _, name := range stages.Names {
		run.cfg.Shapes[name] = stages.Shape{Workers: c.Int(name + "-workers"), Queue: c.Int(name + "-queue")}
	}
	var err error
	run.cfg.Backend, run.cfg.G2, err = backends(c)
	if err != nil {
		return nil, nil, err
	}
	var cleanups []func()
	cleanup := func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	for _, h := range proveHooks {
		if h.setup == nil {
			continue
		}
		done, err := h.setup(c, run)
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		if done != nil {
			cleanups = append(cleanups, done)
		}
	}
	return run, cleanup, nil
}

// cudaBackend, when set (gpu_cuda.go), opens the CUDA backend.
var cudaBackend func(c *cli.Context) (stages.Backend, stages.G2Backend, error)

// backends resolves --device and --bg2-device.
func backends(c *cli.Context) (stages.Backend, stages.G2Backend, error) {
	cpu := gpu.NewCPU(c.Int("msm-tasks"), c.Int("fft-tasks"))
	var dev stages.Backend = cpu
	var g2 stages.G2Backend = cpu
	var cudaG2 stages.G2Backend
	switch d := c.String("device"); d {
	case "cpu":
	case "auto", "cuda":
		if cudaBackend == nil {
			if d == "cuda" {
				return nil, nil, fmt.Errorf("--device cuda: this zkpipe has no CUDA backend")
			}
			break
		}
		b, b2, err := cudaBackend(c)
		if err != nil {
			if d == "cuda" {
				return nil, nil, fmt.Errorf("--device cuda: %w", err)
			}
			fmt.Fprintf(os.Stderr, "zkpipe: no CUDA device (%v); proving on the CPU\n", err)
			break
		}
		dev, cudaG2 = b, b2
	default:
		return nil, nil, fmt.Errorf("--device %q: want auto, cpu or cuda", d)
	}
	switch d := c.String("bg2-device"); d {
	case "cpu":
	case "cuda":
		if cudaG2 == nil {
			return nil, nil, fmt.Errorf("--bg2-device cuda needs the CUDA backend with G2 support (--device cuda)")
		}
		g2 = cudaG2
	default:
		return nil, nil, fmt.Errorf("--bg2-device %q: want cpu or cuda", d)
	}
	return dev, g2, nil
}

// stream runs the engine over the jobs read from in.
func (run *proveRun) stream(parent context.Context, in io.Reader, emit func(stream.Result) error) error {
	eng, err := stages.NewEngine(run.cfg, run.circuits...)
	if err != nil {
		return err
	}
	// hard: cancels the jobs in flight; intake: stops reading new ones.
	hard, cancelHard := context.WithCancel(parent)
	defer cancelHard()
	intake, stopIntake := context.WithCancel(hard)
	defer stopIntake()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case <-sigs:
			fmt.Fprintln(os.Stderr, "zkpipe: stopping intake; finishing jobs in flight (again to abort)")
			stopIntake()
		case <-hard.Done():
			return
		}
		select {
		case <-sigs:
			cancelHard()
		case <-hard.Done():
		}
	}()

	lines := make(chan stream.Line)
	readErr := make(chan error, 1)
	go func() { readErr <- stream.Read(intake, in, lines) }()
	jobs := make(chan *stages.Job)
	go func() {
		defer close(jobs)
		for {
			var l stream.Line
			var ok bool
			// A read blocked on an open pipe cannot be interrupted: stop
			// forwarding on intake's end instead, and let it go.
			select {
			case l, ok = <-lines:
				if !ok {
					return
				}
			case <-intake.Done():
				return
			}
			select {
			case jobs <- &stages.Job{Request: l.Request, Line: l.Number, Err: l.Err}:
			case <-intake.Done():
				return
			}
		}
	}()

	p := eng.Pipeline()
	t0 := time.Now()
	for _, f := range run.onStart {
		f(p, t0)
	}
	var emitErr error
	err = eng.Run(hard, p, jobs, func(r pipeline.Result[*stages.Job]) {
		line := stages.ResultLine(r, t0)
		for _, f := range run.onResult {
			f(r, &line)
		}
		if err := emit(line); err != nil && emitErr == nil {
			emitErr = fmt.Errorf("write result of %s: %w", line.ID, err)
			cancelHard()
		}
	})
	if emitErr != nil {
		return emitErr
	}
	if err != nil {
		return err
	}
	if intake.Err() != nil {
		return nil // stopped by a signal; the reader may still be blocked
	}
	if err := <-readErr; err != nil {
		return fmt.Errorf("read jobs: %w", err)
	}
	return nil
}
