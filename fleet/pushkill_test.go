package fleet_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

// bigDir is a mulchain circuit of 2^14 constraints named big (a 6 MB
// proving key: a push of it takes long enough to be cut short).
var bigDir = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "zkpipe-fleet-big-")
	if err != nil {
		return "", err
	}
	dir = filepath.Join(dir, "big")
	_, err = gnarksrc.Setup("mulchain", 1<<14, dir)
	return dir, err
})

func bigCircuit(t *testing.T) string {
	t.Helper()
	dir, err := bigDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// logBuffer is a worker's log, kept for the test to read.
type logBuffer struct {
	t  *testing.T
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.b.Write(p)
	l.mu.Unlock()
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestPushKilledMidwayIsWaitedFor: a real circuit push killed with SIGKILL
// midway (stopped once it has stored a few chunks) leaves the circuit
// incomplete; a job of it goes back to the queue, neither as a fault of the
// worker's nor as a lost delivery, the worker's log naming the push and the
// files it did not store; pushed again, the job is proven. Before (issue
// 45, row 9), each hand-back counted as a fault of the worker's, and the
// job died after --max-host-faults of them as "faults of their own (a lost
// GPU, a full disk?)".
func TestPushKilledMidwayIsWaitedFor(t *testing.T) {
	bin := binary(t)
	dir := bigCircuit(t)
	q, url := startQueue(t, 5*time.Second)
	ctx := context.Background()

	// Stop the push at its third chunk (the marker's, circuit.json's, then
	// circuit.pk's first), then kill it.
	var chunks atomic.Int32
	stopped := make(chan struct{})
	var pid atomic.Int32
	sub, err := q.Conn.NC.Subscribe("$O."+fleet.CircuitBucket+".C.>", func(*nats.Msg) {
		if chunks.Add(1) == 3 {
			for pid.Load() == 0 {
				time.Sleep(time.Millisecond)
			}
			syscall.Kill(int(pid.Load()), syscall.SIGSTOP)
			close(stopped)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	q.Conn.NC.Flush()
	p := start(t, bin, "push", "circuit", "push", "--nats", url, dir)
	pid.Store(int32(p.cmd.Process.Pid))
	select {
	case <-stopped:
	case <-p.done:
		t.Fatalf("the push ended before it was stopped (%d chunks seen)", chunks.Load())
	case <-time.After(time.Until(waitEnd(t))):
		t.Fatal("the push stored no 3 chunks by the test's deadline")
	}
	sub.Unsubscribe()
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	have := map[string]bool{}
	infos, _ := q.Circuits.List(ctx)
	for _, in := range infos {
		have[in.Name] = true
	}
	if !have["big/circuit.push"] || have["big/"+gnarksrc.VKFile] {
		t.Fatalf("the push was not cut short before circuit.vk: the store holds %v", have)
	}

	log := &logBuffer{t: t}
	w := fleet.NewWorker(q, newFake(t, 2), fleet.WorkerOptions{Cache: t.TempDir(), Poll: 50 * time.Millisecond, Log: log, MaxHostFaults: 1})
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx, wctx) }()
	defer func() { cancel(); <-done }()
	submit(t, q, "", `{"id":"early","circuit":"big","generate":{"seed":1}}`)

	// two hand-backs: a worker with --max-host-faults 1 would have failed
	// it at its second delivery, were they faults
	var hb struct{ Back, Faults, Solo int }
	for deadline := waitEnd(t); hb.Back < 2; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("by the test's deadline: %+v", hb)
		}
		if e, err := q.HandBacks.Get(ctx, "1"); err == nil {
			json.Unmarshal(e.Value(), &hb)
		}
		if m, err := q.Results.GetLastMsgForSubject(ctx, "zkpipe.results.early"); err == nil {
			t.Fatalf("answered while its circuit is half pushed: %s", m.Data)
		}
	}
	if hb.Faults != 0 || hb.Solo != 0 {
		t.Errorf("hand-back count %+v: want no faults, no runs alone", hb)
	}
	l := log.String()
	for _, want := range []string{"job early: waits for its circuit: circuit big: incomplete in the store",
		"a push of it by process " + itoa(p.cmd.Process.Pid), ": it has no ", "circuit.vk yet"} {
		if !strings.Contains(l, want) {
			t.Errorf("the worker's log does not say %q", want)
		}
	}
	if got, _ := fleet.Circuits(ctx, q); len(got) != 0 {
		t.Errorf("listed while half pushed: %v", got)
	}

	run(t, bin, "", "circuit", "push", "--nats", url, dir)
	for deadline := waitEnd(t); ; time.Sleep(50 * time.Millisecond) {
		m, err := q.Results.GetLastMsgForSubject(ctx, "zkpipe.results.early")
		if err == nil {
			var r stream.Result
			if json.Unmarshal(m.Data, &r); r.Error != "" || r.Proof == "" {
				t.Fatalf("after the push: %s", m.Data)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("not answered by the test's deadline after the push")
		}
	}
}

// commandOutput runs zkpipe, returning its output and error.
func commandOutput(bin string, args ...string) (string, error) {
	out, err := exec.Command(bin, args...).CombinedOutput()
	return string(out), err
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestPushIntoAFullStore: a push that the store cannot take (its
// max_file_store reached) says the store is full and removes what it put;
// nothing of the circuit is left, listed or not, and the store's room is
// back. Before (issue 45, row 10), it failed with NATS's bare
// "insufficient resources" and left what it had stored.
func TestPushIntoAFullStore(t *testing.T) {
	bin := binary(t)
	dir := bigCircuit(t)
	conf := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(conf, []byte("jetstream { max_file_store: 4MB }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := fleet.StartServer(fleet.ServerOptions{Listen: "127.0.0.1:0", StoreDir: t.TempDir(), ConfigFile: conf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()
	q := openQueue(t, url, 5*time.Second)
	ctx := context.Background()

	_, err = fleet.PushDir(ctx, q, dir)
	if err == nil || !strings.Contains(err.Error(), "store disk full") || !strings.Contains(err.Error(), "was removed") {
		t.Fatalf("a push into a full store: %v", err)
	}
	t.Log(err)
	out, cerr := commandOutput(bin, "circuit", "push", "--nats", url, dir)
	if cerr == nil || !strings.Contains(out, "store disk full") {
		t.Errorf("zkpipe circuit push into a full store: %v\n%s", cerr, out)
	}
	infos, err := q.Circuits.List(ctx)
	if err != nil && !errors.Is(err, jetstream.ErrNoObjectsFound) {
		t.Fatal(err)
	}
	for _, in := range infos {
		t.Errorf("left in the store: %s (%d bytes)", in.Name, in.Size)
	}
	st, err := q.Circuits.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > 64<<10 {
		t.Errorf("the circuit bucket holds %d bytes after the failed pushes", st.Size())
	}
	// and the store takes a circuit that fits
	pushChain(t, q)
}
