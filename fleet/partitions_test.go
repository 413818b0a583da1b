package fleet_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

// requestLine is a request of k generate partitions (seeds from seed on).
func requestLine(id string, k, seed int) string {
	var parts []string
	for i := range k {
		parts = append(parts, fmt.Sprintf(`{"generate":{"seed":%d}}`, seed+i))
	}
	return fmt.Sprintf(`{"id":%q,"circuit":"chain","partitions":[%s]}`, id, strings.Join(parts, ","))
}

// TestPartitionRequestThroughTheFleet: a request of 6 partitions is
// queued as 6 jobs that two workers share; it gets one result line, ok,
// listing its 6 partitions in order, each proof stored under ID/i, checked
// and written by Collect as prove writes them (OUT/ID/i.proof), and
// verified by gnark; the request's record is gone once it is answered.
// Before, submit refused it ("the fleet proves single jobs only").
func TestPartitionRequestThroughTheFleet(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	a, b := newFake(t, 2), newFake(t, 2)
	a.delay, b.delay = 20*time.Millisecond, 20*time.Millisecond
	runWorker(t, q, a)
	runWorker(t, q, b)
	got := submit(t, q, "", requestLine("r1", 6, 1), genJob("g1"))
	if !got[0].Queued || got[0].ID != "r1" {
		t.Fatalf("submit: %+v", got)
	}
	out := t.TempDir()
	res := map[string]stream.Result{}
	waitResults(t, q, 2, 30*time.Second)
	if err := fleet.Collect(t.Context(), q, fleet.ResultsOptions{Out: out}, func(r stream.Result) error { res[r.ID] = r; return nil }); err != nil {
		t.Fatal(err)
	}
	r := res["r1"]
	if r.Error != "" || len(r.Partitions) != 6 || !strings.HasPrefix(r.VerifiedWith, "circuit store chain/") {
		t.Fatalf("r1: %+v", r)
	}
	vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(circuitDir(t), gnarksrc.VKFile))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range r.Partitions {
		if p.Index != i || p.ID != fmt.Sprintf("r1/%d", i) || p.Proof != filepath.Join(out, "r1", fmt.Sprintf("%d.proof", i)) {
			t.Errorf("partition %d: %+v", i, p)
			continue
		}
		if err := gnarksrc.VerifyFiles(vk, p.Proof, p.Public); err != nil {
			t.Errorf("partition %d: %v", i, err)
		}
	}
	// both workers took partitions (each holds two at most)
	na, nb := len(a.entered()), len(b.entered())
	if na == 0 || nb == 0 || na+nb != 7 {
		t.Errorf("worker a proved %d, b %d; want 7 in all, shared", na, nb)
	}
	settled(t, q)
	noneLeft(t, q)
	if keys, err := q.Requests.ListKeys(t.Context()); err == nil {
		for k := range keys.Keys() {
			t.Errorf("request record %s left", k)
		}
	}
	// submitted again: done, not queued
	again := submit(t, q, "", requestLine("r1", 6, 1))
	if !again[0].Done {
		t.Errorf("a proven request submitted again: %+v", again)
	}
}

