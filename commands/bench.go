package commands

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

func benchCommand() *cli.Command {
	flags := engineFlags(
		&cli.StringFlag{Name: "circuit", Usage: "gnark circuit directory made by zkpipe setup", Required: true, EnvVars: env("bench-circuit")},
		&cli.IntFlag{Name: "proofs", Aliases: []string{"n"}, Value: 8, Usage: fmt.Sprintf("proofs in each run (1 to %d; the first %d witnesses are reused in turn)", maxBenchProofs, benchWitnesses), EnvVars: env("bench-proofs")},
		&cli.BoolFlag{Name: "skip-gnark", Usage: "time zkpipe only", EnvVars: env("skip-gnark")},
		&cli.StringFlag{Name: "out", Usage: "directory for proofs (default: a fresh temporary one)", EnvVars: env("bench-out")},
		&cli.StringFlag{Name: "results", Usage: "also write zkpipe's result lines here (for zkpipe timeline)", EnvVars: env("bench-results")},
		&cli.StringFlag{Name: "cpuprofile", Usage: "write CPU profiles (pprof) of gnark's proofs to FILE.gnark and of zkpipe's stream to FILE.zkpipe", EnvVars: env("bench-cpuprofile")},
		&cli.IntFlag{Name: "serial-cpu", Usage: "then prove this many of the same witnesses one at a time and print each stage's CPU ms per proof", EnvVars: env("bench-serial-cpu")},
	)
	return &cli.Command{
		Name:   "bench",
		Usage:  "prove the same proofs with gnark's groth16.Prove one after another and with zkpipe's stream; compare proofs/s",
		Flags:  flags,
		Action: bench,
	}
}

// Bounds of a bench: maxBenchProofs is far past a useful measurement
// (each proof's result line is kept for the stage table, about 2 KiB), and
// benchWitnesses distinct witnesses are made and reused in turn, so the
// witnesses on disk do not grow with -n.
const (
	maxBenchProofs = 100_000
	benchWitnesses = 64
)

