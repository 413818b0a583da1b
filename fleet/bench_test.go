package fleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

// BenchmarkFailover: three serve processes in one cluster; each iteration
// kills with SIGKILL the server that leads what the sub-benchmark names
// (the jobs stream, or the cluster's meta group), then submits one job
// (fleet.Submit, as zkpipe submit does, over a connection given every
// server's URL) until it is acknowledged. s/failover is the mean time from
// the kill to that acknowledgment, s-worst the longest; the killed server
// is started again (outside the timing) before the next iteration.
//
//	go test ./fleet -run - -bench Failover -benchtime 5x
func BenchmarkFailover(b *testing.B) {
	for _, what := range []string{"jobs-stream-leader", "meta-leader"} {
		b.Run(what, func(b *testing.B) {
			bin := binary(b)
			c := startProcCluster(b, bin, b.TempDir())
			q := openQueue(b, c.url, 2*time.Second)
			var total, worst time.Duration
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				var victim *soakServer
				for try := 0; victim == nil; try++ {
					if what == "meta-leader" {
						victim = c.byName(c.metaLeader())
					} else {
						victim = c.byName(c.streamLeader(q, fleet.JobsStream))
					}
					if try > 100 {
						b.Fatalf("no %s", what)
					}
					if victim == nil {
						time.Sleep(100 * time.Millisecond)
					}
				}
				b.StartTimer()
				victim.p.cmd.Process.Signal(syscall.SIGKILL)
				t0 := time.Now()
				<-victim.p.done
				for {
					var s fleet.Submitted
					_, err := fleet.Submit(context.Background(), q, strings.NewReader(fmt.Sprintf(`{"id":"f%d-%d","circuit":"chain","generate":{"seed":1}}`, i, time.Now().UnixNano())),
						fleet.SubmitOptions{}, func(x fleet.Submitted) { s = x })
					if err == nil && s.Queued {
						break
					}
					if time.Since(t0) > 2*time.Minute {
						b.Fatalf("no submit acknowledged 2 minutes after the kill: %v %+v", err, s)
					}
				}
				d := time.Since(t0)
				b.StopTimer()
				total += d
				worst = max(worst, d)
				c.start(victim)
				waitHealthy(b, victim.metrics)
				time.Sleep(time.Second) // caught up
				b.StartTimer()
			}
			b.ReportMetric(total.Seconds()/float64(b.N), "s/failover")
			b.ReportMetric(worst.Seconds(), "s-worst")
		})
	}
}

// big16Dir is a mulchain circuit of 2^16 constraints named big16.
var big16Dir = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "zkpipe-fleet-big16-")
	if err != nil {
		return "", err
	}
	dir = filepath.Join(dir, "big16")
	_, err = gnarksrc.Setup("mulchain", 1<<16, dir)
	return dir, err
})

// BenchmarkThroughput: jobs/s through the fleet, from the submit of b.N
// jobs until the last result line is in, with one in-process worker: on
// one embedded server (R1), and on three embedded servers of one cluster
// with every stream and bucket replicated three times (R3); with the fake
// prover (the queue's own cost) and with a real 2^16-constraint circuit
// proven on the CPU.
//
//	go test ./fleet -run - -bench Throughput/fake -benchtime 400x
//	go test ./fleet -run - -bench Throughput/cpu-2e16 -benchtime 8x
func BenchmarkThroughput(b *testing.B) {
	for _, prover := range []string{"fake", "cpu-2e16"} {
		for _, servers := range []int{1, 3} {
			b.Run(fmt.Sprintf("%s/R%d", prover, servers), func(b *testing.B) {
				var url string
				if servers == 1 {
					srv, err := fleet.StartServer(fleet.ServerOptions{Listen: "127.0.0.1:0", StoreDir: b.TempDir()})
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(srv.Shutdown)
					url = srv.ClientURL()
				} else {
					url = startCluster(b, 3).url()
				}
				q := openQueue(b, url, 30*time.Second)
				if q.Replicas() != servers {
					b.Fatalf("%d replicas, want %d", q.Replicas(), servers)
				}
				circuit := "chain"
				var p fleet.Prover
				if prover == "fake" {
					pushChain(b, q)
					p = newFake(b, 16)
				} else {
					dir, err := big16Dir()
					if err != nil {
						b.Fatal(err)
					}
					if _, err := fleet.PushDir(context.Background(), q, dir); err != nil {
						b.Fatal(err)
					}
					circuit = "big16"
					eng, err := engine.New(context.Background(), engine.Options{Device: "cpu", Output: fleet.PerJobOutput{}, Log: testLog{b}})
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { eng.Close() })
					p = eng
				}
				runWorker(b, q, p)
				// warm: the circuit fetched and loaded
				submit(b, q, "", fmt.Sprintf(`{"id":"warm","circuit":%q,"generate":{"seed":1}}`, circuit))
				waitResults(b, q, 1, 5*time.Minute)
				var lines []string
				for i := range b.N {
					lines = append(lines, fmt.Sprintf(`{"id":"t%d","circuit":%q,"generate":{"seed":%d}}`, i, circuit, i+2))
				}
				b.ResetTimer()
				t0 := time.Now()
				submit(b, q, "", lines...)
				waitCount(b, q, b.N+1, 30*time.Minute)
				b.StopTimer()
				b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "jobs/s")
			})
		}
	}
}

