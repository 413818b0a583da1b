package commands

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/metrics"
	"github.com/zkpipe/zkpipe/stream"
)

// natsFlags are how a fleet command reaches NATS: its URL and the client's
// credentials, as the NATS tools name them.
func natsFlags(urlRequired bool) []cli.Flag {
	fs := []cli.Flag{
		&cli.StringFlag{Name: "nats-creds", Category: "NATS", EnvVars: env("nats-creds"), Usage: "credentials file (JWT and nkey seed, from nsc)"},
		&cli.StringFlag{Name: "nats-nkey", Category: "NATS", EnvVars: env("nats-nkey"), Usage: "file holding an nkey seed"},
		&cli.StringFlag{Name: "nats-user", Category: "NATS", EnvVars: env("nats-user"), Usage: "user name (with --nats-password)"},
		&cli.StringFlag{Name: "nats-password", Category: "NATS", EnvVars: env("nats-password"), Usage: "password of --nats-user (prefer ZKPIPE_NATS_PASSWORD to the flag)"},
		&cli.StringFlag{Name: "nats-token", Category: "NATS", EnvVars: env("nats-token"), Usage: "authentication token (prefer ZKPIPE_NATS_TOKEN to the flag)"},
		&cli.StringFlag{Name: "nats-ca", Category: "NATS", EnvVars: env("nats-ca"), Usage: "PEM CA bundle to trust for the server's TLS certificate"},
		&cli.StringFlag{Name: "nats-cert", Category: "NATS", EnvVars: env("nats-cert"), Usage: "client certificate for mutual TLS (with --nats-key)"},
		&cli.StringFlag{Name: "nats-key", Category: "NATS", EnvVars: env("nats-key"), Usage: "client certificate's key"},
	}
	if urlRequired {
		fs = append([]cli.Flag{&cli.StringFlag{Name: "nats", Category: "NATS", EnvVars: append(env("nats"), "NATS_URL"), Required: true,
			Usage: "NATS server URL(s), e.g. nats://queue.example:4222 (comma-separated for a cluster)"}}, fs...)
	}
	return fs
}

// queueFlags shape the streams when this command is the first to create them.
func queueFlags() []cli.Flag {
	return []cli.Flag{
		&cli.DurationFlag{Name: "ack-wait", Value: fleet.DefaultAckWait, Category: "queue", EnvVars: env("ack-wait"),
			Usage: "a job unanswered and without heartbeat this long goes to another worker (set when the queue is first created)"},
		&cli.DurationFlag{Name: "duplicate-window", Value: fleet.DefaultDuplicates, Category: "queue", EnvVars: env("duplicate-window"),
			Usage: "a second submit of an id within this window is dropped by the server (set when the queue is first created)"},
		&cli.IntFlag{Name: "replicas", Category: "queue", EnvVars: env("replicas"), DefaultText: "auto",
			Usage: "how many servers of a JetStream cluster hold each stream and bucket; given, the existing ones are scaled to it " +
				"(auto: 3 in a cluster of three or more servers, 1 otherwise; those that exist keep theirs)"},
	}
}

func metricsFlag() cli.Flag {
	return &cli.StringFlag{Name: "metrics-addr", Category: "metrics", EnvVars: env("metrics-addr"),
		Usage: "serve Prometheus metrics on http://HOST:PORT/metrics and health on /healthz (e.g. 127.0.0.1:9464)"}
}

func natsAuth(c *cli.Context) fleet.Auth {
	return fleet.Auth{
		Creds: c.String("nats-creds"), NKey: c.String("nats-nkey"),
		User: c.String("nats-user"), Password: c.String("nats-password"), Token: c.String("nats-token"),
		CA: c.String("nats-ca"), Cert: c.String("nats-cert"), Key: c.String("nats-key"),
	}
}

func queueConfig(c *cli.Context) fleet.Config {
	return fleet.Config{AckWait: c.Duration("ack-wait"), Duplicates: c.Duration("duplicate-window"), Replicas: c.Int("replicas"),
		Log: logOut(c)}
}

// openQueue connects to --nats and opens (or creates) the queue.
func openQueue(c *cli.Context, name string) (*fleet.Queue, error) {
	conn, err := fleet.Connect(c.String("nats"), natsAuth(c), name)
	if err != nil {
		return nil, err
	}
	q, err := fleet.Setup(c.Context, conn, queueConfig(c))
	if err != nil {
		err = conn.Explain(err) // "store disk full" when serve says so
		conn.Close()
		return nil, err
	}
	return q, nil
}

// workerFlags are a worker's own flags (serve's in-process one too).
func workerFlags() []cli.Flag {
	dir := "zkpipe-cache"
	if d, err := os.UserCacheDir(); err == nil {
		dir = filepath.Join(d, "zkpipe")
	}
	return []cli.Flag{
		&cli.StringFlag{Name: "cache", Value: dir, Category: "worker", EnvVars: env("cache"),
			Usage: "zkpipe's cache directory: circuits fetched from the store stay here, shared by the workers of this host (each circuit fetched and loaded under a lock of its own; witnesses and proofs pass through memory, not here)"},
		&cli.IntFlag{Name: "max-deliveries", Value: 5, Category: "worker", EnvVars: env("max-deliveries"),
			Usage: "answer a job with an error, and drop it, once this many of its deliveries ended with no answer while it ran alone (its workers died on it; a job whose worker died runs alone from then on)"},
		&cli.IntFlag{Name: "max-host-faults", Value: 20, Category: "worker", EnvVars: env("max-host-faults"),
			Usage: "answer a job with an error, and drop it, once workers have handed it back this often for faults of their own (a lost GPU, a full disk)"},
		&cli.IntFlag{Name: "max-in-hand", Category: "worker", EnvVars: env("max-in-hand"), DefaultText: "the pipeline's capacity",
			Usage: "the most jobs the worker holds at once (pulled, not yet answered); whatever it is, the worker pulls only what its first stages (parse, synthesize) can start soon, and the rest wait in the queue for any worker"},
		&cli.DurationFlag{Name: "job-timeout", Value: fleet.DefaultJobTimeout, Category: "worker", EnvVars: env("job-timeout"),
			Usage: "a job still unanswered this long after it entered the pipeline is terminated with an error (or, if it shared the pipeline with others, handed back to run alone), and the pipeline is started anew"},
		calldataFlag("worker"),
		metricsFlag(),
	}
}

