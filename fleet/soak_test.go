package fleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

// soakConfig sizes a soak of a three-server cluster.
type soakConfig struct {
	jobs          int           // single jobs
	requests, k   int           // requests of k partitions
	batch         int           // job lines per submit process
	workers       int           // worker processes
	serverKills   int           // servers killed with SIGKILL, in turn, each restarted
	workerKills   int           // workers killed with SIGKILL, each restarted
	down          time.Duration // how long a killed server stays down
	answerTimeout time.Duration // for every acknowledged job to be answered, after the last kill
}

// TestClusterSoak: the small soak of the normal test run (the large one is
// TestClusterSoakLarge): three serve processes in one cluster (one
// configured by its --nats-config's server_name and cluster block, two by
// flags), two workers, 40 jobs and 2 requests of 4 partitions submitted in
// batches throughout, the meta leader killed with SIGKILL, then the jobs
// stream's leader, then a worker holding jobs, each started again: every
// acknowledged job and request answered exactly once, every proof verified
// by gnark, submits acknowledged while a server is down.
func TestClusterSoak(t *testing.T) {
	soak(t, soakConfig{jobs: 40, requests: 2, k: 4, batch: 7, workers: 2, serverKills: 2, workerKills: 1,
		down: 2 * time.Second, answerTimeout: 2 * time.Minute})
}

// TestClusterSoakLarge is issue 46's soak: three servers, three workers,
// 300 jobs and 20 requests of 10 partitions, a server killed with SIGKILL
// every few seconds in turn (the meta leader, the jobs stream's leader and
// the results stream's leader among them), workers killed too. Opt in with
// ZKPIPE_SOAK=1 (some minutes on two cores).
func TestClusterSoakLarge(t *testing.T) {
	if os.Getenv("ZKPIPE_SOAK") == "" {
		t.Skip("the large soak: ZKPIPE_SOAK=1 runs it (minutes); TestClusterSoak is its small version")
	}
	soak(t, soakConfig{jobs: 300, requests: 20, k: 10, batch: 10, workers: 3, serverKills: 12, workerKills: 4,
		down: 3 * time.Second, answerTimeout: 5 * time.Minute})
}

// soakServer is one serve process of the soak's cluster.
type soakServer struct {
	name, nats, metrics, monitor string
	args                         []string
	p                            *proc
	starts                       int
}

