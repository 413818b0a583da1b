package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// chainDir sets up a small mulchain circuit once for the package's tests.
var chainDir = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "zkpipe-engine-test-")
	if err != nil {
		return "", err
	}
	dir = filepath.Join(dir, "chain")
	_, err = gnarksrc.Setup("mulchain", 200, dir)
	return dir, err
})

func loadChain(t *testing.T) *stages.Circuit {
	t.Helper()
	dir, err := chainDir()
	if err != nil {
		t.Fatal(err)
	}
	c, err := gnarksrc.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func cpuOptions(out string) Options {
	return Options{Device: "cpu", Out: out, Log: io.Discard, Memory: MemoryOptions{Budget: "off"}}
}

// generated is n jobs that generate their own witness: ids prefix1…prefixN.
func generated(prefix string, n int) <-chan stream.Line {
	ch := make(chan stream.Line, n)
	for i := 1; i <= n; i++ {
		ch <- stream.Line{Number: i, Request: stream.Request{ID: fmt.Sprintf("%s%d", prefix, i), Generate: &stream.Generate{Seed: int64(i)}}}
	}
	close(ch)
	return ch
}

// runAll runs jobs through a fresh engine and returns the result lines.
func runAll(t *testing.T, opts Options, jobs <-chan stream.Line, circuits ...*stages.Circuit) ([]stream.Result, error) {
	t.Helper()
	e, err := New(context.Background(), opts, circuits...)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var lines []stream.Result
	err = e.Run(context.Background(), jobs, func(r stream.Result) error {
		lines = append(lines, r)
		return nil
	})
	return lines, err
}

func TestOptionsOutOfRangeFailBeforeAnything(t *testing.T) {
	for _, c := range []struct {
		opts func(*Options)
		want string
	}{
		{func(o *Options) { o.Shapes = map[string]stages.Shape{stages.Parse: {Workers: 0, Queue: 1}} }, "engine.Options.Shapes[parse].Workers 0: want 1 to"},
		{func(o *Options) { o.Shapes = map[string]stages.Shape{stages.TailMSM: {Workers: 1, Queue: -1}} }, "engine.Options.Shapes[tail-msm].Queue -1"},
		{func(o *Options) { o.Shapes = map[string]stages.Shape{"nope": {Workers: 1}} }, `unknown stage "nope"`},
		{func(o *Options) { o.MSMTasks = 5000 }, "engine.Options.MSMTasks 5000: want 0 (one per core) to 1024"},
		{func(o *Options) { o.ShareCores, o.MSMTasks = true, 8 }, "engine.Options.ShareCores sizes each MSM and NTT itself"},
		{func(o *Options) { o.TailMSMBatch = 65 }, "engine.Options.TailMSMBatch 65: want 1 to 64"},
		{func(o *Options) { o.TailMSMBatch = -1 }, "engine.Options.TailMSMBatch -1"},
		{func(o *Options) { o.CUDA.ComputeStreams = 17 }, "engine.Options.CUDA.ComputeStreams 17: want 1 to 16"},
		{func(o *Options) { o.CUDA.ClassifyWorkers = -2 }, "engine.Options.CUDA.ClassifyWorkers -2: none may be negative"},
		{func(o *Options) { o.Device = "tpu" }, `engine.Options.Device "tpu"`},
		{func(o *Options) { o.Memory.Budget = "lots" }, "engine.Options.Memory.Budget"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		o := cpuOptions(out)
		c.opts(&o)
		_, err := New(context.Background(), o, loadChain(t))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want %q", err, c.want)
		}
	}
}

func TestOutDirIsLockedAndStaleTempFilesGo(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(out, ".j1.proof.tmp-12345")
	keep := filepath.Join(out, "notes.txt")
	for _, p := range []string{stale, keep} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, err := New(context.Background(), cpuOptions(out), loadChain(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale temporary file still there: %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("a file of the user's was removed: %v", err)
	}
	if _, err := New(context.Background(), cpuOptions(out), loadChain(t)); !errors.Is(err, ErrDirInUse) {
		t.Errorf("second engine on the same --out: err = %v, want ErrDirInUse", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e2, err := New(context.Background(), cpuOptions(out), loadChain(t))
	if err != nil {
		t.Fatalf("after Close the directory is free again: %v", err)
	}
	e2.Close()
}

// A write that fails stops intake: the jobs in flight report, the rest are
// not taken, and Run says why.
func TestOutputFailureStopsTakingJobs(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	// A directory where j1's public witness goes: the rename into place fails.
	if err := os.MkdirAll(filepath.Join(out, "j1.public", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	const n = 80
	lines, err := runAll(t, cpuOptions(out), generated("j", n), loadChain(t))
	if !errors.Is(err, ErrOutput) {
		t.Fatalf("Run: %v, want ErrOutput", err)
	}
	if len(lines) >= n {
		t.Errorf("%d result lines for %d jobs: intake did not stop", len(lines), n)
	}
	var j1 *stream.Result
	for i := range lines {
		if lines[i].ID == "j1" {
			j1 = &lines[i]
		}
	}
	if j1 == nil || !strings.Contains(j1.Error, "j1.public") || !j1.Retryable {
		t.Errorf("j1's result should name the file it could not write and be retryable (the host's fault): %+v", j1)
	}
}

func TestSkipDoneAnswersVerifiedOutputsOnly(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	first, err := runAll(t, cpuOptions(out), generated("j", 4), loadChain(t))
	if err != nil || len(first) != 4 {
		t.Fatalf("first run: %d lines, %v", len(first), err)
	}
	// j2's proof damaged, j3's removed: both must be proven again.
	proof2 := filepath.Join(out, "j2.proof")
	data, err := os.ReadFile(proof2)
	if err != nil {
		t.Fatal(err)
	}
	data[40] ^= 1
	if err := os.WriteFile(proof2, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(out, "j3.proof")); err != nil {
		t.Fatal(err)
	}
	o := cpuOptions(out)
	o.SkipDone = true
	second, err := runAll(t, o, generated("j", 5), loadChain(t))
	if err != nil {
		t.Fatal(err)
	}
	vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(must(chainDir()), gnarksrc.VKFile))
	if err != nil {
		t.Fatal(err)
	}
	resumed := map[string]bool{}
	for _, l := range second {
		if l.Error != "" {
			t.Errorf("job %s: %s", l.ID, l.Error)
			continue
		}
		resumed[l.ID] = l.Resumed
		if err := gnarksrc.VerifyFiles(vk, l.Proof, l.Public); err != nil {
			t.Errorf("job %s (resumed %v): gnark rejects it: %v", l.ID, l.Resumed, err)
		}
		if l.Resumed && len(l.PublicInputs) == 0 {
			t.Errorf("resumed job %s has no public inputs", l.ID)
		}
	}
	want := map[string]bool{"j1": true, "j2": false, "j3": false, "j4": true, "j5": false}
	for id, w := range want {
		if r, ok := resumed[id]; !ok || r != w {
			t.Errorf("job %s: resumed %v (present %v), want %v", id, r, ok, w)
		}
	}
}

func TestAddCircuitWhileRunning(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	first := loadChain(t)
	e, err := New(context.Background(), cpuOptions(out), first)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	second := loadChain(t)
	second.Name = "chain2"
	jobs := make(chan stream.Line)
	results := make(chan stream.Result, 4)
	done := make(chan error, 1)
	go func() {
		done <- e.Run(context.Background(), jobs, func(r stream.Result) error { results <- r; return nil })
	}()
	jobs <- stream.Line{Number: 1, Request: stream.Request{ID: "a", Circuit: "chain", Generate: &stream.Generate{Seed: 1}}}
	if r := <-results; r.Error != "" {
		t.Fatalf("a: %s", r.Error)
	}
	if e.HasCircuit("chain2") {
		t.Fatal("chain2 before AddCircuit")
	}
	if err := e.AddCircuit(second); err != nil {
		t.Fatal(err)
	}
	jobs <- stream.Line{Number: 2, Request: stream.Request{ID: "b", Circuit: "chain2", Generate: &stream.Generate{Seed: 2}}}
	if r := <-results; r.Error != "" || r.Circuit != "chain2" {
		t.Fatalf("b: %+v", r)
	}
	close(jobs)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, sh := range e.opts.Shapes {
		want += sh.Workers + sh.Queue
	}
	if e.Capacity() != want || want < 16 {
		t.Errorf("capacity %d, want %d (every stage's workers and queue)", e.Capacity(), want)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestAutoShapeKeepsUserSettings(t *testing.T) {
	set := map[string]stages.Shape{stages.Synthesize: {Workers: 3, Queue: 0}}
	got, auto := autoShape(set, 16, true, false, false)
	if got[stages.Synthesize] != (stages.Shape{Workers: 3, Queue: 0}) || auto[stages.Synthesize] {
		t.Errorf("synthesize %+v (auto %v): the user's 3/0 must win", got[stages.Synthesize], auto[stages.Synthesize])
	}
	if got[stages.Transfer].Workers != 3 || got[stages.BG2].Workers != 2 || !auto[stages.Transfer] {
		t.Errorf("GPU on 16 cores: transfer %+v, b-g2 %+v", got[stages.Transfer], got[stages.BG2])
	}
	if got, _ := autoShape(nil, 16, true, true, false); got[stages.BG2].Workers != 1 {
		t.Errorf("B_G2 on the GPU: %+v, want one worker", got[stages.BG2])
	}
	if got, _ := autoShape(nil, 16, false, false, false); got[stages.MSMH].Workers != 2 || got[stages.Parse].Workers != 1 {
		t.Errorf("CPU on 16 cores: msm-h %+v, parse %+v", got[stages.MSMH], got[stages.Parse])
	}
	if got, _ := autoShape(nil, 16, true, true, true); got[stages.Synthesize].Workers != 12 {
		t.Errorf("circom circuits on a GPU, 16 cores: synthesize %+v, want 12 workers", got[stages.Synthesize])
	}
	if got, _ := autoShape(nil, 16, false, false, true); got[stages.Synthesize].Workers != 2 {
		t.Errorf("circom circuits on the CPU, 16 cores: synthesize %+v, want 2 workers (the MSMs share the cores)", got[stages.Synthesize])
	}
	set = map[string]stages.Shape{stages.Synthesize: {Workers: 5, Queue: 1}}
	if got, _ := autoShape(set, 16, true, true, true); got[stages.Synthesize].Workers != 5 {
		t.Errorf("circom circuits, synthesize set to 5: %+v", got[stages.Synthesize])
	}
	for _, cores := range []int{1, 2, 16, 128} {
		for _, gpu := range []bool{false, true} {
			for _, serial := range []bool{false, true} {
				shapes, _ := autoShape(nil, cores, gpu, false, serial)
				o := Options{Shapes: shapes}
				if err := o.check(); err != nil {
					t.Errorf("%d cores, gpu %v, serial synthesis %v: auto shape out of range: %v", cores, gpu, serial, err)
				}
			}
		}
	}
}

// A batching tail-msm stage gets a queue that holds a batch, unless the
// user set its shape.
func TestTailBatchDeepensTheAutomaticQueue(t *testing.T) {
	shapes, auto := autoShape(nil, 16, true, true, false)
	batchQueue(shapes, auto, 8)
	if q := shapes[stages.TailMSM].Queue; q != 8 {
		t.Errorf("tail-msm queue %d with batches of 8, want 8", q)
	}
	set := map[string]stages.Shape{stages.TailMSM: {Workers: 1, Queue: 1}}
	shapes, auto = autoShape(set, 16, true, true, false)
	batchQueue(shapes, auto, 8)
	if q := shapes[stages.TailMSM].Queue; q != 1 {
		t.Errorf("tail-msm queue %d, want the user's 1", q)
	}
	shapes, auto = autoShape(nil, 16, true, true, false)
	batchQueue(shapes, auto, 1)
	if q := shapes[stages.TailMSM].Queue; q != 2 {
		t.Errorf("tail-msm queue %d without batches, want the automatic 2", q)
	}
}

// A stream with tail-msm batches through the engine: every proof verifies.
func TestTailMSMBatchThroughTheEngine(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	o := cpuOptions(out)
	o.TailMSMBatch = 4
	lines, err := runAll(t, o, generated("b", 6), loadChain(t))
	if err != nil {
		t.Fatal(err)
	}
	vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(must(chainDir()), gnarksrc.VKFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 6 {
		t.Fatalf("%d result lines, want 6", len(lines))
	}
	for _, l := range lines {
		if l.Error != "" {
			t.Fatalf("job %s: %s", l.ID, l.Error)
		}
		if err := gnarksrc.VerifyFiles(vk, l.Proof, l.Public); err != nil {
			t.Fatalf("job %s: %v", l.ID, err)
		}
	}
}

// The shape a 16-core GPU host gets, run here on the CPU: several workers in
// every stage change nothing about the proofs.
func TestAutoShapeOfABigHostProvesTheSame(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	o := cpuOptions(out)
	o.Shapes, _ = autoShape(nil, 16, true, false, false)
	o.Memory.Budget = "256MiB"
	lines, err := runAll(t, o, generated("j", 8), loadChain(t))
	if err != nil {
		t.Fatal(err)
	}
	vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(must(chainDir()), gnarksrc.VKFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if l.Error != "" {
			t.Errorf("%s: %s", l.ID, l.Error)
		} else if err := gnarksrc.VerifyFiles(vk, l.Proof, l.Public); err != nil {
			t.Errorf("%s: gnark rejects it: %v", l.ID, err)
		}
	}
	if len(lines) != 8 {
		t.Errorf("%d result lines for 8 jobs", len(lines))
	}
}

// A program feeding Run directly, not through stream.Read, gets the same
// checks: an id that cannot name a file, and a second job of an id in
// flight, fail alone.
func TestRunChecksIdsOfItsCallers(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	jobs := make(chan stream.Line, 4)
	gen := &stream.Generate{Seed: 1}
	jobs <- stream.Line{Number: 1, Request: stream.Request{ID: "../escape", Generate: gen}}
	jobs <- stream.Line{Number: 2, Request: stream.Request{ID: "twice", Generate: gen}}
	jobs <- stream.Line{Number: 3, Request: stream.Request{ID: "twice", Generate: gen}}
	close(jobs)
	o := cpuOptions(out)
	o.Shapes = map[string]stages.Shape{stages.Parse: {Workers: 1, Queue: 4}} // both "twice" in flight at once
	lines, err := runAll(t, o, jobs, loadChain(t))
	if err != nil {
		t.Fatal(err)
	}
	errs := map[string][]string{}
	for _, l := range lines {
		errs[l.ID] = append(errs[l.ID], l.Error)
	}
	if e := errs["../escape"]; len(e) != 1 || !strings.Contains(e[0], "invalid id") {
		t.Errorf("../escape: %q", e)
	}
	if e := errs["twice"]; len(e) != 2 || (e[0] == "") == (e[1] == "") || !strings.Contains(e[0]+e[1], "duplicate id") {
		t.Errorf("twice: %q, want one proof and one duplicate-id error", e)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(out), "escape.proof")); err == nil {
		t.Error("a proof was written outside --out")
	}
}

// serialSource is a source whose synthesize runs on one core a job (serial,
// as circom's does) or not (as gnark's); only SerialSynthesis is called.
type serialSource struct {
	stages.Source
	serial bool
}

func (s serialSource) SerialSynthesis() bool { return s.serial }

func TestSerialSynthesis(t *testing.T) {
	serial := &stages.Circuit{Name: "s", Source: serialSource{serial: true}}
	other := &stages.Circuit{Name: "g", Source: serialSource{}}
	for _, c := range []struct {
		circuits []*stages.Circuit
		want     bool
	}{
		{nil, false},
		{[]*stages.Circuit{serial}, true},
		{[]*stages.Circuit{serial, serial}, true},
		{[]*stages.Circuit{serial, other}, false},
		{[]*stages.Circuit{other}, false},
	} {
		if got := serialSynthesis(c.circuits); got != c.want {
			t.Errorf("%d circuits: serialSynthesis %v, want %v", len(c.circuits), got, c.want)
		}
	}
}
