package commands

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

func benchCommand() *cli.Command {
	flags := engineFlags(
		&cli.StringFlag{Name: "circuit", Usage: "gnark circuit directory made by zkpipe setup", Required: true, EnvVars: env("bench-circuit")},
		&cli.IntFlag{Name: "proofs", Aliases: []string{"n"}, Value: 8, Usage: "proofs in each run", EnvVars: env("bench-proofs")},
		&cli.BoolFlag{Name: "skip-gnark", Usage: "time zkpipe only", EnvVars: env("skip-gnark")},
		&cli.StringFlag{Name: "out", Usage: "directory for proofs (default: a fresh temporary one)", EnvVars: env("bench-out")},
		&cli.StringFlag{Name: "results", Usage: "also write zkpipe's result lines here (for zkpipe timeline)", EnvVars: env("bench-results")},
	)
	return &cli.Command{
		Name:   "bench",
		Usage:  "prove the same proofs with gnark's groth16.Prove one after another and with zkpipe's stream; compare proofs/s",
		Flags:  flags,
		Action: bench,
	}
}

func bench(c *cli.Context) error {
	n := c.Int("proofs")
	circ, err := gnarksrc.LoadDir(c.String("circuit"))
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
	var jobs strings.Builder
	witnesses := make([]string, n)
	for i := range n {
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
		fmt.Fprintf(&jobs, `{"id":"b%d","witness":%q}`+"\n", i, witnesses[i])
	}
	fmt.Printf("bench: %s, %d constraints, %d wires, %d proofs, %d CPUs\n", circ.Name, circ.Constraints, circ.NbWires, n, runtime.NumCPU())

	var gnarkRate float64
	if !c.Bool("skip-gnark") {
		var total time.Duration
		for i := range n {
			w, err := src.Witness(int64(i + 1))
			if err != nil {
				return err
			}
			runtime.GC()
			start := time.Now()
			proof, err := groth16.Prove(src.R1CS(), src.ProvingKey(), w)
			total += time.Since(start)
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
		gnarkRate = float64(n) / total.Seconds()
		fmt.Printf("gnark groth16.Prove: %d proofs in %s, %.3f proofs/s (%.0f ms/proof)\n", n, total.Round(time.Millisecond), gnarkRate, total.Seconds()*1000/float64(n))
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
	start := time.Now()
	err = runStream(c, engineOptions(c, out), []*stages.Circuit{circ}, strings.NewReader(jobs.String()), nil, func(r stream.Result) error {
		lines = append(lines, r)
		if resultsFile != nil {
			return resultsFile.Write(r)
		}
		return nil
	})
	wall := time.Since(start)
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
	fmt.Printf("zkpipe stream:       %d proofs in %s, %.3f proofs/s, all verified by gnark\n", n, wall.Round(time.Millisecond), rate)
	if gnarkRate > 0 {
		fmt.Printf("ratio zkpipe/gnark:  %.2f×\n", rate/gnarkRate)
	}
	printStageTable(lines)
	return nil
}

// printStageTable prints each stage's mean run and queue time over lines,
// and its median run time.
func printStageTable(lines []stream.Result) {
	type acc struct {
		run, queue []float64
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
			a.queue = append(a.queue, s.QueueMS)
		}
	}
	fmt.Printf("%-11s %10s %10s %10s\n", "stage", "run ms", "median", "queue ms")
	for _, name := range stages.Names {
		a := per[name]
		if a == nil {
			continue
		}
		fmt.Printf("%-11s %10.1f %10.1f %10.1f\n", name, mean(a.run), median(a.run), mean(a.queue))
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