// TestPoisonPartitionFailsItsRequestAlone: a request whose partition 1 has
// a witness the prover rejects is answered once, failed, naming partition
// 1 as prove names it, with the others' proofs written; a job beside it is
// proven.
func TestPoisonPartitionFailsItsRequestAlone(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	runWorker(t, q, newFake(t, 2))
	dir := t.TempDir()
	w := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, fakeWitness(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	line := fmt.Sprintf(`{"id":"r2","circuit":"chain","partitions":[{"witness":%q},{"witness":%q},{"generate":{"seed":9}}]}`,
		w("0.witness", "witness of r2/0"), w("1.witness", "not what the fake wants"))
	submit(t, q, "", line, genJob("g2"))
	res := waitResults(t, q, 2, 30*time.Second)
	r := res["r2"]
	want := "job r2: partition 1 of 3 failed (the others' proofs are written); first: job r2/1: parse: witness"
	if !strings.HasPrefix(r.Error, want) || len(r.Partitions) != 3 || r.Partitions[0].Error != "" || r.Partitions[1].Error == "" || r.Partitions[2].Proof == "" {
		t.Errorf("r2: %+v\nwant an error starting %q", r, want)
	}
	if g := res["g2"]; g.Error != "" {
		t.Errorf("g2: %s", g.Error)
	}
	settled(t, q)
	noneLeft(t, q)
}

// TestBadRequestsRefusedAtSubmit: submit refuses a request of partitions
// that prove refuses, with stream.Request.CheckPartitions's messages, and
// queues nothing of it; a worker answers a request that came as one
// message (another tool's) with an error, proving none of it.
func TestBadRequestsRefusedAtSubmit(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	var many []string
	for i := range fleet.MaxPartitions + 1 {
		many = append(many, fmt.Sprintf(`{"generate":{"seed":%d}}`, i))
	}
	for line, want := range map[string]string{
		`{"id":"e1","circuit":"chain","partitions":[]}`:                                                     "partitions: none given",
		`{"id":"e2","circuit":"chain","partitions":[{"generate":{"seed":1}},{"generate":{"seed":1}}]}`:      "partition 1: generate seed 1 is also partition 0's",
		`{"id":"e3","circuit":"chain","generate":{"seed":1},"partitions":[{"generate":{"seed":2}}]}`:        "a request of partitions takes its witnesses in its partitions",
		`{"id":"e4","circuit":"chain","partitions":[{}]}`:                                                   "partition 0: no witness",
		`{"id":"e5","circuit":"chain","partitions":[` + strings.Join(many, ",") + `]}`:                      "more than the 64 a request may have",
		`{"id":"e6","circuit":"chain","partitions":[{"witness":"/nonexistent/w"},{"generate":{"seed":1}}]}`: "no such file",
	} {
		var out []fleet.Submitted
		refused, err := fleet.Submit(t.Context(), q, strings.NewReader(line), fleet.SubmitOptions{}, func(s fleet.Submitted) { out = append(out, s) })
		if err != nil {
			t.Fatal(err)
		}
		if refused != 1 || out[0].Queued || out[0].Err == nil || !strings.Contains(out[0].Err.Error(), want) || !strings.HasPrefix(out[0].Err.Error(), "line 1: job e") {
			t.Errorf("%.60s…: %+v, want refused with %q", line, out, want)
		}
	}
	info, err := q.Jobs.Info(t.Context())
	if err != nil || info.State.Msgs != 0 {
		t.Fatalf("%v; %d messages queued by refused requests", err, info.State.Msgs)
	}
	if _, err := q.Conn.JS.Publish(t.Context(), "zkpipe.jobs.normal",
		[]byte(`{"id":"r9","circuit":"chain","partitions":[{"generate":{"seed":1}}]}`)); err != nil {
		t.Fatal(err)
	}
	f := newFake(t, 2)
	runWorker(t, q, f)
	r := waitResults(t, q, 1, 20*time.Second)["r9"]
	if !strings.Contains(r.Error, "job r9: a request of partitions (1) in one job message: zkpipe submit queues one message per partition") {
		t.Errorf("r9: %+v", r)
	}
	if n := len(f.entered()); n != 0 {
		t.Errorf("the prover got %d jobs", n)
	}
}

// TestPartitionHeadersChecked: a partition message whose headers do not
// match its id (another tool's, or tampered) is answered as a bad job
// under #seq-N, proving nothing.
func TestPartitionHeadersChecked(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	f := newFake(t, 2)
	runWorker(t, q, f)
	for i, h := range []map[string]string{
		{"Zkpipe-Request": "r1", "Zkpipe-Partition": "1", "Zkpipe-Partitions": "2"},  // id r1/0, header 1
		{"Zkpipe-Request": "r1", "Zkpipe-Partition": "0", "Zkpipe-Partitions": "65"}, // too many
		{"Zkpipe-Request": "../r", "Zkpipe-Partition": "0", "Zkpipe-Partitions": "1"},
		{"Zkpipe-Request": "r1", "Zkpipe-Partition": "x", "Zkpipe-Partitions": "1"},
	} {
		m := &natsMsg{subject: "zkpipe.jobs.normal", data: `{"id":"r1/0","circuit":"chain","generate":{"seed":1}}`, header: h}
		if err := m.publish(q); err != nil {
			t.Fatalf("%d: %v", i, err)
		}
	}
	res := waitResults(t, q, 4, 20*time.Second)
	for i := range 4 {
		id := fmt.Sprintf("#seq-%d", i+1)
		if r := res[id]; r.Error == "" || !strings.Contains(r.Error, "job "+id+": ") {
			t.Errorf("%s: %+v", id, r)
		}
	}
	if n := len(f.entered()); n != 0 {
		t.Errorf("the prover got %d jobs", n)
	}
}

// TestDuplicateAnswersCounted: a request's line and a job's published a
// second time (a worker answering again after a server's death, past the
// duplicate window) are each taken once by Collect; the second is
// reported to ResultsOptions.Duplicate with the same statement.
func TestDuplicateAnswersCounted(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	runWorker(t, q, newFake(t, 2))
	submit(t, q, "", requestLine("r3", 3, 1), genJob("g3"))
	waitResults(t, q, 2, 30*time.Second)
	var mu sync.Mutex
	var dups []string
	var lines []stream.Result
	count := func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		return len(lines), len(dups)
	}
	// follow, so that the lines published again are read behind the first
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- fleet.Collect(ctx, q, fleet.ResultsOptions{Out: t.TempDir(), Follow: true, Duplicate: func(first, again stream.Result) {
			mu.Lock()
			defer mu.Unlock()
			if fleet.SameStatement(first, again) {
				dups = append(dups, again.ID)
			}
		}}, func(r stream.Result) error {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, r)
			return nil
		})
	}()
	for deadline := waitEnd(t); ; time.Sleep(20 * time.Millisecond) {
		if n, _ := count(); n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Collect took no 2 lines by the test's deadline")
		}
	}
	for _, id := range []string{"r3", "g3"} {
		m, err := q.Results.GetLastMsgForSubject(t.Context(), "zkpipe.results."+id)
		if err != nil {
			t.Fatal(err)
		}
		var r stream.Result
		json.Unmarshal(m.Data, &r)
		r.TotalMS++ // another answer of the same statement
		data, _ := json.Marshal(r)
		if _, err := q.Conn.JS.Publish(t.Context(), "zkpipe.results."+id, data, jetstream.WithMsgID(id+"@again")); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := waitEnd(t); ; time.Sleep(20 * time.Millisecond) {
		if _, d := count(); d == 2 || time.Now().After(deadline) {
			break
		}
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if n, d := count(); n != 2 || d != 2 {
		t.Errorf("%d lines taken, %d duplicates %v; want 2 and 2 (r3, g3)", n, d, dups)
	}
}

// natsMsg is a message to publish with headers, as another tool might.
type natsMsg struct {
	subject, data string
	header        map[string]string
}

func (m *natsMsg) publish(q *fleet.Queue) error {
	msg := nats.NewMsg(m.subject)
	msg.Data = []byte(m.data)
	for k, v := range m.header {
		msg.Header.Set(k, v)
	}
	_, err := q.Conn.JS.PublishMsg(context.Background(), msg)
	return err
}