func soak(t *testing.T, cfg soakConfig) {
	bin := binary(t)
	dir := circuitDir(t)
	tmp := t.TempDir()
	t0 := time.Now()

	c := startProcCluster(t, bin, tmp)
	servers, url, startServer := c.servers, c.url, c.start
	t.Logf("cluster up in %s", time.Since(t0).Round(time.Millisecond))
	q := openQueue(t, url, 2*time.Second)
	run(t, bin, "", "circuit", "push", "--nats", url, dir)

	// ── workers, and results following from the start ────────────────────
	workerArgs := func(i int) []string {
		return []string{"worker", "--nats", url, "--cache", filepath.Join(tmp, fmt.Sprint("cache", i)), "--mem-status", "0", "--ack-wait", "2s"}
	}
	var wmu sync.Mutex
	workers := make([]*proc, cfg.workers)
	var workerLogs []string
	for i := range workers {
		workers[i] = start(t, bin, fmt.Sprint("worker", i), workerArgs(i)...)
		workerLogs = append(workerLogs, workers[i].log)
	}
	out, resultsFile := filepath.Join(tmp, "out"), filepath.Join(tmp, "results.jsonl")
	results := start(t, bin, "results", "results", "--nats", url, "--out", out, "--results", resultsFile, "--follow", "--circuit", dir)

	// ── submits, in batches, all along ───────────────────────────────────
	var lines []string
	for i := range cfg.jobs {
		lines = append(lines, fmt.Sprintf(`{"id":"j%04d","circuit":"chain","generate":{"seed":%d}}`, i, i))
		if cfg.requests > 0 && i%(cfg.jobs/cfg.requests) == 0 && i/(cfg.jobs/cfg.requests) < cfg.requests {
			r := i / (cfg.jobs / cfg.requests)
			var parts []string
			for p := range cfg.k {
				parts = append(parts, fmt.Sprintf(`{"generate":{"seed":%d}}`, 100000+r*cfg.k+p))
			}
			lines = append(lines, fmt.Sprintf(`{"id":"r%03d","circuit":"chain","partitions":[%s]}`, r, strings.Join(parts, ",")))
		}
	}
	var smu sync.Mutex
	acked := map[string]bool{}
	var ackTimes []time.Time
	submitDups, submitRetries := 0, 0
	submitsDone := make(chan struct{})
	go func() {
		defer close(submitsDone)
		for b := 0; b < len(lines); b += cfg.batch {
			batch := lines[b:min(b+cfg.batch, len(lines))]
			for try := 0; ; try++ {
				cmd := exec.Command(bin, "submit", "--nats", url, "-")
				cmd.Stdin = strings.NewReader(strings.Join(batch, "\n") + "\n")
				o, err := cmd.CombinedOutput()
				if err == nil {
					smu.Lock()
					for _, l := range batch {
						var r stream.Request
						json.Unmarshal([]byte(l), &r)
						acked[r.ID] = true
					}
					ackTimes = append(ackTimes, time.Now())
					submitDups += strings.Count(string(o), "is already queued")
					smu.Unlock()
					break
				}
				// not acknowledged: submitted again, as a user would (the
				// ids already queued are duplicates, dropped)
				smu.Lock()
				submitRetries++
				smu.Unlock()
				if try > 20 {
					t.Errorf("a batch not acknowledged after 20 tries: %v\n%s", err, o)
					return
				}
				time.Sleep(500 * time.Millisecond)
			}
			time.Sleep(300 * time.Millisecond)
		}
	}()

	// ── kills ────────────────────────────────────────────────────────────
	metaLeader := c.metaLeader
	streamLeader := func(name string) string { return c.streamLeader(q, name) }
	byName := c.byName
	kills := map[string]int{}    // what the killed server led
	var probes []time.Duration   // kill to a submit acknowledged
	var catchUps []time.Duration // restart to its replicas current
	workerKills := 0
	for k := 0; k < cfg.serverKills; k++ {
		// in turn: the meta leader, the jobs stream's leader, the results
		// stream's leader, then the next server round the cluster
		var victim *soakServer
		var what string
		for try := 0; victim == nil && try < 50; try++ {
			switch k % 4 {
			case 0:
				what, victim = "meta leader", byName(metaLeader())
			case 1:
				what, victim = "jobs stream leader", byName(streamLeader(fleet.JobsStream))
			case 2:
				what, victim = "results stream leader", byName(streamLeader(fleet.ResultsStream))
			default:
				what, victim = "next in turn", servers[k%3]
			}
			if victim == nil {
				time.Sleep(200 * time.Millisecond)
			}
		}
		if victim == nil {
			t.Fatalf("kill %d: no %s found", k, what)
		}
		led := []string{}
		if metaLeader() == victim.name {
			led = append(led, "meta")
		}
		for _, n := range []string{fleet.JobsStream, fleet.ResultsStream} {
			if streamLeader(n) == victim.name {
				led = append(led, n)
			}
		}
		victim.p.cmd.Process.Signal(syscall.SIGKILL)
		<-victim.p.done
		from := time.Now()
		t.Logf("kill %d: %s (%s; it led %v) at %s", k, victim.name, what, led, time.Since(t0).Round(time.Millisecond))
		for _, l := range led {
			kills[l]++
		}
		kills["servers"]++
		if k < cfg.workerKills {
			// a worker too, while the server is down: its jobs go elsewhere
			wmu.Lock()
			i := k % len(workers)
			workers[i].cmd.Process.Signal(syscall.SIGKILL)
			<-workers[i].done
			workers[i] = start(t, bin, fmt.Sprintf("worker%d-%d", i, k), workerArgs(i)...)
			workerLogs = append(workerLogs, workers[i].log)
			wmu.Unlock()
			workerKills++
		}
		// a submit while it is down: acknowledged, however long the
		// cluster takes to elect what the victim led
		probe := fmt.Sprintf(`{"id":"probe%d","circuit":"chain","generate":{"seed":%d}}`, k, 900000+k)
		cmd := exec.Command(bin, "submit", "--nats", url, "-")
		cmd.Stdin = strings.NewReader(probe + "\n")
		if o, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("kill %d: a submit while %s is down: %v\n%s", k, victim.name, err, o)
		} else {
			d := time.Since(from)
			smu.Lock()
			acked[fmt.Sprint("probe", k)] = true
			probes = append(probes, d)
			smu.Unlock()
			t.Logf("kill %d: a submit acknowledged %s after it, %s still down", k, d.Round(time.Millisecond), victim.name)
		}
		time.Sleep(max(cfg.down-time.Since(from), 0))
		startServer(victim)
		restarted := time.Now()
		waitHealthy(t, victim.metrics)
		// caught up: every replica of the queue's streams current again
		for _, name := range []string{fleet.JobsStream, fleet.ResultsStream} {
			for !c.current(q, name, victim.name) {
				if time.Since(restarted) > time.Minute {
					t.Fatalf("kill %d: %s restarted a minute ago, and its replica of %s is not current", k, victim.name, name)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		catchUps = append(catchUps, time.Since(restarted))
		time.Sleep(cfg.down / 2)
	}
	for k := cfg.serverKills; k < cfg.workerKills; k++ {
		wmu.Lock()
		i := k % len(workers)
		workers[i].cmd.Process.Signal(syscall.SIGKILL)
		<-workers[i].done
		workers[i] = start(t, bin, fmt.Sprintf("worker%d-%d", i, k), workerArgs(i)...)
		workerLogs = append(workerLogs, workers[i].log)
		wmu.Unlock()
		workerKills++
	}
	<-submitsDone

	// ── every acknowledged job and request answered, once ────────────────
	smu.Lock()
	want := len(acked)
	smu.Unlock()
	if want != cfg.jobs+cfg.requests+len(probes) {
		t.Errorf("%d of %d jobs and requests acknowledged", want, cfg.jobs+cfg.requests+len(probes))
	}
	deadline := time.Now().Add(cfg.answerTimeout)
	var got []stream.Result
	for {
		got, _ = stream.ReadResultsFile(resultsFile)
		if len(got) >= want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d answered %s after the last kill", len(got), want, cfg.answerTimeout)
		}
		select {
		case <-results.done:
			b, _ := os.ReadFile(results.log)
			t.Fatalf("results exited: %v\n%s", results.cmd.ProcessState, b)
		case <-time.After(200 * time.Millisecond):
		}
	}
	results.cmd.Process.Signal(syscall.SIGINT)
	<-results.done
	elapsed := time.Since(t0)
	if got, _ = stream.ReadResultsFile(resultsFile); len(got) != want {
		t.Errorf("%d result lines, want %d", len(got), want)
	}
	vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(dir, gnarksrc.VKFile))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	proofs := 0
	for _, r := range got {
		seen[r.ID]++
		if r.Error != "" {
			t.Errorf("%s: %s", r.ID, r.Error)
			continue
		}
		if !acked[r.ID] {
			t.Errorf("%s answered, never acknowledged", r.ID)
		}
		if strings.HasPrefix(r.ID, "r") {
			if len(r.Partitions) != cfg.k {
				t.Errorf("%s: %d partitions", r.ID, len(r.Partitions))
			}
			for _, p := range r.Partitions {
				if err := gnarksrc.VerifyFiles(vk, p.Proof, p.Public); err != nil {
					t.Errorf("%s: %v", p.ID, err)
				}
				proofs++
			}
			continue
		}
		if err := gnarksrc.VerifyFiles(vk, r.Proof, r.Public); err != nil {
			t.Errorf("%s: %v", r.ID, err)
		}
		proofs++
	}
	lost := 0
	for id := range acked {
		if seen[id] == 0 {
			lost++
			t.Errorf("%s: acknowledged, never answered", id)
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s: %d result lines", id, n)
		}
	}
	// the queue is empty, no request record or hand-back count is left
	settled(t, q)
	if keys, err := q.Requests.ListKeys(t.Context()); err == nil {
		for k := range keys.Keys() {
			t.Errorf("request record %s left", k)
		}
	}
	// the figures: duplicates the server dropped (workers' logs), that
	// results dropped (its summary), and submits done again
	wmu.Lock()
	workerDups := 0
	for _, l := range workerLogs {
		b, _ := os.ReadFile(l)
		workerDups += strings.Count(string(b), "the server had it already: dropped") + strings.Count(string(b), "answered again, after its request's line")
	}
	wmu.Unlock()
	b, _ := os.ReadFile(results.log)
	resultsDups := 0
	if m := regexp.MustCompile(`(\d+) duplicate answers dropped`).FindSubmatch(b); m != nil {
		resultsDups, _ = strconv.Atoi(string(m[1]))
	}
	t.Logf("SOAK: %s; %d servers killed (meta leader %d, jobs stream leader %d, results stream leader %d), %d workers killed; "+
		"%d jobs and %d requests of %d acknowledged, %d answered, %d proofs verified by gnark, lost %d; "+
		"duplicates dropped: %d by the server (a worker's answer again), %d by results, %d submit lines already queued (%d submits done again); "+
		"while a server was down, a submit acknowledged %v after its kill; restarted, its replicas current after %v",
		elapsed.Round(time.Millisecond), kills["servers"], kills["meta"], kills[fleet.JobsStream], kills[fleet.ResultsStream], workerKills,
		cfg.jobs+len(probes), cfg.requests, cfg.k, len(seen), proofs, lost, workerDups, resultsDups, submitDups, submitRetries, probes, catchUps)
}

