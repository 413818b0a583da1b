package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"sort"
	"time"

	"github.com/zkpipe/zkpipe/engine"

	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// StageTable prints each stage's mean run and queue time over lines,
// its median run time, and its mean CPU time (shared with overlapping
// stages: see stream.StageTime.CPUMS).
func StageTable(w io.Writer, lines []stream.Result) {
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
	fmt.Fprintf(w, "%-11s %10s %10s %10s %10s\n", "stage", "run ms", "median", "queue ms", "cpu ms")
	for _, name := range stages.Names {
		a := per[name]
		if a == nil {
			continue
		}
		fmt.Fprintf(w, "%-11s %10.1f %10.1f %10.1f %10.1f\n", name, Mean(a.run), median(a.run), Mean(a.queue), Mean(a.cpu))
	}
}

// Shape says the shape the stream started with and, when the shape
// controller changed it (--adapt-shape), the one it ended with.
func Shape(w io.Writer, lines []stream.Result) {
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
	fmt.Fprintf(w, "shape at start: %s\n", first)
	if changes > 0 {
		fmt.Fprintf(w, "shape at end:   %s (%d changes; * where zkpipe chose)\n", last, changes)
	}
}

// Mean is the mean of x, 0 when empty.
func Mean(x []float64) float64 {
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

// StartProfile starts a CPU profile into base.suffix (none when base is
// empty) and returns what stops it.
func StartProfile(base, suffix string) (stop func(), err error) {
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

// SerialCPU proves the witnesses one at a time, each job alone in the
// process, so each stage's cpu_ms is its own CPU time, and prints the mean
// per stage: where a proof's core-seconds go.
func SerialCPU(ctx context.Context, opts engine.Options, circ *stages.Circuit, witnesses []string, w io.Writer) error {
	eng, err := engine.New(ctx, opts, circ)
	if err != nil {
		return err
	}
	defer eng.Close()
	jobs := make(chan stream.Line)
	results := make(chan stream.Result, 1)
	runErr := make(chan error, 1)
	go func() {
		runErr <- eng.Run(ctx, jobs, func(r stream.Result) error { results <- r; return nil })
	}()
	var lines []stream.Result
	for i, wit := range witnesses {
		jobs <- stream.Line{Number: i + 1, Request: stream.Request{ID: fmt.Sprintf("s%d", i), Witness: wit}}
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
	fmt.Fprintf(w, "one proof at a time, %d proofs: CPU ms per proof by stage (process CPU while the stage ran alone)\n", len(lines))
	fmt.Fprintf(w, "%-11s %10s %10s %8s\n", "stage", "run ms", "cpu ms", "cores")
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
		if Mean(r) > 0 {
			cores = Mean(cp) / Mean(r)
		}
		fmt.Fprintf(w, "%-11s %10.1f %10.1f %8.2f\n", name, Mean(r), Mean(cp), cores)
		run, cpu = run+Mean(r), cpu+Mean(cp)
	}
	fmt.Fprintf(w, "%-11s %10.1f %10.1f %8.2f\n", "total", run, cpu, cpu/max(run, 1e-9))
	return nil
}

// ByCircuit groups lines by their circuit, names in order of first result.
func ByCircuit(lines []stream.Result) (names []string, of map[string][]stream.Result) {
	of = map[string][]stream.Result{}
	for _, r := range lines {
		if _, ok := of[r.Circuit]; !ok {
			names = append(names, r.Circuit)
		}
		of[r.Circuit] = append(of[r.Circuit], r)
	}
	return names, of
}

// CircuitTable prints, for each circuit of a stream that took wall, its
// proofs, its share of the stream's throughput (its proofs over the whole
// wall time: the circuits' figures add up to the stream's), and its jobs'
// mean and median latency (total_ms: from entering parse to leaving
// assemble, queues included); with gnark's timings of the same jobs
// (GnarkStream; nil for none), gnark's ms per proof, one at a time.
func CircuitTable(w io.Writer, lines []stream.Result, wall time.Duration, gnark map[string]Timing) {
	names, of := ByCircuit(lines)
	fmt.Fprintf(w, "%-16s %8s %10s %12s %12s", "circuit", "proofs", "proofs/s", "latency ms", "median ms")
	if gnark != nil {
		fmt.Fprintf(w, " %14s", "gnark ms/proof")
	}
	fmt.Fprintln(w)
	for _, name := range names {
		rs := of[name]
		total := make([]float64, len(rs))
		for i, r := range rs {
			total[i] = r.TotalMS
		}
		fmt.Fprintf(w, "%-16s %8d %10.3f %12.1f %12.1f", name, len(rs), float64(len(rs))/wall.Seconds(), Mean(total), median(total))
		if gnark != nil {
			if t, ok := gnark[name]; ok && t.N > 0 {
				fmt.Fprintf(w, " %14.1f", t.Wall.Seconds()*1000/float64(t.N))
			} else {
				fmt.Fprintf(w, " %14s", "-")
			}
		}
		fmt.Fprintln(w)
	}
}
