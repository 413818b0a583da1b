// Command zkpipe proves continuous streams of Groth16 proofs through a staged
// pipeline: parse, synthesize, pin/transfer, NTT+MSM_H, batch-addition,
// tail-MSM, B_G2 and assemble, each of bounded concurrency.
package main

import (
	"fmt"
	"os"
	"sort"

	"github.com/consensys/gnark/logger"
	"github.com/urfave/cli/v2"
)

// commands is filled by the cmd_*.go files, each adding its own.
var commands []*cli.Command

func main() {
	if err := newApp().Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "zkpipe:", err)
		os.Exit(1)
	}
}

func newApp() *cli.App {
	sort.Slice(commands, func(i, j int) bool { return commands[i].Name < commands[j].Name })
	return &cli.App{
		Name:  "zkpipe",
		Usage: "a Groth16 proving engine for continuous streams of proofs",
		Description: "Every flag can also be set by an environment variable ZKPIPE_<FLAG>, " +
			"upper-case with - as _ (for example ZKPIPE_MSM_H_WORKERS=2).",
		Commands:             commands,
		EnableBashCompletion: true,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "gnark-log", Usage: "show gnark's own debug log", EnvVars: env("gnark-log")},
		},
		Before: func(c *cli.Context) error {
			if !c.Bool("gnark-log") {
				logger.Disable() // gnark logs every solve and verify at debug level
			}
			return nil
		},
	}
}

// env names a flag's environment variable: ZKPIPE_ and the flag in capitals.
func env(flag string) []string {
	b := []byte("ZKPIPE_" + flag)
	for i, c := range b {
		switch {
		case c == '-':
			b[i] = '_'
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		}
	}
	return []string{string(b)}
}
