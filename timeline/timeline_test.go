package timeline

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/stream"
)

var names = []string{"parse", "synthesize", "transfer", "msm-h", "batch-add", "tail-msm", "b-g2", "assemble"}

// results makes n jobs that arrive every 40 ms; stage k of job i waits
// i+k ms and runs 10+k ms.
func results(n int) []stream.Result {
	var out []stream.Result
	for i := n - 1; i >= 0; i-- { // finish order need not be arrival order
		r := stream.Result{ID: fmt.Sprintf("job-%d", i), Circuit: "mulchain"}
		at := 40 * float64(i)
		for k, name := range names {
			s := stream.StageTime{Stage: name, Worker: i % 2, QueuedAtMS: at, QueueMS: float64(i + k), RunMS: float64(10 + k)}
			s.StartedAtMS = s.QueuedAtMS + s.QueueMS
			s.EndedAtMS = s.StartedAtMS + s.RunMS
			at = s.EndedAtMS
			r.Stages = append(r.Stages, s)
		}
		out = append(out, r)
	}
	return out
}

type bar struct {
	stage, fill, stroke string
	x, y, w             float64
}

type row struct {
	job  string
	bars []bar
}

// parse reads the picture back as a reader would: the rows, their bars, and
// the axis's ticks (ms → x). It fails the test on malformed XML.
func parse(t *testing.T, svg []byte) (rows []row, tickX map[float64]float64) {
	t.Helper()
	tickX = map[float64]float64{}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var tick float64 = -1
	root := true
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("malformed SVG: %v", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		a := map[string]string{}
		for _, at := range el.Attr {
			a[at.Name.Local] = at.Value
		}
		num := func(k string) float64 {
			v, err := strconv.ParseFloat(a[k], 64)
			if err != nil {
				t.Fatalf("<%s %s=%q>: %v", el.Name.Local, k, a[k], err)
			}
			return v
		}
		if root {
			if el.Name.Local != "svg" || el.Name.Space != "http://www.w3.org/2000/svg" {
				t.Fatalf("root element %v, want svg in the SVG namespace", el.Name)
			}
			root = false
		}
		switch {
		case el.Name.Local == "g" && a["class"] == "job":
			rows = append(rows, row{job: a["data-job"]})
		case el.Name.Local == "g" && a["class"] == "tick":
			tick = num("data-ms")
		case el.Name.Local == "line" && tick >= 0:
			tickX[tick] = num("x1")
			tick = -1
		case el.Name.Local == "rect" && a["class"] == "stage":
			if len(rows) == 0 {
				t.Fatal("a stage bar outside any job row")
			}
			r := &rows[len(rows)-1]
			r.bars = append(r.bars, bar{stage: a["data-stage"], fill: a["fill"], stroke: a["stroke"], x: num("x"), y: num("y"), w: num("width")})
		}
	}
	return rows, tickX
}