// procCluster is three serve processes (--worker=false) of one cluster on
// loopback: s0 configured by its --nats-config's server_name and cluster
// block, s1 and s2 by flags; each with nats-server's monitoring on
// loopback (for its meta leader).
type procCluster struct {
	t       testing.TB
	bin     string
	servers []*soakServer
	url     string // every server's client URL
	mon     *http.Client
}

func startProcCluster(t testing.TB, bin, tmp string) *procCluster {
	t.Helper()
	c := &procCluster{t: t, bin: bin, mon: &http.Client{Timeout: 2 * time.Second}}
	var routes []string
	cluster := make([]string, 3)
	for i := range cluster {
		cluster[i] = freePort(t)
		routes = append(routes, "nats://"+cluster[i])
	}
	var urls []string
	for i := range 3 {
		s := &soakServer{name: fmt.Sprint("s", i), nats: freePort(t), metrics: freePort(t), monitor: freePort(t)}
		conf := filepath.Join(tmp, s.name+".conf")
		text := fmt.Sprintf("http: %q\n", s.monitor)
		s.args = []string{"serve", "--worker=false", "--nats-listen", s.nats, "--store", filepath.Join(tmp, s.name),
			"--metrics-addr", s.metrics, "--nats-config", conf, "--ack-wait", "2s", "--mem-status", "0"}
		if i == 0 {
			// nats-server's own way to say it
			text += fmt.Sprintf("server_name: %s\ncluster {\n  name: zk\n  listen: %q\n  routes: [%s]\n}\n",
				s.name, cluster[i], strings.Join(quoteAll(routes), ", "))
		} else {
			s.args = append(s.args, "--server-name", s.name, "--cluster-name", "zk", "--cluster-listen", cluster[i],
				"--routes", strings.Join(routes, ","))
		}
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		c.servers = append(c.servers, s)
		urls = append(urls, "nats://"+s.nats)
	}
	c.url = strings.Join(urls, ",")
	for _, s := range c.servers {
		c.start(s)
	}
	for _, s := range c.servers {
		waitHealthy(t, s.metrics)
		if b, _ := os.ReadFile(s.p.log); !strings.Contains(string(b), "JetStream cluster zk: 3 servers, streams and buckets with 3 replicas") {
			t.Fatalf("%s:\n%s", s.name, b)
		}
	}
	return c
}

