package fleet_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// chainDir is a mulchain circuit of about 200 constraints, set up once.
var chainDir = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "zkpipe-fleet-test-")
	if err != nil {
		return "", err
	}
	dir = filepath.Join(dir, "chain")
	_, err = gnarksrc.Setup("mulchain", 200, dir)
	return dir, err
})

func TestMain(m *testing.M) {
	code := m.Run()
	if dir, err := chainDir(); err == nil && dir != "" {
		os.RemoveAll(filepath.Dir(dir))
	}
	os.Exit(code)
}

// chainProof is a real proof of circuit chain (a generated witness) and its
// public witness, in the files' encodings: what the fake prover writes for
// every job, so that zkpipe results, which verifies each proof, accepts it.
var chainProof = sync.OnceValues(func() ([2][]byte, error) {
	dir, err := chainDir()
	if err != nil {
		return [2][]byte{}, err
	}
	c, err := gnarksrc.LoadDir(dir)
	if err != nil {
		return [2][]byte{}, err
	}
	src := c.Source.(*gnarksrc.Source)
	w, err := src.Witness(1)
	if err != nil {
		return [2][]byte{}, err
	}
	pk, err := src.WholeProvingKey()
	if err != nil {
		return [2][]byte{}, err
	}
	proof, err := groth16.Prove(src.R1CS(), pk, w)
	if err != nil {
		return [2][]byte{}, err
	}
	var pb bytes.Buffer
	if _, err := proof.WriteTo(&pb); err != nil {
		return [2][]byte{}, err
	}
	pub, err := w.Public()
	if err != nil {
		return [2][]byte{}, err
	}
	wb, err := pub.MarshalBinary()
	return [2][]byte{pb.Bytes(), wb}, err
})

func realProof(t *testing.T) (proof, public []byte) {
	t.Helper()
	p, err := chainProof()
	if err != nil {
		t.Fatal(err)
	}
	return p[0], p[1]
}

