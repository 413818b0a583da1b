package commands

import (
	"github.com/urfave/cli/v2"
)

func workerCommand() *cli.Command {
	flags := append(natsFlags(true), queueFlags()...)
	flags = append(flags, workerFlags()...)
	return &cli.Command{
		Name:  "worker",
		Usage: "prove jobs from a NATS JetStream queue (zkpipe serve, or any nats-server with JetStream)",
		Description: "Pulls only as many jobs as its first stages (parse, synthesize) can start soon, at most the pipeline's capacity " +
			"(each stage's workers and queue) or --max-in-hand in hand; the rest wait in the queue for any worker. It " +
			"fetches circuits from the store on first use, stores each proof, publishes its result line and then acks. " +
			"The first SIGINT or SIGTERM stops pulling and finishes the jobs in hand; a second hands them back to the queue.",
		UsageText: "zkpipe worker --nats URL [--cache DIR] [--metrics-addr HOST:PORT] [engine flags]",
		Flags:     engineFlags(flags...),
		Action: func(c *cli.Context) error {
			q, err := openQueue(c, "worker")
			if err != nil {
				return err
			}
			defer q.Conn.Close()
			return runWorker(c, q)
		},
	}
}
