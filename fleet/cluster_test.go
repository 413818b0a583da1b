package fleet_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/zkpipe/zkpipe/fleet"
)

// testCluster is n embedded nats-servers of one JetStream cluster on
// loopback, each with its own store.
type testCluster struct {
	t       testing.TB
	opts    []fleet.ServerOptions
	servers []*fleet.Server
	urls    []string // client URLs
}

// startCluster starts n servers routed to each other and waits for the
// cluster's quorum.
func startCluster(t testing.TB, n int) *testCluster {
	t.Helper()
	c := &testCluster{t: t}
	var routes []string
	listen := make([]string, n)
	for i := range n {
		listen[i] = freePort(t)
		routes = append(routes, "nats://"+listen[i])
	}
	for i := range n {
		c.opts = append(c.opts, fleet.ServerOptions{Listen: "127.0.0.1:" + strings.Split(freePort(t), ":")[1], StoreDir: t.TempDir(),
			ServerName: fmt.Sprint("s", i), ClusterName: "zk", ClusterListen: listen[i], Routes: routes})
	}
	c.servers = make([]*fleet.Server, n)
	c.urls = make([]string, n)
	for i := range n {
		c.start(i)
	}
	for _, s := range c.servers {
		if err := s.AwaitQuorum(t.Context(), nil, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// start starts server i (again).
func (c *testCluster) start(i int) {
	c.t.Helper()
	s, err := fleet.StartServer(c.opts[i])
	if err != nil {
		c.t.Fatalf("server %d: %v", i, err)
	}
	c.t.Cleanup(s.Shutdown)
	c.servers[i], c.urls[i] = s, s.ClientURL()
}

// url is every server's client URL, as --nats takes them.
func (c *testCluster) url() string { return strings.Join(c.urls, ",") }

// leaderOf is the index of the server that leads stream name.
func (c *testCluster) leaderOf(q *fleet.Queue, name string) int {
	c.t.Helper()
	for try := 0; ; try++ {
		s, err := q.Conn.JS.Stream(c.t.Context(), name)
		if err == nil {
			var info *jetstream.StreamInfo
			if info, err = s.Info(c.t.Context()); err == nil && info.Cluster != nil {
				for i, srv := range c.servers {
					if srv != nil && srv.Name() == info.Cluster.Leader {
						return i
					}
				}
			}
		}
		if try > 100 {
			c.t.Fatalf("stream %s: no leader (%v)", name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestClusteredSetup: three embedded servers of one cluster wait for their
// quorum, and Setup chooses 3 replicas for every stream and bucket; a
// server alone of its cluster says what it waits for; a queue made with one
// replica is scaled to 3 when --replicas says 3, and a cluster that cannot
// place 5 replicas says so.
func TestClusteredSetup(t *testing.T) {
	c := startCluster(t, 3)
	if got := c.servers[0].ClusterSize(); got != 3 {
		t.Errorf("ClusterSize %d, want 3", got)
	}
	conn, err := fleet.Connect(c.url(), fleet.Auth{}, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.NC.Close() })
	q, err := fleet.Setup(t.Context(), conn, fleet.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if q.Replicas() != 3 {
		t.Errorf("chosen replicas %d, want 3", q.Replicas())
	}
	for _, name := range []string{fleet.JobsStream, fleet.ResultsStream, "OBJ_" + fleet.ProofBucket, "KV_" + fleet.HandBackBucket} {
		s, err := conn.JS.Stream(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		if r := s.CachedInfo().Config.Replicas; r != 3 {
			t.Errorf("%s: %d replicas, want 3", name, r)
		}
	}

	// asked for more than the cluster has: a clear error, after Wait
	var log bytes.Buffer
	_, err = fleet.Setup(t.Context(), conn, fleet.Config{Replicas: 5, Wait: 2 * time.Second, Log: &log})
	if err == nil || !strings.Contains(err.Error(), "scaled to 5 replicas: the cluster cannot place them") {
		t.Errorf("5 replicas in a cluster of 3: %v", err)
	}

	// a lone server of a cluster of three waits, saying so
	lone := fleet.ServerOptions{Listen: "127.0.0.1:0", StoreDir: t.TempDir(), ServerName: "lone", ClusterName: "other",
		ClusterListen: freePort(t), Routes: []string{"nats://" + freePort(t), "nats://" + freePort(t)}}
	s, err := fleet.StartServer(lone)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
	defer cancel()
	var notes syncBuffer
	err = s.AwaitQuorum(ctx, &notes, 500*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "JetStream cluster other: no quorum after") {
		t.Errorf("a lone server's wait: %v", err)
	}
	if !strings.Contains(notes.String(), "waiting for JetStream cluster other's quorum") {
		t.Errorf("the lone server said %q", notes.String())
	}
}

// TestReplicasScaledWhenAsked: a queue made with one replica in a cluster
// keeps it when replicas are chosen (saying it could have more), and is
// scaled to 3 when they are given.
func TestReplicasScaledWhenAsked(t *testing.T) {
	c := startCluster(t, 3)
	conn, err := fleet.Connect(c.url(), fleet.Auth{}, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.NC.Close() })
	if _, err := fleet.Setup(t.Context(), conn, fleet.Config{Replicas: 1}); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	if _, err := fleet.Setup(t.Context(), conn, fleet.Config{Log: &log}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "stream ZKPIPE_JOBS has 1 replica(s), in a cluster that could hold 3: give --replicas 3") {
		t.Errorf("chosen over R1: %q", log.String())
	}
	log.Reset()
	q, err := fleet.Setup(t.Context(), conn, fleet.Config{Replicas: 3, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{fleet.JobsStream, "OBJ_" + fleet.CircuitBucket, "KV_" + fleet.HandBackBucket} {
		s, err := q.Conn.JS.Stream(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if info.Config.Replicas != 3 {
			t.Errorf("%s: %d replicas after --replicas 3", name, info.Config.Replicas)
		}
	}
	if !strings.Contains(log.String(), "stream ZKPIPE_JOBS scaled from 1 to 3 replicas") {
		t.Errorf("log %q", log.String())
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