func circuitDir(t testing.TB) string {
	t.Helper()
	dir, err := chainDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// startQueue runs an embedded NATS server on a free port and opens the queue.
func startQueue(t testing.TB, ackWait time.Duration) (*fleet.Queue, string) {
	t.Helper()
	srv, err := fleet.StartServer(fleet.ServerOptions{Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return openQueue(t, srv.ClientURL(), ackWait), srv.ClientURL()
}

func openQueue(t testing.TB, url string, ackWait time.Duration) *fleet.Queue {
	t.Helper()
	conn, err := fleet.Connect(url, fleet.Auth{}, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.NC.Close() })
	q, err := fleet.Setup(context.Background(), conn, fleet.Config{AckWait: ackWait})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// fakeProver runs no pipeline: it writes the same real proof of circuit
// chain (chainProof) as ID.proof and ID.public to each job's Out, one job
// at a time, after delay (or when gate lets it).
type fakeProver struct {
	cap   int
	delay time.Duration
	gate  chan struct{}
	// slowRead: each read of a witness takes this long (a source decoding
	// a witness of gigabytes as it arrives).
	slowRead time.Duration
	// hostFault fails every job as a lost GPU or a full disk would:
	// Retryable, not the job's fault.
	hostFault bool

	mu       sync.Mutex
	circuits map[string]*stages.Circuit
	order    []string          // ids in the order they entered
	held     int64             // witness bytes reserved with HoldInput and not yet released
	holds    map[string]int64  // bytes asked of HoldInput, by what
	reads    map[string]readOf // each job's witness as the prover read it
}

// readSlowly reads r 128 KiB at a time, each read after d.
func readSlowly(r io.Reader, d time.Duration) ([]byte, error) {
	var out []byte
	buf := make([]byte, 128<<10)
	for {
		time.Sleep(d)
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// readOf is a witness as the fake prover read it: through what reader, and
// its bytes' SHA-256.
type readOf struct {
	reader string
	sum    [32]byte
	n      int
}

func newFake(t testing.TB, capacity int) *fakeProver {
	return &fakeProver{cap: capacity, circuits: map[string]*stages.Circuit{}}
}

func (f *fakeProver) AddCircuit(c *stages.Circuit) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.circuits[c.Name] = c
	return nil
}

func (f *fakeProver) HasCircuit(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.circuits[name] != nil
}

func (f *fakeProver) Circuits() []*stages.Circuit {
	f.mu.Lock()
	defer f.mu.Unlock()
	var cs []*stages.Circuit
	for _, c := range f.circuits {
		cs = append(cs, c)
	}
	return cs
}

func (f *fakeProver) HoldInput(_ context.Context, what string, n int64) (*mem.Reservation, error) {
	f.mu.Lock()
	if f.holds == nil {
		f.holds = map[string]int64{}
	}
	f.holds[what] += n
	f.held += n
	f.mu.Unlock()
	return mem.NewReservation(n, func(b int64) {
		f.mu.Lock()
		f.held -= b
		f.mu.Unlock()
	}), nil
}

// heldBytes is what HoldInput reserved and was not given back.
func (f *fakeProver) heldBytes() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.held
}

func (f *fakeProver) Capacity() int { return f.cap }

func (f *fakeProver) entered() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.order...)
}

func (f *fakeProver) Run(ctx context.Context, jobs <-chan stream.Line, emit func(stream.Result) error) error {
	for l := range jobs {
		f.mu.Lock()
		f.order = append(f.order, l.Request.ID)
		f.mu.Unlock()
		if f.gate != nil {
			select {
			case <-f.gate:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		time.Sleep(f.delay)
		id := l.Request.ID
		res := stream.Result{ID: id, Circuit: l.Request.Circuit, Stages: []stream.StageTime{{Stage: "parse", RunMS: 1, EndedAtMS: 1}}}
		if l.Request.Witness != "" {
			var b []byte
			var err error
			if r, _, oerr := l.Witness.Open(ctx); oerr == nil {
				typ := fmt.Sprintf("%T", r)
				if f.slowRead > 0 {
					b, err = readSlowly(r, f.slowRead)
				} else {
					b, err = io.ReadAll(r)
				}
				f.mu.Lock()
				if f.reads == nil {
					f.reads = map[string]readOf{}
				}
				f.reads[id] = readOf{reader: typ, sum: sha256.Sum256(b), n: len(b)}
				f.mu.Unlock()
			} else {
				err = fmt.Errorf("no witness in hand (%v)", oerr)
			}
			l.Witness.Release() // as a source does, once decoded
			if err != nil || !bytes.Equal(b, fakeWitness("witness of "+id)) {
				if len(b) > 256 {
					b = b[:256] // a line's error need not carry half a megabyte
				}
				res.Error = fmt.Sprintf("job %s: parse: witness %q: %v", id, b, err)
			}
		}
		if f.hostFault {
			res.Error, res.Retryable = fmt.Sprintf("job %s: msm-h: cuda:0: device lost", id), true
		}
		if res.Error == "" {
			p, err := chainProof()
			if err != nil {
				return err
			}
			if res.Public, err = l.Out.Write(id+".public", p[1]); err != nil {
				return err
			}
			if res.Proof, err = l.Out.Write(id+".proof", p[0]); err != nil {
				return err
			}
		}
		if err := emit(res); err != nil {
			return err
		}
	}
	return nil
}

// runWorker runs a worker over p until the test ends.
func runWorker(t testing.TB, q *fleet.Queue, p fleet.Prover) *fleet.Worker {
	t.Helper()
	w := fleet.NewWorker(q, p, fleet.WorkerOptions{Cache: t.TempDir(), Poll: 100 * time.Millisecond, Log: testLog{t}})
	runUntilEnd(t, w)
	return w
}

// runUntilEnd runs w until the test ends, failing it if Run ends with an
// error but the cancel's.
func runUntilEnd(t testing.TB, w *fleet.Worker) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("worker: %v", err)
		}
	})
}

type testLog struct{ t testing.TB }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func submit(t testing.TB, q *fleet.Queue, priority string, lines ...string) []fleet.Submitted {
	t.Helper()
	var out []fleet.Submitted
	refused, err := fleet.Submit(context.Background(), q, strings.NewReader(strings.Join(lines, "\n")),
		fleet.SubmitOptions{Priority: priority}, func(s fleet.Submitted) { out = append(out, s) })
	if err != nil {
		t.Fatal(err)
	}
	if refused > 0 {
		t.Fatalf("%d refused: %+v", refused, out)
	}
	return out
}

func genJob(id string) string { return fmt.Sprintf(`{"id":%q,"generate":{"seed":1}}`, id) }

