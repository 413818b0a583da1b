package fleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/stream"
)

// TestBadIDIsNotAnsweredUnderAValidOne: a message whose id is unusable is
// answered under "#seq-N", which no valid id can be. Before, it was
// answered as "seq-N", a valid id: a proven job of that id had its result
// replaced by the bad message's error (issue 45, row 4).
func TestBadIDIsNotAnsweredUnderAValidOne(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	ctx := context.Background()
	runWorker(t, q, newFake(t, 2))
	// Jobs whose valid ids are what the bad messages would have been named
	// after their stream sequences: 1 and 2 are these two, 3 to 6 the bad.
	submit(t, q, "", genJob("seq-3"), genJob("seq-5"))
	waitResults(t, q, 2, 30*time.Second)
	bad := []string{`{"id":"../x","circuit":"chain","generate":{"seed":1}}`, `{"id":"","generate":{"seed":1}}`,
		`{"id":"a b","generate":{"seed":1}}`, `{not json`}
	for _, b := range bad {
		if _, err := q.Conn.JS.Publish(ctx, "zkpipe.jobs.normal", []byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	res := waitResults(t, q, 2+len(bad), 30*time.Second)
	for _, id := range []string{"seq-3", "seq-5"} {
		if r := res[id]; r.Error != "" || r.Proof == "" {
			t.Errorf("%s, proven before, now: %+v", id, r)
		}
	}
	for i := range bad {
		id := fmt.Sprintf("#seq-%d", 3+i)
		r, ok := res[id]
		if !ok || r.Error == "" || !strings.Contains(r.Error, "job "+id+": ") {
			t.Errorf("bad message %d: %+v (present %v), want an error under %s", i, r, ok, id)
		}
	}
	// and the stored line of a proven id is its own
	m, err := q.Results.GetLastMsgForSubject(ctx, "zkpipe.results.seq-3")
	if err != nil {
		t.Fatal(err)
	}
	var r stream.Result
	if err := json.Unmarshal(m.Data, &r); err != nil || r.Error != "" {
		t.Errorf("zkpipe.results.seq-3: %s (%v)", m.Data, err)
	}
}
