package fleet_test

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/zkpipe/zkpipe/fleet"
)

// serveArgs starts zkpipe serve on store with no worker.
func serveArgs(nats, metrics, store string) []string {
	return []string{"serve", "--nats-listen", nats, "--store", store, "--worker=false", "--mem-status", "0", "--metrics-addr", metrics}
}

// TestSecondServeOnAStoreIsRefused: two real serve processes on one store;
// the second is refused naming the first's pid and touches nothing; after a
// SIGKILL of the first (flock: the kernel drops the lock) a restart works
// and the queued job is still there.
func TestSecondServeOnAStoreIsRefused(t *testing.T) {
	bin := binary(t)
	store := filepath.Join(t.TempDir(), "store")
	nats, m := freePort(t), freePort(t)
	first := start(t, bin, "serve-1", serveArgs(nats, m, store)...)
	waitHealthy(t, m)
	url := "nats://" + nats
	run(t, bin, "", "circuit", "push", "--nats", url, circuitDir(t))
	run(t, bin, genJob("kept")+"\n", "submit", "--nats", url, "-")

	for _, s := range []string{store, store + "/", filepath.Join(store, "..", "store")} {
		out, err := exec.Command(bin, serveArgs(freePort(t), freePort(t), s)...).CombinedOutput()
		want := fmt.Sprintf("held by process %d", first.cmd.Process.Pid)
		if err == nil || !strings.Contains(string(out), "in use by another zkpipe serve") || !strings.Contains(string(out), want) {
			t.Fatalf("second serve on %s: %v, want refused naming %q\n%s", s, err, want, out)
		}
	}
	// A symlink to the store is the same directory, and the same lock.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(store, link); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, serveArgs(freePort(t), freePort(t), link)...).CombinedOutput(); err == nil || !strings.Contains(string(out), "in use") {
		t.Fatalf("serve on a symlink to the store: %v\n%s", err, out)
	}

	first.cmd.Process.Signal(syscall.SIGKILL)
	<-first.done
	nats2, m2 := freePort(t), freePort(t)
	start(t, bin, "serve-2", serveArgs(nats2, m2, store)...)
	waitHealthy(t, m2)
	q := openQueue(t, "nats://"+nats2, 0)
	info, err := q.Jobs.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Fatalf("after kill -9 and restart the queue holds %d jobs, want the 1 acknowledged", info.State.Msgs)
	}
}

// TestStoreLockedInProcess: the lock holds between two servers of one
// process too, and Shutdown releases it.
func TestStoreLockedInProcess(t *testing.T) {
	store := t.TempDir()
	a, err := fleet.StartServer(fleet.ServerOptions{Listen: "127.0.0.1:0", StoreDir: store})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fleet.StartServer(fleet.ServerOptions{Listen: "127.0.0.1:0", StoreDir: store}); !errors.Is(err, fleet.ErrStoreInUse) {
		t.Fatalf("second server on the store: %v", err)
	}
	a.Shutdown()
	b, err := fleet.StartServer(fleet.ServerOptions{Listen: "127.0.0.1:0", StoreDir: store})
	if err != nil {
		t.Fatalf("after Shutdown: %v", err)
	}
	b.Shutdown()
}

