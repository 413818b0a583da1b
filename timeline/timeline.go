// Package timeline draws a proof stream's result lines as an SVG picture:
// one row per job, one bar per stage on a shared time axis, so that stage
// overlap between jobs and idle gaps are seen at a glance without Jaeger.
//
// It reads only the results' *_at_ms fields (milliseconds since the stream
// started, stream.StageTime): the bar of a stage runs from started_at_ms to
// ended_at_ms, and a thin grey line before it from queued_at_ms shows the
// job waiting in that stage's queue. Where nothing is drawn in a row, the
// job did not exist yet or had left.
package timeline

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/zkpipe/zkpipe/stream"
)

// Options shape the picture; the zero value is usable.
type Options struct {
	Width int    // total width in pixels; 0 means 1200
	Title string // "" means "zkpipe stream: N jobs"
}

// Stage colours: Okabe–Ito's colour-blind-safe palette, in pipeline order.
// Stages of other names take the fallback colours in order of appearance.
var (
	colours = map[string]string{
		"parse":      "#999999",
		"synthesize": "#E69F00",
		"transfer":   "#56B4E9",
		"msm-h":      "#009E73",
		"batch-add":  "#F0E442",
		"tail-msm":   "#0072B2",
		"b-g2":       "#D55E00",
		"assemble":   "#CC79A7",
	}
	fallback = []string{"#332288", "#88CCEE", "#44AA99", "#117733", "#DDCC77", "#AA4499", "#882255"}
)

// Geometry, in pixels.
const (
	titleH   = 28
	legendH  = 26
	axisH    = 34
	padRight = 16
	barH     = 12
)