func bench(c *cli.Context) error {
	n := c.Int("proofs")
	if n < 1 || n > maxBenchProofs {
		return fmt.Errorf("--proofs (-n) %d: want 1 to %d", n, maxBenchProofs)
	}
	if k := c.Int("serial-cpu"); k < 0 || k > maxBenchProofs {
		return fmt.Errorf("--serial-cpu %d: want 0 (none) to %d", k, maxBenchProofs)
	}
	var in engine.Files
	for _, f := range []string{gnarksrc.R1CSFile, gnarksrc.PKFile, gnarksrc.VKFile, gnarksrc.MetaFile} {
		p := filepath.Join(c.String("circuit"), f)
		in.Add("the --circuit file "+p, p)
	}
	if err := checkOutputs(&in, c.String("out"), "--results", c.String("results")); err != nil {
		return err
	}
	if p := c.String("cpuprofile"); p != "" {
		for _, s := range []string{".gnark", ".zkpipe"} {
			if err := checkOutputs(&in, c.String("out"), "--cpuprofile", p+s); err != nil {
				return err
			}
		}
	}
	circ, err := gnarksrc.LoadDirWith(c.String("circuit"), gnarkOptions(c))
	if err != nil {
		return err
	}
	src := circ.Source.(*gnarksrc.Source)
	out := c.String("out")
	if out == "" {
		if out, err = os.MkdirTemp("", "zkpipe-bench-"); err != nil {
			return err
		}
		defer os.RemoveAll(out)
	}
	// The same witnesses for both, made beforehand and kept out of the timing;
	// zkpipe reads them from files, as a user's stream would.
	wdir := filepath.Join(out, "witnesses")
	if err := os.MkdirAll(wdir, 0o755); err != nil {
		return err
	}
	witnesses := make([]string, min(n, benchWitnesses))
	for i := range witnesses {
		w, err := src.Witness(int64(i + 1))
		if err != nil {
			return err
		}
		b, err := w.MarshalBinary()
		if err != nil {
			return err
		}
		witnesses[i] = filepath.Join(wdir, fmt.Sprintf("w%d", i))
		if err := os.WriteFile(witnesses[i], b, 0o644); err != nil {
			return err
		}
	}
	var jobs strings.Builder
	for i := range n {
		fmt.Fprintf(&jobs, `{"id":"b%d","witness":%q}`+"\n", i, witnesses[i%len(witnesses)])
	}
	fmt.Printf("bench: %s, %d constraints, %d wires, %d proofs, %d CPUs\n", circ.Name, circ.Constraints, circ.NbWires, n, runtime.NumCPU())

	var gnarkRate float64
	if !c.Bool("skip-gnark") {
		stop, err := startProfile(c.String("cpuprofile"), "gnark")
		if err != nil {
			return err
		}
		var total, cpu time.Duration
		for i := range n {
			w, err := src.Witness(int64(i%len(witnesses) + 1))
			if err != nil {
				return err
			}
			runtime.GC()
			start, cpu0 := time.Now(), stages.ProcessCPU()
			proof, err := groth16.Prove(src.R1CS(), src.ProvingKey(), w)
			total += time.Since(start)
			cpu += stages.ProcessCPU() - cpu0
			if err != nil {
				return fmt.Errorf("gnark prove: %w", err)
			}
			if i == 0 {
				pub, _ := w.Public()
				if err := groth16.Verify(proof, src.VerifyingKey(), pub); err != nil {
					return fmt.Errorf("gnark's own proof does not verify: %w", err)
				}
			}
		}
		stop()
		gnarkRate = float64(n) / total.Seconds()
		fmt.Printf("gnark groth16.Prove: %d proofs in %s, %.3f proofs/s (%.0f ms/proof, %.0f CPU ms/proof, %.1f cores busy)\n", n, total.Round(time.Millisecond), gnarkRate,
			total.Seconds()*1000/float64(n), cpu.Seconds()*1000/float64(n), cpu.Seconds()/total.Seconds())
	}

	runtime.GC()
	var lines []stream.Result
	var resultsFile *stream.Writer
	if p := c.String("results"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		defer f.Close()
		resultsFile = stream.NewWriter(f)
	}
	// Timed from the engine being open (keys resident) to the last result.
	var start time.Time
	var cpu0 time.Duration
	started := func() error { start, cpu0 = time.Now(), stages.ProcessCPU(); return nil }
	opts, err := engineOptions(c, out)
	if err != nil {
		return err
	}
	stop, err := startProfile(c.String("cpuprofile"), "zkpipe")
	if err != nil {
		return err
	}
	err = runStream(c, opts, []*stages.Circuit{circ}, strings.NewReader(jobs.String()), started, func(r stream.Result) error {
		lines = append(lines, r)
		if resultsFile != nil {
			return resultsFile.Write(r)
		}
		return nil
	})
	wall, cpu := time.Since(start), stages.ProcessCPU()-cpu0
	stop()
	if err != nil {
		return err
	}
	for _, r := range lines {
		if r.Error != "" {
			return fmt.Errorf("zkpipe job %s failed: %s", r.ID, r.Error)
		}
		if err := gnarksrc.VerifyFiles(src.VerifyingKey(), r.Proof, r.Public); err != nil {
			return fmt.Errorf("zkpipe proof %s rejected by gnark: %w", r.ID, err)
		}
	}
	rate := float64(n) / wall.Seconds()
	fmt.Printf("zkpipe stream:       %d proofs in %s, %.3f proofs/s (%.0f CPU ms/proof, %.1f cores busy), all verified by gnark\n", n, wall.Round(time.Millisecond), rate,
		cpu.Seconds()*1000/float64(n), cpu.Seconds()/wall.Seconds())
	if gnarkRate > 0 {
		fmt.Printf("ratio zkpipe/gnark:  %.2f×\n", rate/gnarkRate)
	}
	printStageTable(lines)
	printShape(lines)
	if k := c.Int("serial-cpu"); k > 0 {
		return serialCPU(c, circ, out, witnesses[:min(k, len(witnesses))])
	}
	return nil
}