// TestEveryListenerNeedsAuth: each kind of listener a nats-server config can
// open, on a non-loopback address without auth for it, is refused; on
// loopback, or with auth that applies to it, it is accepted.
func TestEveryListenerNeedsAuth(t *testing.T) {
	const users = `authorization { users: [ {user: a, password: b} ] }` + "\n"
	cases := []struct {
		name, conf string
		ok         bool
	}{
		{"websocket open", `websocket { listen: "0.0.0.0:-1", no_tls: true }`, false},
		{"websocket default host", `websocket { port: -1, no_tls: true }`, false},
		{"websocket loopback", `websocket { listen: "127.0.0.1:-1", no_tls: true }`, true},
		{"websocket with server users", users + `websocket { listen: "0.0.0.0:-1", no_tls: true }`, true},
		{"websocket own token", `websocket { listen: "0.0.0.0:-1", no_tls: true, authorization { token: s3cret } }`, true},
		{"websocket no_auth_user", users + `no_auth_user: a` + "\n" + `websocket { listen: "0.0.0.0:-1", no_tls: true }`, false},
		{"mqtt open", `server_name: m1` + "\n" + `mqtt { listen: "0.0.0.0:-1" }`, false},
		{"mqtt ipv6 any", `server_name: m1` + "\n" + `mqtt { listen: "[::]:-1" }`, false},
		{"mqtt with server users", `server_name: m1` + "\n" + users + `mqtt { listen: "0.0.0.0:-1" }`, true},
		{"leafnode open", `leafnodes { listen: "0.0.0.0:-1" }`, false},
		{"leafnode default host", `leafnodes { port: -1 }`, false},
		{"leafnode own auth", `leafnodes { listen: "0.0.0.0:-1", authorization { user: l, password: p } }`, true},
		{"leafnode loopback", `leafnodes { listen: "localhost:-1" }`, true},
		{"cluster open", `server_name: c1` + "\n" + `cluster { name: c, listen: "0.0.0.0:-1" }`, false},
		{"cluster with only client users", `server_name: c1` + "\n" + users + `cluster { name: c, listen: "0.0.0.0:-1" }`, false},
		{"cluster own auth", `server_name: c1` + "\n" + `cluster { name: c, listen: "0.0.0.0:-1", authorization { user: r, password: p } }`, true},
		{"gateway open", `server_name: g1` + "\n" + `gateway { name: g, listen: "0.0.0.0:-1" }`, false},
		{"gateway own auth", `server_name: g1` + "\n" + `gateway { name: g, listen: "0.0.0.0:-1", authorization { user: r, password: p } }`, true},
		{"http monitoring open", `http: "0.0.0.0:-1"`, false},
		{"http monitoring open with users", users + `http: "0.0.0.0:-1"`, false},
		{"http monitoring loopback", `http: "127.0.0.1:-1"`, true},
		{"http port only: the client host", `http_port: -1`, true},
		{"client open in the config", `listen: "0.0.0.0:-1"`, true}, // --nats-listen overrides it
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conf := filepath.Join(t.TempDir(), "nats.conf")
			if err := os.WriteFile(conf, []byte(c.conf+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			o := fleet.ServerOptions{Listen: "127.0.0.1:0", StoreDir: t.TempDir(), ConfigFile: conf}
			var err error
			if c.ok && (strings.Contains(c.conf, "cluster {") || strings.Contains(c.conf, "gateway {")) {
				// a clustered JetStream server is not ready until its
				// peers are: the checks alone
				err = fleet.CheckListeners(o)
			} else {
				var srv *fleet.Server
				if srv, err = fleet.StartServer(o); srv != nil {
					srv.Shutdown()
				}
			}
			switch {
			case c.ok && err != nil:
				t.Fatalf("refused: %v", err)
			case !c.ok && !errors.Is(err, fleet.ErrOpenListener):
				t.Fatalf("accepted (%v), want ErrOpenListener", err)
			}
		})
	}
	// Monitoring beyond loopback only when allowed in so many words.
	conf := filepath.Join(t.TempDir(), "nats.conf")
	os.WriteFile(conf, []byte(`https: "0.0.0.0:-1"`+"\n"), 0o644)
	_, err := fleet.StartServer(fleet.ServerOptions{Listen: "127.0.0.1:0", StoreDir: t.TempDir(), ConfigFile: conf})
	if !errors.Is(err, fleet.ErrOpenListener) || !strings.Contains(err.Error(), "fleet.ServerOptions.OpenMonitoring") {
		t.Fatalf("https monitoring on 0.0.0.0: %v", err)
	}
	os.WriteFile(conf, []byte(`http: "0.0.0.0:-1"`+"\n"), 0o644)
	srv, err := fleet.StartServer(fleet.ServerOptions{Listen: "127.0.0.1:0", StoreDir: t.TempDir(), ConfigFile: conf, OpenMonitoring: true})
	if err != nil {
		t.Fatalf("http monitoring with OpenMonitoring: %v", err)
	}
	srv.Shutdown()
}

// TestServeMetricsLabelsBounded: a real serve (queue and worker) answers
// 300 jobs that name circuits of their own choosing, and two of its one
// circuit; a real scrape of /metrics has labels for that circuit and
// "other" only. Before, each name became series of its own.
func TestServeMetricsLabelsBounded(t *testing.T) {
	bin := binary(t)
	tmp := t.TempDir()
	nats, m := freePort(t), freePort(t)
	url := "nats://" + nats
	start(t, bin, "serve", "serve", "--nats-listen", nats, "--store", filepath.Join(tmp, "store"),
		"--cache", filepath.Join(tmp, "cache"), "--mem-status", "0", "--metrics-addr", m)
	waitHealthy(t, m)
	run(t, bin, "", "circuit", "push", "--nats", url, circuitDir(t))
	var jobs strings.Builder
	for i := range 300 {
		fmt.Fprintf(&jobs, `{"id":"x%d","circuit":"made-up-%d","generate":{"seed":1}}`+"\n", i, i)
	}
	fmt.Fprintf(&jobs, `{"id":"ok1","circuit":"chain","generate":{"seed":1}}`+"\n")
	fmt.Fprintf(&jobs, `{"id":"ok2","circuit":"chain","generate":{"seed":2}}`+"\n")
	run(t, bin, jobs.String(), "submit", "--nats", url, "-")
	q := openQueue(t, url, 0)
	res := waitResults(t, q, 302, 120*time.Second)
	if res["ok1"].Error != "" || res["x7"].Error == "" {
		t.Fatalf("ok1 %+v, x7 %+v", res["ok1"], res["x7"])
	}
	r, err := http.Get("http://" + m + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	labels, series := map[string]bool{}, 0
	for name, f := range fams {
		if !strings.HasPrefix(name, "zkpipe_") {
			continue
		}
		series += len(f.Metric)
		for _, mt := range f.Metric {
			for _, l := range mt.Label {
				if l.GetName() == "circuit" {
					labels[l.GetValue()] = true
				}
			}
		}
	}
	if len(labels) > 2 || !labels["chain"] || series > 200 {
		t.Errorf("after 302 jobs: circuit labels %v, %d zkpipe series", labels, series)
	}
}