// waitResults waits until n ids have results and collects them.
func waitResults(t testing.TB, q *fleet.Queue, n int, timeout time.Duration) map[string]stream.Result {
	t.Helper()
	// Each result line published wakes the wait (subscribed before the
	// first look, so none is missed); the stream may count it a moment
	// after the line arrives here, so it also looks again every 50 ms.
	lines, err := q.Conn.NC.SubscribeSync("zkpipe.results.>")
	if err == nil {
		err = q.Conn.NC.Flush()
	}
	if err != nil {
		t.Fatal(err)
	}
	defer lines.Unsubscribe()
	deadline := time.Now().Add(timeout)
	for {
		info, err := q.Results.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if int(info.State.Msgs) >= n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d results after %s, want %d", info.State.Msgs, timeout, n)
		}
		lines.NextMsg(min(50*time.Millisecond, time.Until(deadline)))
	}
	out := map[string]stream.Result{}
	dir := t.TempDir()
	err = fleet.Collect(context.Background(), q, fleet.ResultsOptions{Out: dir}, func(r stream.Result) error {
		if _, dup := out[r.ID]; dup {
			t.Errorf("two result lines for %s", r.ID)
		}
		out[r.ID] = r
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// settled waits until the jobs stream is empty: every job acked or terminated.
func settled(t testing.TB, q *fleet.Queue) {
	t.Helper()
	for i := 0; ; i++ {
		info, err := q.Jobs.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs == 0 {
			return
		}
		if i > 100 {
			t.Fatalf("%d jobs still in the queue", info.State.Msgs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitPending waits until each named priority's consumer counts its jobs.
func waitPending(t *testing.T, q *fleet.Queue, want map[string]int) {
	t.Helper()
	for name, n := range want {
		c, err := q.Jobs.Consumer(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; ; i++ {
			info, err := c.Info(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if int(info.NumPending) == n {
				break
			}
			if i > 100 {
				t.Fatalf("consumer %s counts %d jobs, want %d", name, info.NumPending, n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func pushChain(t testing.TB, q *fleet.Queue) {
	t.Helper()
	if _, err := fleet.PushDir(context.Background(), q, circuitDir(t)); err != nil {
		t.Fatal(err)
	}
}

func TestSubmitWorkCollect(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	wdir := t.TempDir()
	var lines []string
	for i := range 5 {
		id := fmt.Sprintf("w%d", i)
		p := filepath.Join(wdir, id+".witness")
		os.WriteFile(p, fakeWitness("witness of "+id), 0o644)
		lines = append(lines, fmt.Sprintf(`{"id":%q,"witness":%q}`, id, p))
	}
	lines = append(lines, genJob("g1"))
	for _, s := range submit(t, q, "", lines...) {
		if !s.Queued {
			t.Fatalf("not queued: %+v", s)
		}
	}
	runWorker(t, q, newFake(t, 4))
	res := waitResults(t, q, 6, 20*time.Second)
	proof, public := realProof(t)
	for id, r := range res {
		if r.Error != "" {
			t.Fatalf("%s: %s", id, r.Error)
		}
		b, err := os.ReadFile(r.Proof)
		if err != nil || !bytes.Equal(b, proof) {
			t.Errorf("%s: proof file %s: %q %v", id, r.Proof, b, err)
		}
		if b, _ := os.ReadFile(r.Public); !bytes.Equal(b, public) {
			t.Errorf("%s: public file %q", id, b)
		}
		if !strings.HasPrefix(r.VerifiedWith, "circuit store chain/circuit.vk") {
			t.Errorf("%s: verified with %q", id, r.VerifiedWith)
		}
	}
	settled(t, q)
	// The witnesses leave the store with their jobs (just after the ack).
	for deadline := waitEnd(t); ; {
		objs, err := q.Witness.List(context.Background())
		if errors.Is(err, jetstream.ErrNoObjectsFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("witness objects left: %d (%v)", len(objs), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A second submit of a proven id is not queued again.
	if s := submit(t, q, "", genJob("g1")); !s[0].Done {
		t.Errorf("resubmit of a proven id: %+v", s[0])
	}
}

func TestDuplicateSubmitDropped(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	s := submit(t, q, "normal", genJob("d1"))
	s = append(s, submit(t, q, "high", genJob("d1"))...)
	if !s[0].Queued || !s[1].Duplicate {
		t.Fatalf("same id twice: %+v", s)
	}
	info, _ := q.Jobs.Info(context.Background())
	if info.State.Msgs != 1 {
		t.Fatalf("%d jobs queued, want 1", info.State.Msgs)
	}
}

func TestStoredJobAnsweredWithoutProving(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	submit(t, q, "", genJob("s1"))
	f := newFake(t, 2)
	runWorker(t, q, f)
	first := waitResults(t, q, 1, 20*time.Second)["s1"]
	settled(t, q)
	// The same job again, as the server would redeliver it after a worker
	// died between publishing the result and acking: straight onto the
	// subject, past submit's check.
	if _, err := q.Conn.JS.Publish(context.Background(), "zkpipe.jobs.normal", []byte(genJob("s1"))); err != nil {
		t.Fatal(err)
	}
	settled(t, q)
	if got := f.entered(); len(got) != 1 {
		t.Fatalf("proved %v: the stored job was proven again", got)
	}
	again := waitResults(t, q, 1, 5*time.Second)["s1"]
	if again.Proof == "" || again.PublicInputs == nil && first.PublicInputs != nil {
		t.Fatalf("republished %+v", again)
	}
}

func TestBadJobsTerminated(t *testing.T) {
	q, _ := startQueue(t, 500*time.Millisecond)
	pushChain(t, q)
	submitRaw(t, q, "b1", "chain", []byte("not it")) // submit refuses it: a client that skips the check
	submit(t, q, "",
		`{"id":"b2","circuit":"nope","generate":{"seed":1}}`,
		genJob("ok1"))
	q.Conn.JS.Publish(context.Background(), "zkpipe.jobs.low", []byte(`{"id":"b3","bogus":1}`))
	q.Conn.JS.Publish(context.Background(), "zkpipe.jobs.low", []byte(`{"id":"b4","circuit":"chain","witness":"/etc/passwd"}`))
	f := newFake(t, 2)
	runWorker(t, q, f)
	res := waitResults(t, q, 5, 20*time.Second)
	settled(t, q)
	for id, want := range map[string]string{"b1": "witness", "b2": "no such circuit", "ok1": "", "#seq-4": "malformed job", "b4": "workers read no local paths"} {
		r, ok := res[id]
		if !ok {
			t.Errorf("no result for %s: %v", id, res)
			continue
		}
		if want == "" && r.Error != "" || want != "" && !strings.Contains(r.Error, want) {
			t.Errorf("%s: error %q, want %q", id, r.Error, want)
		}
	}
	// A failed job may be submitted again, once, within the duplicate window.
	again := submit(t, q, "", `{"id":"b2","circuit":"chain","generate":{"seed":1}}`)
	again = append(again, submit(t, q, "", `{"id":"b2","circuit":"chain","generate":{"seed":1}}`)...)
	if !again[0].Queued || again[1].Queued { // the second: a duplicate, or done already
		t.Errorf("resubmits of a failed job: %+v", again)
	}
	for deadline := waitEnd(t); ; {
		m, err := q.Results.GetLastMsgForSubject(context.Background(), "zkpipe.results.b2")
		if err != nil {
			t.Fatal(err)
		}
		var r stream.Result
		json.Unmarshal(m.Data, &r)
		if r.Error == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b2 resubmitted: still %s", r.Error)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Terminated, not redelivered. The jobs stream is a work queue, so once
	// settled (empty) no job is left to come back: no need to sit out ack
	// waits. A job redelivered before it was terminated shows in the counts.
	for _, p := range fleet.Priorities {
		c, _ := q.Jobs.Consumer(context.Background(), p)
		info, err := c.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if info.NumRedelivered > 0 || info.NumAckPending > 0 {
			t.Errorf("consumer %s: %d redelivered, %d pending", p, info.NumRedelivered, info.NumAckPending)
		}
	}
}

func TestPullsNoMoreThanCapacity(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	var lines []string
	for i := range 10 {
		lines = append(lines, genJob(fmt.Sprintf("c%d", i)))
	}
	submit(t, q, "", lines...)
	f := newFake(t, 3)
	f.gate = make(chan struct{})
	runWorker(t, q, f)
	pending := func() int {
		c, _ := q.Jobs.Consumer(context.Background(), "normal")
		info, err := c.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return info.NumAckPending
	}
	for deadline := waitEnd(t); pending() < 3 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // time to pull more, if it would
	if n := pending(); n != 3 {
		t.Fatalf("%d jobs pulled by a worker of capacity 3 whose prover is stuck", n)
	}
	for range 10 {
		f.gate <- struct{}{}
		if n := pending(); n > 3 {
			t.Fatalf("%d jobs pulled, capacity 3", n)
		}
	}
	waitResults(t, q, 10, 20*time.Second)
}

func TestHighBeforeNormal(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	var normal, high []string
	for i := range 6 {
		normal = append(normal, genJob(fmt.Sprintf("n%d", i)))
		high = append(high, genJob(fmt.Sprintf("h%d", i)))
	}
	submit(t, q, "low", genJob("l0"))
	submit(t, q, "normal", normal...)
	submit(t, q, "high", high...)
	// The order holds among jobs waiting when the worker fetches: a job the
	// server has stored but its consumer does not count yet is not one (a
	// fetch right after the submit once took n0 before the high jobs).
	waitPending(t, q, map[string]int{"high": 6, "normal": 6, "low": 1})
	f := newFake(t, 1)
	runWorker(t, q, f)
	waitResults(t, q, 13, 20*time.Second)
	got := strings.Join(f.entered(), " ")
	if want := "h0 h1 h2 h3 h4 h5 n0 n1 n2 n3 n4 n5 l0"; got != want {
		t.Fatalf("order %s, want %s", got, want)
	}
}

func TestHeartbeatKeepsLongJob(t *testing.T) {
	q, _ := startQueue(t, time.Second)
	pushChain(t, q)
	submit(t, q, "", genJob("long"))
	f := newFake(t, 1)
	f.delay = 3500 * time.Millisecond // three and a half ack waits
	runWorker(t, q, f)
	waitResults(t, q, 1, 20*time.Second)
	settled(t, q)
	c, _ := q.Jobs.Consumer(context.Background(), "normal")
	info, _ := c.Info(context.Background())
	if info.NumRedelivered > 0 || len(f.entered()) != 1 {
		t.Fatalf("a job longer than the ack wait was redelivered (%d, entered %v)", info.NumRedelivered, f.entered())
	}
}

func TestOpenListenerRefused(t *testing.T) {
	_, err := fleet.StartServer(fleet.ServerOptions{Listen: "0.0.0.0:0", StoreDir: t.TempDir()})
	if !errors.Is(err, fleet.ErrOpenListener) {
		t.Fatalf("open listener without auth: %v", err)
	}
	srv, err := fleet.StartServer(fleet.ServerOptions{Listen: "0.0.0.0:0", StoreDir: t.TempDir(), Token: "s3cret"})
	if err != nil {
		t.Fatalf("with a token: %v", err)
	}
	defer srv.Shutdown()
	if _, err := fleet.Connect(srv.ClientURL(), fleet.Auth{}, "test"); err == nil {
		t.Fatal("connected without the token")
	}
	c, err := fleet.Connect(srv.ClientURL(), fleet.Auth{Token: "s3cret"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	c.NC.Close()
}

// Deliveries lost while the job was not running alone (two fetches that
// nobody answers, as if two workers died holding it) do not use up
// MaxDeliveries: the job may be the innocent that a killer's worker took
// down with it. It runs alone on its next delivery, and is proven. Before,
// it was answered "delivered 3 times" without being tried.
func TestLostDeliveriesCountOnlyWhenAlone(t *testing.T) {
	q, _ := startQueue(t, 200*time.Millisecond)
	pushChain(t, q)
	submit(t, q, "", genJob("doomed"))
	c, err := q.Jobs.Consumer(context.Background(), "normal")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		b, err := c.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for range b.Messages() {
			n++
		}
		if n != 1 {
			t.Fatalf("fetched %d", n)
		}
		// Not acked: the next fetch (ours, then the worker's) waits for the
		// server to redeliver it, past the ack wait.
	}
	f := newFake(t, 2)
	w := fleet.NewWorker(q, f, fleet.WorkerOptions{Cache: t.TempDir(), MaxDeliveries: 2, Poll: 50 * time.Millisecond, Log: testLog{t}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, ctx) }()
	defer func() { cancel(); <-done }()
	if r := waitResults(t, q, 1, 10*time.Second)["doomed"]; r.Error != "" {
		t.Fatalf("result %+v", r)
	}
	settled(t, q)
	noneLeft(t, q)
}

// A worker whose jobs fail for reasons of its own (Retryable results) hands
// them back to the queue instead of failing them, and stops pulling after
// three in a row; a healthy worker then proves them.
func TestHostFaultsGoBackToTheQueue(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	submit(t, q, "", genJob("f1"), genJob("f2"), genJob("f3"), genJob("f4"))
	broken := newFake(t, 1)
	broken.hostFault = true
	w := fleet.NewWorker(q, broken, fleet.WorkerOptions{Cache: t.TempDir(), Poll: 100 * time.Millisecond, Log: testLog{t}})
	ctx, cancel := context.WithDeadline(context.Background(), waitEnd(t))
	defer cancel()
	err := w.Run(ctx, ctx)
	if err == nil || !strings.Contains(err.Error(), "stopped taking jobs") {
		t.Fatalf("broken worker: Run = %v, want it to stop taking jobs", err)
	}
	if info, _ := q.Results.Info(context.Background()); info.State.Msgs != 0 {
		t.Fatalf("%d results published by a worker whose failures were its own", info.State.Msgs)
	}
	runWorker(t, q, newFake(t, 4))
	for id, r := range waitResults(t, q, 4, 20*time.Second) {
		if r.Error != "" {
			t.Errorf("%s: %s", id, r.Error)
		}
	}
}