// serialCPU proves the witnesses one at a time, each job alone in the
// process, so each stage's cpu_ms is its own CPU time, and prints the mean
// per stage: where a proof's core-seconds go.
func serialCPU(c *cli.Context, circ *stages.Circuit, out string, witnesses []string) error {
	opts, err := engineOptions(c, filepath.Join(out, "serial"))
	if err != nil {
		return err
	}
	eng, err := engine.New(c.Context, opts, circ)
	if err != nil {
		return err
	}
	defer eng.Close()
	jobs := make(chan stream.Line)
	results := make(chan stream.Result, 1)
	runErr := make(chan error, 1)
	go func() {
		runErr <- eng.Run(c.Context, jobs, func(r stream.Result) error { results <- r; return nil })
	}()
	var lines []stream.Result
	for i, w := range witnesses {
		jobs <- stream.Line{Number: i + 1, Request: stream.Request{ID: fmt.Sprintf("s%d", i), Witness: w}}
		r := <-results
		if r.Error != "" {
			close(jobs)
			return fmt.Errorf("zkpipe job %s failed: %s", r.ID, r.Error)
		}
		lines = append(lines, r)
	}
	close(jobs)
	if err := <-runErr; err != nil {
		return err
	}
	fmt.Printf("one proof at a time, %d proofs: CPU ms per proof by stage (process CPU while the stage ran alone)\n", len(lines))
	fmt.Printf("%-11s %10s %10s %8s\n", "stage", "run ms", "cpu ms", "cores")
	var run, cpu float64
	for _, name := range stages.Names {
		var r, cp []float64
		for _, l := range lines {
			for _, s := range l.Stages {
				if s.Stage == name {
					r, cp = append(r, s.RunMS), append(cp, s.CPUMS)
				}
			}
		}
		cores := 0.0
		if mean(r) > 0 {
			cores = mean(cp) / mean(r)
		}
		fmt.Printf("%-11s %10.1f %10.1f %8.2f\n", name, mean(r), mean(cp), cores)
		run, cpu = run+mean(r), cpu+mean(cp)
	}
	fmt.Printf("%-11s %10.1f %10.1f %8.2f\n", "total", run, cpu, cpu/max(run, 1e-9))
	return nil
}

// printStageTable prints each stage's mean run and queue time over lines,
// its median run time, and its mean CPU time (shared with overlapping
// stages: see stream.StageTime.CPUMS).
func printStageTable(lines []stream.Result) {
	type acc struct {
		run, queue, cpu []float64
	}
	per := map[string]*acc{}
	for _, r := range lines {
		for _, s := range r.Stages {
			a := per[s.Stage]
			if a == nil {
				a = &acc{}
				per[s.Stage] = a
			}
			a.run = append(a.run, s.RunMS)
			a.cpu = append(a.cpu, s.CPUMS)
			a.queue = append(a.queue, s.QueueMS)
		}
	}
	fmt.Printf("%-11s %10s %10s %10s %10s\n", "stage", "run ms", "median", "queue ms", "cpu ms")
	for _, name := range stages.Names {
		a := per[name]
		if a == nil {
			continue
		}
		fmt.Printf("%-11s %10.1f %10.1f %10.1f %10.1f\n", name, mean(a.run), median(a.run), mean(a.queue), mean(a.cpu))
	}
}

// printShape says the shape the stream started with and, when the shape
// controller changed it (--adapt-shape), the one it ended with.
func printShape(lines []stream.Result) {
	var first, last string
	changes := 0
	for _, l := range lines {
		if l.Shape != "" {
			if first == "" {
				first = l.Shape
			}
			last = l.Shape
		}
		changes += len(l.ShapeChanges)
	}
	fmt.Printf("shape at start: %s\n", first)
	if changes > 0 {
		fmt.Printf("shape at end:   %s (%d changes; * where zkpipe chose)\n", last, changes)
	}
}

func mean(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	y := append([]float64(nil), x...)
	sort.Float64s(y)
	return y[len(y)/2]
}

// startProfile starts a CPU profile into base.suffix (none when base is
// empty) and returns what stops it.
func startProfile(base, suffix string) (stop func(), err error) {
	if base == "" {
		return func() {}, nil
	}
	f, err := os.Create(base + "." + suffix)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
