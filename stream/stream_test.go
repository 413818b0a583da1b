package stream_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/stream"
)

func TestReadDeliversEachLineAsItArrives(t *testing.T) {
	pr, pw := io.Pipe()
	out := make(chan stream.Line)
	go stream.Read(context.Background(), pr, out)
	go pw.Write([]byte(`{"id":"a","generate":{"seed":1}}` + "\n"))
	select {
	case l := <-out:
		if l.Err != nil || l.Request.ID != "a" || l.Request.Generate.Seed != 1 {
			t.Fatalf("got %+v", l)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a complete line was not delivered while the pipe stayed open")
	}
	pw.Close()
	if _, ok := <-out; ok {
		t.Fatal("out not closed at end of input")
	}
}

func TestReadNamesBadLinesAndKeepsGoing(t *testing.T) {
	in := strings.Join([]string{
		`{"id":"ok","witness":"w"}`,
		``,
		`{"id":"bad json"`,
		`{"id":"ok","witness":"again"}`,
		`{"id":"../../etc/passwd","witness":"w"}`,
		`{"id":"x","unknown_field":1}`,
		`{"id":"y"} {"id":"z"}`,
		`{"id":"last","input":{"a":"3"}}`,
	}, "\n")
	out := make(chan stream.Line, 100)
	if err := stream.Read(context.Background(), strings.NewReader(in), out); err != nil {
		t.Fatal(err)
	}
	var got []stream.Line
	for l := range out {
		got = append(got, l)
	}
	want := []struct{ id, err string }{
		{"ok", ""},
		{"#line-3", "malformed job"},
		{"ok", "duplicate id"},
		{"#line-5", "invalid id"},
		{"x", "unknown field"},
		{"y", "trailing data"},
		{"last", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		l := got[i]
		if l.Request.ID != w.id {
			t.Errorf("line %d: id %q, want %q", l.Number, l.Request.ID, w.id)
		}
		if (w.err == "") != (l.Err == nil) || l.Err != nil && !strings.Contains(l.Err.Error(), w.err) {
			t.Errorf("line %d: err %v, want %q", l.Number, l.Err, w.err)
		}
	}
	if !errors.Is(got[2].Err, stream.ErrDuplicateID) {
		t.Errorf("duplicate not marked with ErrDuplicateID: %v", got[2].Err)
	}
}

func TestResultsRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := stream.NewWriter(&buf)
	in := []stream.Result{
		{ID: "a", Proof: "out/a.proof", Stages: []stream.StageTime{{Stage: "parse", RunMS: 1.5, EndedAtMS: 2}}},
		{ID: "b", Error: "job b: parse: boom", FailedStage: "parse", Stages: []stream.StageTime{}},
	}
	for _, r := range in {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(buf.String(), "\n"); n != 2 {
		t.Fatalf("%d lines, want 2", n)
	}
	out, err := stream.ReadResults(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].Stages[0].RunMS != 1.5 || out[1].FailedStage != "parse" {
		t.Fatalf("round trip gave %+v", out)
	}
}

// A line over the limit is that job's error, not the stream's end.
func TestReadGivesAnOverlongLineItsOwnError(t *testing.T) {
	long := `{"id":"big","input":{"a":"` + strings.Repeat("9", stream.MaxLineBytes) + `"}}`
	exact := `{"id":"fits","witness":"` + strings.Repeat("w", stream.MaxLineBytes-len(`{"id":"fits","witness":""}`)) + `"}`
	in := strings.Join([]string{`{"id":"a","witness":"w"}`, long, exact, `{"id":"b","witness":"w"}`, long}, "\n")
	out := make(chan stream.Line, 10)
	if err := stream.Read(context.Background(), strings.NewReader(in), out); err != nil {
		t.Fatalf("the stream failed: %v", err)
	}
	var got []stream.Line
	for l := range out {
		got = append(got, l)
	}
	want := []struct{ id, err string }{
		{"a", ""},
		{"#line-2", "line 2: job line longer than 16 MiB"},
		{"fits", ""},
		{"b", ""},
		{"#line-5", "line 5: job line longer than 16 MiB"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d", len(got), len(want))
	}
	for i, w := range want {
		l := got[i]
		if l.Request.ID != w.id || (w.err == "") != (l.Err == nil) || l.Err != nil && !strings.Contains(l.Err.Error(), w.err) {
			t.Errorf("line %d: id %q err %v, want %q %q", l.Number, l.Request.ID, l.Err, w.id, w.err)
		}
	}
}

// Lines keep their numbers across blank lines, CRLF endings and a last
// line without a newline, as bufio.Scanner gave them.
func TestReadNumbersLinesAsBefore(t *testing.T) {
	in := "\r\n{\"id\":\"a\",\"witness\":\"w\"}\r\n\n  \n{\"id\":\"b\",\"witness\":\"w\"}"
	out := make(chan stream.Line, 10)
	if err := stream.Read(context.Background(), strings.NewReader(in), out); err != nil {
		t.Fatal(err)
	}
	var got []string
	for l := range out {
		if l.Err != nil {
			t.Fatalf("line %d: %v", l.Number, l.Err)
		}
		got = append(got, fmt.Sprintf("%d:%s", l.Number, l.Request.ID))
	}
	if strings.Join(got, " ") != "2:a 5:b" {
		t.Errorf("got %v, want [2:a 5:b]", got)
	}
}

// A read stopped with lines left counts them (CountRest): the unsent line
// and every non-blank line after it, a line over MaxLineBytes as one.
func TestReadWithCountsTheRest(t *testing.T) {
	long := strings.Repeat("x", stream.MaxLineBytes+1)
	in := `{"id":"a"}` + "\n" + `{"id":"b"}` + "\n\n" + `not json` + "\n" + long + "\n" + `{"id":"c"}`
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan stream.Line)
	done := make(chan error, 1)
	go func() { done <- stream.ReadWith(ctx, strings.NewReader(in), out, stream.ReadOptions{CountRest: true}) }()
	if l := <-out; l.Request.ID != "a" {
		t.Fatalf("first line %+v", l)
	}
	cancel()
	var st *stream.Stopped
	if err := <-done; !errors.As(err, &st) || !st.Counted || st.Unread != 4 || !errors.Is(err, context.Canceled) {
		t.Fatalf("ReadWith: %v (%+v), want 4 lines counted", err, st)
	}
}

// A line whose id is unusable is named so that no valid id can be the
// same: a real job "line-2" (and "line-3") and the bad line 2 get three
// distinct ids, and the bad line's is no valid id.
func TestBadLineIDCannotCollide(t *testing.T) {
	in := `{"id":"line-2","generate":{"seed":1}}` + "\n" + `{"id":"","generate":{"seed":2}}` + "\n" + `{"id":"line-3"` + "\n" + `{"id":"line-1","generate":{"seed":3}}`
	out := make(chan stream.Line, 10)
	if err := stream.Read(context.Background(), strings.NewReader(in), out); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for l := range out {
		if prev, dup := seen[l.Request.ID]; dup {
			t.Errorf("lines %d and %d share the id %q", prev, l.Number, l.Request.ID)
		}
		seen[l.Request.ID] = l.Number
		if l.Err != nil && stream.ValidID(l.Request.ID) {
			t.Errorf("bad line %d named %q, a valid id", l.Number, l.Request.ID)
		}
		if l.Err == nil && strings.HasPrefix(l.Request.ID, "#") {
			t.Errorf("good line %d renamed %q", l.Number, l.Request.ID)
		}
	}
	if len(seen) != 4 {
		t.Errorf("%d ids for 4 lines: %v", len(seen), seen)
	}
}