// waitCount waits until n ids have result lines.
func waitCount(t testing.TB, q *fleet.Queue, n int, timeout time.Duration) {
	t.Helper()
	for end := time.Now().Add(timeout); ; time.Sleep(10 * time.Millisecond) {
		info, err := q.Results.Info(context.Background())
		if err == nil && int(info.State.Msgs) >= n {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("fewer than %d results after %s", n, timeout)
		}
	}
}

// BenchmarkPartitionRequest: one request of 10 partitions of a 2^16
// circuit, proven by zkpipe prove on this machine, and through the fleet
// (one serve, two worker processes on this host) from its submit to its
// one result line: s/request each, every partition proved.
//
//	go test ./fleet -run - -bench PartitionRequest -benchtime 2x
func BenchmarkPartitionRequest(b *testing.B) {
	dir, err := big16Dir()
	if err != nil {
		b.Fatal(err)
	}
	bin := binary(b)
	request := func(id string) string {
		var parts []string
		for i := range 10 {
			parts = append(parts, fmt.Sprintf(`{"generate":{"seed":%d}}`, i+1))
		}
		return fmt.Sprintf(`{"id":%q,"circuit":"big16","partitions":[%s]}`, id, strings.Join(parts, ","))
	}
	b.Run("prove", func(b *testing.B) {
		tmp := b.TempDir()
		var total time.Duration
		for i := range b.N {
			jobs := filepath.Join(tmp, fmt.Sprintf("r%d.jsonl", i))
			os.WriteFile(jobs, []byte(request(fmt.Sprint("r", i))+"\n"), 0o644)
			out := filepath.Join(tmp, fmt.Sprint("out", i))
			t0 := time.Now()
			o := run(b, bin, "", "prove", "--circuit", dir, "--jobs", jobs, "--out", out, "--results", filepath.Join(tmp, fmt.Sprint("res", i)), "--mem-status", "0")
			total += time.Since(t0)
			lines, err := stream.ReadResultsFile(filepath.Join(tmp, fmt.Sprint("res", i)))
			if err != nil || len(lines) != 1 || lines[0].Error != "" || len(lines[0].Partitions) != 10 {
				b.Fatalf("prove: %v %+v\n%s", err, lines, o)
			}
		}
		b.ReportMetric(total.Seconds()/float64(b.N), "s/request")
	})
	b.Run("fleet-2-workers", func(b *testing.B) {
		tmp := b.TempDir()
		nats, metrics := freePort(b), freePort(b)
		url := "nats://" + nats
		start(b, bin, "serve", "serve", "--worker=false", "--nats-listen", nats, "--store", filepath.Join(tmp, "store"), "--metrics-addr", metrics, "--mem-status", "0")
		waitHealthy(b, metrics)
		run(b, bin, "", "circuit", "push", "--nats", url, dir)
		for w := range 2 {
			start(b, bin, fmt.Sprint("worker", w), "worker", "--nats", url, "--cache", filepath.Join(tmp, fmt.Sprint("cache", w)), "--mem-status", "0")
		}
		q := openQueue(b, url, 0)
		// warm: both workers load the circuit
		run(b, bin, request("warm")+"\n", "submit", "--nats", url, "-")
		waitCount(b, q, 1, 10*time.Minute)
		b.ResetTimer()
		var total time.Duration
		for i := range b.N {
			t0 := time.Now()
			run(b, bin, request(fmt.Sprint("r", i))+"\n", "submit", "--nats", url, "-")
			waitCount(b, q, i+2, 10*time.Minute)
			total += time.Since(t0)
			m, err := q.Results.GetLastMsgForSubject(context.Background(), fmt.Sprint("zkpipe.results.r", i))
			if err != nil {
				b.Fatal(err)
			}
			var r stream.Result
			if json.Unmarshal(m.Data, &r); r.Error != "" || len(r.Partitions) != 10 {
				b.Fatalf("fleet: %s", m.Data)
			}
		}
		b.ReportMetric(total.Seconds()/float64(b.N), "s/request")
	})
}
