package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/internal/syncbuf"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// adaptRun proves n generated jobs with the shape adapting every 20 ms and
// the user's shape for msm-h (one worker, so that it is often the
// bottleneck: a controller that touched user's stages would grow it), checks
// every proof with gnark and the shape notes, and returns the lines, the
// log and the memory figures. With room > 0 the memory budget is what the
// engine holds at rest and room for about that many jobs (the rest follows
// the process's RSS, so from 1 to 3×room), so that it binds.
func adaptRun(t *testing.T, room int64, cores, n int) ([]stream.Result, string, mem.Stats) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	var log syncbuf.Buffer
	o := cpuOptions(out)
	o.Log = &log
	o.Cores = cores
	o.AdaptEvery = 20 * time.Millisecond
	o.Shapes = map[string]stages.Shape{stages.MSMH: {Workers: 1, Queue: 1}}
	var e *Engine
	for try := 0; ; try++ {
		c := loadChain(t)
		debug.FreeOSMemory() // what the engine holds at rest follows RSS: steady it
		var err error
		if e, err = New(context.Background(), o, c); err != nil {
			t.Fatal(err)
		}
		m, fp := e.gov.Stats(), c.Footprint()
		if fits := (m.Budget - m.Charged) / fp; room == 0 || (fits >= 1 && fits <= 3*room) {
			break
		}
		// What the engine holds at rest varies with the process's RSS:
		// measure it, then open again with the budget it calls for.
		if e.Close(); try == 10 {
			t.Fatalf("no budget leaves room for %d jobs: %+v", room, m)
		}
		o.Memory.Budget = fmt.Sprint(m.Charged + room*fp + fp/2)
	}
	defer e.Close()
	var lines []stream.Result
	if err := e.Run(context.Background(), generated("j", n), func(r stream.Result) error {
		lines = append(lines, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	m := e.gov.Stats()

	vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(must(chainDir()), gnarksrc.VKFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != n {
		t.Fatalf("%d result lines for %d jobs", len(lines), n)
	}
	for i, l := range lines {
		if l.Error != "" {
			t.Fatalf("%s: %s", l.ID, l.Error)
		}
		if err := gnarksrc.VerifyFiles(vk, l.Proof, l.Public); err != nil {
			t.Fatalf("%s: gnark rejects it: %v", l.ID, err)
		}
		if i == 0 && !strings.Contains(l.Shape, "synthesize ") {
			t.Errorf("the first line has no shape: %q", l.Shape)
		}
		if len(l.ShapeChanges) > 0 && l.Shape == "" {
			t.Errorf("%s: changes %q without the shape they led to", l.ID, l.ShapeChanges)
		}
		// The user's stage: one worker, never marked as zkpipe's, never changed.
		if l.Shape != "" && !strings.Contains(l.Shape, "msm-h 1/1 ") {
			t.Errorf("%s: shape %q, want the user's msm-h 1/1", l.ID, l.Shape)
		}
		for _, c := range l.ShapeChanges {
			if strings.HasPrefix(c, stages.MSMH) {
				t.Errorf("%s: the user's stage changed: %s", l.ID, c)
			}
		}
		for _, s := range l.Stages {
			if s.Stage == stages.MSMH && s.Worker != 0 {
				t.Errorf("%s: msm-h ran on worker %d of the user's one", l.ID, s.Worker)
			}
		}
	}
	return lines, log.String(), m
}

// With room to grow (16 cores as far as the controller knows, no memory
// budget) the controller changes the shape while the proofs stay right, and
// every change is on a result line and in the log.
func TestAdaptingShapeProvesTheSameAndSaysWhatChanged(t *testing.T) {
	lines, log, _ := adaptRun(t, 0, 16, 80)
	var changes []string
	for _, l := range lines {
		changes = append(changes, l.ShapeChanges...)
	}
	for _, c := range changes {
		if !strings.Contains(log, "zkpipe: shape "+c) {
			t.Errorf("change %q is not in the log:\n%s", c, log)
		}
	}
	// Some stage limits a stream queued up front: either it grew, or it was
	// the user's msm-h and the log says so.
	if len(changes) == 0 && !strings.Contains(log, "zkpipe: shape kept: msm-h is the bottleneck") {
		t.Fatalf("no shape change in %d jobs, and no word of a bottleneck kept; log:\n%s", len(lines), log)
	}
	t.Logf("changes: %q; log:\n%s", changes, log)
}

// Under a small memory budget, more workers only wait for admission: what
// the governor admitted never passed the budget.
func TestAdaptingShapeKeepsTheMemoryBudget(t *testing.T) {
	_, log, m := adaptRun(t, 3, 16, 40)
	fits := (m.Budget - m.Charged) / loadChain(t).Footprint()
	if m.PeakAdmitted < 1 || int64(m.PeakAdmitted) > fits || m.Charged+m.PeakReserved > m.Budget {
		t.Errorf("%d jobs at once (%d fit), %s admitted over resident %s: budget %s", m.PeakAdmitted, fits,
			mem.FormatBytes(m.PeakReserved), mem.FormatBytes(m.Charged), mem.FormatBytes(m.Budget))
	}
	if m.Waits == 0 {
		t.Errorf("no job waited for memory: the budget did not bind, the test says nothing (%+v)", m)
	}
	t.Logf("budget %s, resident %s, peak reserved %s (%d jobs at once), %d waited, %d let in alone over measured RSS; log:\n%s",
		mem.FormatBytes(m.Budget), mem.FormatBytes(m.Charged), mem.FormatBytes(m.PeakReserved), m.PeakAdmitted, m.Waits, m.Forced, log)
}

func TestFixedShapeNeverChanges(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	o := cpuOptions(out)
	o.FixedShape, o.Cores, o.AdaptEvery = true, 16, 10*time.Millisecond
	lines, err := runAll(t, o, generated("j", 30), loadChain(t))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range lines {
		if len(l.ShapeChanges) > 0 || (i > 0 && l.Shape != "") {
			t.Errorf("%s: shape %q changes %q with a fixed shape", l.ID, l.Shape, l.ShapeChanges)
		}
	}
	if len(lines) == 0 || !strings.Contains(lines[0].Shape, "*") {
		t.Errorf("the first line should still say the shape: %+v", lines)
	}
}

func TestShapeText(t *testing.T) {
	o := &Options{Shapes: map[string]stages.Shape{stages.Parse: {Workers: 2, Queue: 2}, stages.Synthesize: {Workers: 6, Queue: 1}}}
	got := shapeText(o, map[string]bool{stages.Synthesize: true}, map[string]int{stages.Synthesize: 7})
	want := "parse 2/2 synthesize 7/1* transfer 1/1 msm-h 1/1 batch-add 1/1 tail-msm 1/1 b-g2 1/1 assemble 1/1"
	if got != want {
		t.Errorf("shape\n got %s\nwant %s", got, want)
	}
	if g := growable(o, map[string]bool{stages.Synthesize: true, stages.MSMH: true}, 16); len(g) != 2 || g[stages.Synthesize] != 16 || g[stages.MSMH] != 16 {
		t.Errorf("growable: %v, want the chosen stages up to 16", g)
	}
	o.FixedShape = true
	if g := growable(o, map[string]bool{stages.Synthesize: true}, 16); g != nil {
		t.Errorf("growable with a fixed shape: %v", g)
	}
}
