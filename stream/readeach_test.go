package stream_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/stream"
)

// ReadEach hands every line to take in the reading goroutine; when take
// refuses one, it stops as ReadWith does, counting the refused line and the
// rest of the input among the unread, and every line it hands over has its
// id checked (IDChecked), a bad one with Err set.
func TestReadEachStopsWhenTakeRefuses(t *testing.T) {
	in := `{"id":"a"}` + "\n" + `{"id":".bad"}` + "\n" + `{"id":"c"}` + "\n\n" + `{"id":"d"}` + "\n" + `{"id":"e"}` + "\n"
	var got []stream.Line
	err := stream.ReadEach(context.Background(), strings.NewReader(in), func(l stream.Line) bool {
		if len(got) == 3 {
			return false // refuses d
		}
		got = append(got, l)
		return true
	}, stream.ReadOptions{CountRest: true})
	var st *stream.Stopped
	if !errors.As(err, &st) || st.Unread != 2 || !st.Counted {
		t.Fatalf("ReadEach: %v (%+v), want stopped with d and e unread, counted", err, st)
	}
	if len(got) != 3 || got[0].Request.ID != "a" || got[2].Request.ID != "c" {
		t.Fatalf("taken %+v", got)
	}
	for _, l := range got {
		if !l.IDChecked {
			t.Errorf("line %d: IDChecked not set", l.Number)
		}
	}
	if got[1].Err == nil || !strings.Contains(got[1].Err.Error(), "invalid id") || got[0].Err != nil || got[2].Err != nil {
		t.Errorf("errors %v, %v, %v: want only the second line's id refused", got[0].Err, got[1].Err, got[2].Err)
	}
	// taken to the end: no error
	n := 0
	if err := stream.ReadEach(context.Background(), strings.NewReader(in), func(stream.Line) bool { n++; return true }, stream.ReadOptions{}); err != nil || n != 5 {
		t.Fatalf("ReadEach to the end: %v after %d lines, want nil after 5", err, n)
	}
}
