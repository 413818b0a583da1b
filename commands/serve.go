package commands

import (
	"errors"
	"fmt"
	"os/signal"
	"syscall"

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
	})
	if err != nil {
		return err
	}
	defer srv.Shutdown()
	fmt.Fprintf(logOut(c), "zkpipe: NATS JetStream on %s (store %s)\n", srv.ClientURL(), c.String("store"))
	conn, err := fleet.Connect(srv.ClientURL(), auth, "serve", nats.InProcessServer(srv.Server))
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := srv.AnswerStatus(conn); err != nil {
		return err
	}
	q, err := fleet.Setup(c.Context, conn, queueConfig(c))
	if err != nil {
		return err
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