// Write draws results (in any order) as one SVG document on w. Rows are
// ordered by when each job entered the pipeline; a request of partitions
// has a row per partition.
func Write(w io.Writer, results []stream.Result, opt Options) error {
	width := opt.Width
	if width <= 0 {
		width = 1200
	}
	rows := make([]stream.Result, 0, len(results))
	for _, r := range results {
		if len(r.Stages) > 0 {
			rows = append(rows, r)
		}
		// a request of partitions: a row per partition, named REQUEST/INDEX
		for _, p := range r.Partitions {
			if len(p.Stages) > 0 {
				rows = append(rows, stream.Result{ID: p.ID, Circuit: r.Circuit, Device: p.Device, Error: p.Error,
					FailedStage: p.FailedStage, Stages: p.Stages, TotalMS: p.TotalMS})
			}
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Stages[0].QueuedAtMS < rows[j].Stages[0].QueuedAtMS })

	// Stage order and colours, as the stages first appear.
	var order []string
	colour := map[string]string{}
	end := 0.0
	for _, r := range rows {
		for _, s := range r.Stages {
			if _, ok := colour[s.Stage]; !ok {
				c, known := colours[s.Stage]
				if !known {
					c = fallback[(len(colour))%len(fallback)]
				}
				colour[s.Stage] = c
				order = append(order, s.Stage)
			}
			end = math.Max(end, s.EndedAtMS)
		}
	}

	// Rows shrink for long streams; labels go when they no longer fit.
	rowH := 18.0
	if n := len(rows); n > 60 {
		rowH = math.Max(2, 1080/float64(n))
	}
	labels := rowH >= 10
	labelW := 12.0
	if labels {
		for _, r := range rows {
			labelW = math.Max(labelW, 7*float64(len(r.ID))+16)
		}
		labelW = math.Min(labelW, 220)
	}
	x0, plotW := labelW, float64(width)-labelW-padRight
	if plotW < 100 {
		return fmt.Errorf("timeline: %d px is too narrow", width)
	}
	ticks, step := niceTicks(end)
	span := math.Max(end, ticks[len(ticks)-1])
	x := func(ms float64) float64 { return x0 + ms/span*plotW }
	y0 := float64(titleH + legendH)
	height := y0 + rowH*float64(len(rows)) + axisH

	title := opt.Title
	if title == "" {
		title = fmt.Sprintf("zkpipe stream: %d jobs in %s", len(rows), fmtDur(end))
		if end > 0 && len(rows) > 0 {
			title += fmt.Sprintf(" (%.2f jobs/s)", float64(len(rows))/end*1000)
		}
	}

	b := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p(`<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%.0f" viewBox="0 0 %d %.0f" font-family="sans-serif" font-size="11">`+"\n",
		width, height, width, height)
	p(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	p(`<text x="%.1f" y="18" font-size="14" font-weight="bold">%s</text>`+"\n", x0, esc(title))

	// Legend: a swatch per stage, then the queue line and the failure mark.
	p(`<g class="legend" transform="translate(%.1f,%d)">`+"\n", x0, titleH)
	lx := 0.0
	for _, name := range order {
		p(`<rect x="%.1f" y="0" width="12" height="12" fill="%s"/><text x="%.1f" y="10">%s</text>`+"\n", lx, colour[name], lx+16, esc(name))
		lx += 16 + 7*float64(len(name)) + 14
	}
	p(`<line x1="%.1f" y1="6" x2="%.1f" y2="6" stroke="#bbbbbb" stroke-width="2"/><text x="%.1f" y="10">queue wait</text>`+"\n", lx, lx+14, lx+18)
	lx += 18 + 7*10 + 14
	p(`<rect x="%.1f" y="0" width="12" height="12" fill="white" stroke="#d00000" stroke-width="2"/><text x="%.1f" y="10">failed stage</text>`+"\n", lx, lx+16)
	p("</g>\n")

	// Grid and axis: a vertical line per tick across every row.
	p(`<g class="axis" font-size="10" fill="#444444">` + "\n")
	yAxis := y0 + rowH*float64(len(rows))
	for _, t := range ticks {
		p(`<g class="tick" data-ms="%g"><line x1="%.2f" y1="%.1f" x2="%.2f" y2="%.1f" stroke="#e4e4e4"/><text x="%.2f" y="%.1f" text-anchor="middle">%s</text></g>`+"\n",
			t, x(t), y0, x(t), yAxis+4, x(t), yAxis+16, fmtMS(t, step))
	}
	p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#444444"/>`+"\n", x0, yAxis, x0+plotW, yAxis)
	p(`<text x="%.1f" y="%.1f" text-anchor="middle">time since the stream started</text>`+"\n", x0+plotW/2, yAxis+30)
	p("</g>\n")

	// Rows: queue lines, then bars, so bars stay on top.
	h := math.Min(barH, rowH-1)
	if rowH < 4 {
		h = rowH
	}
	for i, r := range rows {
		top := y0 + rowH*float64(i)
		mid := top + rowH/2
		p(`<g class="job" data-job="%s" data-row="%d">`+"\n", esc(r.ID), i)
		if labels {
			p(`<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", x0-6, mid+4, esc(r.ID))
		}
		for _, s := range r.Stages {
			if s.StartedAtMS > s.QueuedAtMS {
				p(`<line class="queue" x1="%.2f" y1="%.2f" x2="%.2f" y2="%.2f" stroke="#bbbbbb" stroke-width="%.1f"/>`+"\n",
					x(s.QueuedAtMS), mid, x(s.StartedAtMS), mid, math.Max(1, h/6))
			}
		}
		for _, s := range r.Stages {
			failed := r.FailedStage != "" && s.Stage == r.FailedStage
			stroke := ""
			if failed {
				stroke = ` stroke="#d00000" stroke-width="2"`
			}
			// A stage too short to see still gets half a pixel.
			bw := math.Max(x(s.EndedAtMS)-x(s.StartedAtMS), 0.5)
			tip := fmt.Sprintf("%s %s (worker %d): run %.1f ms, queued %.1f ms; %.1f–%.1f ms",
				r.ID, s.Stage, s.Worker, s.RunMS, s.QueueMS, s.StartedAtMS, s.EndedAtMS)
			if failed {
				msg := r.Error
				if len(msg) > 300 {
					msg = msg[:300] + "…"
				}
				tip += "; failed: " + msg
			}
			p(`<rect class="stage" data-stage="%s" x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="%s"%s><title>%s</title></rect>`+"\n",
				esc(s.Stage), x(s.StartedAtMS), mid-h/2, bw, h, colour[s.Stage], stroke, esc(tip))
		}
		p("</g>\n")
	}
	p("</svg>\n")
	return b.Flush()
}

// niceTicks returns ticks 0, step, 2·step, … covering end, with step one of
// 1, 2 or 5 times a power of ten, and about 10 of them.
func niceTicks(end float64) ([]float64, float64) {
	if end <= 0 {
		end = 1
	}
	raw := end / 10
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	step := pow
	for _, m := range []float64{1, 2, 5, 10} {
		if m*pow >= raw {
			step = m * pow
			break
		}
	}
	var ticks []float64
	for i := 0; ; i++ {
		t := float64(i) * step
		ticks = append(ticks, t)
		if t >= end {
			return ticks, step
		}
	}
}

// fmtMS writes a time in ms or s, with as many decimals as step needs.
func fmtMS(ms, step float64) string {
	unit, v, s := "ms", ms, step
	if step >= 1000 || (step == 0 && ms >= 1000) {
		unit, v, s = "s", ms/1000, step/1000
	}
	dec := 0
	if s > 0 && s < 1 {
		dec = int(math.Ceil(-math.Log10(s)))
	}
	return fmt.Sprintf("%.*f %s", dec, v, unit)
}

// fmtDur writes a duration for the title: ms below a second, else s.
func fmtDur(ms float64) string {
	if ms < 1000 {
		return fmt.Sprintf("%.0f ms", ms)
	}
	return fmt.Sprintf("%.2f s", ms/1000)
}

func esc(s string) string {
	var sb strings.Builder
	xml.EscapeText(&sb, []byte(s))
	return sb.String()
}
