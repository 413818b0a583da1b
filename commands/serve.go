package commands

import (
	"errors"
	"fmt"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/metrics"
)

func serveCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "nats-listen", Value: "127.0.0.1:4222", Category: "NATS", EnvVars: env("nats-listen"),
			Usage: "client address of the embedded NATS server; beyond loopback it needs --nats-user/--nats-password, --nats-token or a --nats-config with auth"},
		&cli.StringFlag{Name: "store", Value: "zkpipe-store", Category: "NATS", EnvVars: env("store"),
			Usage: "JetStream's file store: queued jobs, results, circuits and proofs survive restarts"},
		&cli.StringFlag{Name: "nats-config", Category: "NATS", EnvVars: env("nats-config"),
			Usage: "a nats-server configuration file (accounts, nkeys, operator JWTs, TLS); the flags here override its listen address and store"},
		&cli.BoolFlag{Name: "worker", Value: true, Category: "worker", EnvVars: env("worker"),
			Usage: "run a worker in this process too (--worker=false: the queue only)"},
		&cli.BoolFlag{Name: "nats-open-monitoring", Category: "NATS", EnvVars: env("nats-open-monitoring"),
			Usage: "allow the --nats-config's monitoring (http, https) or profiling port beyond loopback: nats-server has no auth for them"},
		&cli.BoolFlag{Name: "nats-log", Category: "NATS", EnvVars: env("nats-log"), Usage: "show the NATS server's log"},
		&cli.StringFlag{Name: "server-name", Category: "cluster", EnvVars: env("server-name"),
			Usage: "this server's name in its JetStream cluster, unique there (nats-server's server_name)"},
		&cli.StringFlag{Name: "cluster-name", Category: "cluster", EnvVars: env("cluster-name"),
			Usage: "the JetStream cluster's name, the same on each of its servers (nats-server's cluster { name })"},
		&cli.StringFlag{Name: "cluster-listen", Category: "cluster", EnvVars: env("cluster-listen"),
			Usage: "HOST:PORT the cluster's routes listen on; beyond loopback it needs a --nats-config cluster block with authorization or verified TLS"},
		&cli.StringSliceFlag{Name: "routes", Category: "cluster", EnvVars: env("routes"),
			Usage: "the cluster's servers' route URLs, nats://HOST:PORT, comma-separated or repeated (this server's own may be among them)"},
	}
	flags = append(flags, natsFlags(false)...)
	flags = append(flags, queueFlags()...)
	flags = append(flags, workerFlags()...)
	return &cli.Command{
		Name:  "serve",
		Usage: "run the proving service: an embedded NATS server with JetStream, and a worker",
		Description: "One process is the whole service: jobs from zkpipe submit, results to zkpipe results. " +
			"Workers on other hosts join with zkpipe worker --nats nats://HOST:PORT. --nats-user/--nats-password or " +
			"--nats-token set the credential clients must give (and the one the in-process worker gives).",
		UsageText: "zkpipe serve [--nats-listen 127.0.0.1:4222] [--store DIR] [--metrics-addr HOST:PORT] [engine flags]",
		Flags:     engineFlags(flags...),
		Action:    serve,
	}
}

func serve(c *cli.Context) error {
	auth := natsAuth(c)
	srv, err := fleet.StartServer(fleet.ServerOptions{
		Listen: c.String("nats-listen"), StoreDir: c.String("store"),
		User: auth.User, Password: auth.Password, Token: auth.Token,
		ConfigFile: c.String("nats-config"), OpenMonitoring: c.Bool("nats-open-monitoring"), Log: c.Bool("nats-log"), Notify: logOut(c),
		ServerName: c.String("server-name"), ClusterName: c.String("cluster-name"), ClusterListen: c.String("cluster-listen"),
		Routes: splitList(c.StringSlice("routes")),
	})
	if err != nil {
		return err
	}
	defer srv.Shutdown()
	fmt.Fprintf(logOut(c), "zkpipe: NATS JetStream on %s (store %s)\n", srv.ClientURL(), c.String("store"))
	// A server of a cluster: nothing of JetStream answers before a quorum
	// of its servers elects a leader, however long that takes.
	quorumCtx, stopWait := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	err = srv.AwaitQuorum(quorumCtx, logOut(c), 5*time.Second)
	stopWait()
	if err != nil {
		return err
	}
	cfg := queueConfig(c)
	cfg.ClusterSize = srv.ClusterSize() // better known here than by a client
	conn, err := fleet.Connect(srv.ClientURL(), auth, "serve", nats.InProcessServer(srv.Server))
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := srv.AnswerStatus(conn); err != nil {
		return err
	}
	q, err := fleet.Setup(c.Context, conn, cfg)
	if err != nil {
		return err
	}
	if srv.Clustered() {
		fmt.Fprintf(logOut(c), "zkpipe: JetStream cluster %s: %d servers, streams and buckets with %d replicas\n", srv.ClusterName(), srv.ClusterSize(), q.Replicas())
	}
	if c.Bool("worker") {
		return runWorker(c, q)
	}
	// The queue alone: /metrics has the process's figures, /healthz the server's.
	if addr := c.String("metrics-addr"); addr != "" {
		ms, err := metrics.Serve(addr, metrics.New(metrics.Options{}), func() error {
			if p := srv.StoreProblem(); p != "" {
				return errors.New(p)
			}
			if !srv.Running() || !srv.JetStreamEnabled() {
				return errors.New("NATS server or JetStream not running")
			}
			return nil
		})
		if err != nil {
			return err
		}
		defer ms.Close()
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}

// splitList flattens a list flag's values, each of which may itself be
// comma-separated, dropping empty items.
func splitList(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, x := range strings.Split(v, ",") {
			if x = strings.TrimSpace(x); x != "" {
				out = append(out, x)
			}
		}
	}
	return out
}