// runWorker proves jobs from q until the first signal, then finishes the
// jobs in hand; a second signal hands them back to the queue. A worker
// whose engine got stuck on a job (past --job-timeout) gets a new engine;
// one whose stuck engine does not close ends the process with the error.
func runWorker(c *cli.Context, q *fleet.Queue) error {
	sig := watchSignals(c.Context, logOut(c))
	defer sig.stop()
	cache := c.String("cache")
	// The workers of a host share the cache: a lock per circuit while it
	// is fetched and loaded (fleet.WorkerOptions.Cache).
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return fmt.Errorf("--cache %s: %w", cache, err)
	}
	timeout := c.Duration("job-timeout")
	if timeout <= 0 {
		return fmt.Errorf("--job-timeout %s: want a positive duration", timeout)
	}
	wasm, err := circomLimits(c)
	if err != nil {
		return err
	}
	if n := c.Int("max-in-hand"); n < 0 {
		return fmt.Errorf("--max-in-hand %d: want 0 (the pipeline's capacity) or more", n)
	}
	wo := fleet.WorkerOptions{Cache: cache, Wasm: wasm, MaxDeliveries: c.Int("max-deliveries"), MaxHostFaults: c.Int("max-host-faults"),
		JobTimeout: timeout, MaxInHand: c.Int("max-in-hand"), Log: logOut(c), Gnark: gnarkOptions(c)}
	wo.Gnark.Calldata = c.Bool("calldata") // the gnark circuits it fetches write ID.calldata
	var ep atomic.Pointer[engine.Engine]
	var wp atomic.Pointer[fleet.Worker] // set below; a scrape before then sees no worker
	if addr := c.String("metrics-addr"); addr != "" {
		m := metrics.New(metrics.Options{Engine: func() engine.Snapshot {
			if e := ep.Load(); e != nil {
				return e.Snapshot()
			}
			return engine.Snapshot{}
		}, Circuit: func(name string) bool {
			e := ep.Load()
			return e != nil && e.HasCircuit(name)
		}, Fleet: func() (int, int) {
			if w := wp.Load(); w != nil {
				return w.InHand(), w.Capacity()
			}
			return 0, 0
		}, Backlog: func() (map[string]int, error) {
			ctx, cancel := context.WithTimeout(context.Background(), backlogTimeout)
			defer cancel()
			return q.Backlog(ctx)
		}})
		srv, err := metrics.Serve(addr, m, func() error {
			if !q.Conn.NC.IsConnected() {
				return fmt.Errorf("NATS: %s", q.Conn.NC.Status())
			}
			return nil
		})
		if err != nil {
			return err
		}
		defer srv.Close()
		wo.Observer = m
	}
	for {
		// No output directory: each job's outputs go from memory to the
		// object store (fleet.Worker).
		opts, err := engineOptions(c, "")
		if err != nil {
			return err
		}
		opts.Output = fleet.PerJobOutput{}
		eng, err := engine.New(sig.hard, opts)
		if err != nil {
			return err
		}
		ep.Store(eng)
		w := fleet.NewWorker(q, eng, wo)
		wp.Store(w)
		places, _ := eng.Intake()
		fmt.Fprintf(logOut(c), "zkpipe: worker on %s: up to %d jobs in hand, pulled as parse and synthesize have room (%d places), ack wait %s, job timeout %s, cache %s\n",
			q.Conn.NC.ConnectedUrlRedacted(), w.Capacity(), places, q.AckWait(), timeout, cache)
		err = w.Run(sig.hard, sig.intake)
		if sig.aborted() {
			eng.Close()
			return errInterrupted
		}
		if !errors.Is(err, fleet.ErrProverStuck) || sig.intake.Err() != nil {
			eng.Close()
			return err
		}
		if cerr := closeWithin(eng, engineCloseGrace); cerr != nil {
			return fmt.Errorf("%w; %v", err, cerr)
		}
		fmt.Fprintf(logOut(c), "zkpipe: worker: %v; starting a new engine\n", err)
	}
}

// backlogTimeout bounds a scrape's look at the queue's backlog: a scrape
// must not wait on a server that does not answer.
const backlogTimeout = 5 * time.Second

// engineCloseGrace bounds the close of an engine that got stuck on a job.
const engineCloseGrace = 30 * time.Second

// closeWithin closes eng, or gives up after d (its stuck goroutines then
// end with the process).
func closeWithin(eng *engine.Engine, d time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- eng.Close() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		return fmt.Errorf("the stuck engine did not close within %s", d)
	}
}

// serveMetrics serves --metrics-addr for a prove-like run over eng, if set,
// and returns what to call with each result line and the cleanup.
func serveMetrics(c *cli.Context, eng *engine.Engine) (func(r stream.Result), func(), error) {
	addr := c.String("metrics-addr")
	if addr == "" {
		return func(stream.Result) {}, func() {}, nil
	}
	m := metrics.New(metrics.Options{Engine: eng.Snapshot, Circuit: eng.HasCircuit})
	srv, err := metrics.Serve(addr, m, nil)
	if err != nil {
		return nil, nil, err
	}
	return m.Result, func() { srv.Close() }, nil
}