func TestSVG(t *testing.T) {
	in := results(5)
	in[1].Error, in[1].FailedStage = "job job-3: msm-h: <boom> & more", "msm-h" // job-3's msm-h fails
	in[1].Stages = in[1].Stages[:4]
	var buf bytes.Buffer
	if err := Write(&buf, in, Options{Width: 1000}); err != nil {
		t.Fatal(err)
	}
	rows, tickX := parse(t, buf.Bytes())

	// One row per job, in arrival order.
	if len(rows) != 5 {
		t.Fatalf("%d rows, want 5", len(rows))
	}
	for i, r := range rows {
		if r.job != fmt.Sprintf("job-%d", i) {
			t.Errorf("row %d is %s, want job-%d", i, r.job, i)
		}
	}

	// The axis maps ms to x linearly; read the map off two ticks.
	x0, ok := tickX[0]
	if !ok || len(tickX) < 3 {
		t.Fatalf("axis ticks %v: want 0 and more", tickX)
	}
	var far float64
	for ms := range tickX {
		far = math.Max(far, ms)
	}
	end := 40*4 + (4+11)*8/2 + (10+17)*8/2 // job-4 arrives at 160, waits 4..11 ms, runs 10..17 ms
	if far < float64(end) {
		t.Errorf("axis ends at %g ms, before the last job ends (%d ms)", far, end)
	}
	px := (tickX[far] - x0) / far
	x := func(ms float64) float64 { return x0 + ms*px }

	// Bars where the results say, one colour per stage, rows not overlapping.
	fill := map[string]string{}
	byID := map[string]stream.Result{}
	for _, r := range in {
		byID[r.ID] = r
	}
	lastY := -1.0
	for _, r := range rows {
		want := byID[r.job]
		if len(r.bars) != len(want.Stages) {
			t.Fatalf("%s: %d bars, want %d", r.job, len(r.bars), len(want.Stages))
		}
		for k, b := range r.bars {
			s := want.Stages[k]
			if b.stage != s.Stage {
				t.Errorf("%s bar %d: stage %s, want %s", r.job, k, b.stage, s.Stage)
			}
			if math.Abs(b.x-x(s.StartedAtMS)) > 0.02 || math.Abs(b.x+b.w-x(s.EndedAtMS)) > 0.02 {
				t.Errorf("%s %s: bar %.2f..%.2f px, want %.2f..%.2f (%.1f..%.1f ms)",
					r.job, s.Stage, b.x, b.x+b.w, x(s.StartedAtMS), x(s.EndedAtMS), s.StartedAtMS, s.EndedAtMS)
			}
			if f, seen := fill[s.Stage]; seen && f != b.fill {
				t.Errorf("stage %s drawn in %s and %s", s.Stage, f, b.fill)
			}
			fill[s.Stage] = b.fill
			if failed := want.FailedStage == s.Stage; failed != (b.stroke != "") {
				t.Errorf("%s %s: outline %q, failed %v", r.job, s.Stage, b.stroke, failed)
			}
			if b.y <= lastY {
				t.Errorf("%s: bar at y=%.1f, not below the previous row (%.1f)", r.job, b.y, lastY)
			}
		}
		lastY = r.bars[0].y
	}
	colours := map[string]bool{}
	for _, f := range fill {
		colours[f] = true
	}
	if len(fill) != 8 || len(colours) != 8 {
		t.Errorf("%d stages in %d colours, want 8 in 8", len(fill), len(colours))
	}
	// Idle gaps: job-0 has left before job-4 arrives, so their bars are
	// apart in time, and job-1's queue waits leave gaps between its bars.
	j1 := rows[1].bars
	if j1[1].x-(j1[0].x+j1[0].w) < 1 {
		t.Errorf("job-1: no gap between parse and synthesize (waited 2 ms)")
	}
	if !strings.Contains(buf.String(), "&lt;boom&gt; &amp; more") {
		t.Error("the failure's message is not in the picture, escaped")
	}
}

func TestManyJobsAndEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, results(500), Options{}); err != nil {
		t.Fatal(err)
	}
	rows, _ := parse(t, buf.Bytes())
	if len(rows) != 500 {
		t.Fatalf("%d rows, want 500", len(rows))
	}
	buf.Reset()
	if err := Write(&buf, nil, Options{}); err != nil {
		t.Fatal(err)
	}
	if rows, _ := parse(t, buf.Bytes()); len(rows) != 0 {
		t.Fatalf("no results: %d rows", len(rows))
	}
}

// A request of partitions draws a row per partition, by the partition's
// id, among the single jobs in arrival order.
func TestPartitionsHaveRows(t *testing.T) {
	in := results(3) // job-2, job-1, job-0: arriving at 80, 40, 0 ms
	req := stream.Result{ID: "r1", Stages: []stream.StageTime{}}
	for i, j := range []stream.Result{in[2], in[1]} { // r1/0 arrives at 0 ms, r1/1 at 40
		req.Partitions = append(req.Partitions, stream.PartitionResult{Index: i, ID: fmt.Sprintf("r1/%d", i), Stages: j.Stages, TotalMS: j.TotalMS})
	}
	var buf bytes.Buffer
	if err := Write(&buf, []stream.Result{in[0], req}, Options{Width: 1000}); err != nil {
		t.Fatal(err)
	}
	rows, _ := parse(t, buf.Bytes())
	var got []string
	for _, r := range rows {
		got = append(got, r.job)
	}
	if fmt.Sprint(got) != "[r1/0 r1/1 job-2]" {
		t.Errorf("rows %v, want [r1/0 r1/1 job-2]", got)
	}
}