// start starts s (again, after a kill), on its store and ports.
func (c *procCluster) start(s *soakServer) {
	s.starts++
	s.p = start(c.t, c.bin, fmt.Sprintf("%s-%d", s.name, s.starts), s.args...)
}

// metaLeader is the name of the cluster's meta leader, as a server's
// monitoring says ("" when none answers).
func (c *procCluster) metaLeader() string {
	for _, s := range c.servers {
		r, err := c.mon.Get("http://" + s.monitor + "/jsz")
		if err != nil {
			continue
		}
		var j struct {
			Meta struct{ Leader string } `json:"meta_cluster"`
		}
		json.NewDecoder(r.Body).Decode(&j)
		r.Body.Close()
		if j.Meta.Leader != "" {
			return j.Meta.Leader
		}
	}
	return ""
}

// streamLeader is the name of stream name's leader ("" when unknown).
func (c *procCluster) streamLeader(q *fleet.Queue, name string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	st, err := q.Conn.JS.Stream(ctx, name)
	if err != nil {
		return ""
	}
	info, err := st.Info(ctx)
	if err != nil || info.Cluster == nil {
		return ""
	}
	return info.Cluster.Leader
}

// current tells whether server's replica of stream name is current (or
// it leads the stream).
func (c *procCluster) current(q *fleet.Queue, name, server string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	st, err := q.Conn.JS.Stream(ctx, name)
	if err != nil {
		return false
	}
	info, err := st.Info(ctx)
	if err != nil || info.Cluster == nil {
		return false
	}
	if info.Cluster.Leader == server {
		return true
	}
	for _, r := range info.Cluster.Replicas {
		if r.Name == server {
			return r.Current && !r.Offline
		}
	}
	return false
}

func (c *procCluster) byName(n string) *soakServer {
	for _, s := range c.servers {
		if s.name == n {
			return s
		}
	}
	return nil
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}
