package commands

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

func demoCommand() *cli.Command {
	flags := engineFlags(
		&cli.StringFlag{Name: "builtin", Value: "commit", Usage: fmt.Sprintf("built-in circuit to prove: %v", circuits.Names()), EnvVars: env("demo-builtin")},
		&cli.IntFlag{Name: "constraints", Aliases: []string{"c"}, Value: 1 << 12, Usage: "about how many constraints", EnvVars: env("demo-constraints")},
		&cli.IntFlag{Name: "proofs", Aliases: []string{"n"}, Value: 8, Usage: "how many proofs to stream", EnvVars: env("demo-proofs")},
		&cli.StringFlag{Name: "cache", Usage: "zkpipe's cache directory: set-up circuits are kept here (default: the user cache dir/zkpipe)", EnvVars: env("cache")},
		&cli.StringFlag{Name: "out", Usage: "directory for proofs (default: a fresh temporary one)", EnvVars: env("demo-out")},
		oldString("circuit", "builtin", env("demo-circuit")...),
	)
	return &cli.Command{
		Name:  "demo",
		Usage: "set up a small built-in circuit (cached) and prove a stream of proofs, verifying each",
		Flags: flags,
		Action: func(c *cli.Context) error {
			b, err := spelling(c, "builtin", "circuit")
			if err != nil {
				return err
			}
			name, n := c.String(b), c.Int("constraints")
			dir, err := demoCircuit(c.String("cache"), name, n)
			if err != nil {
				return err
			}
			circ, err := gnarksrc.LoadDirWith(dir, gnarkOptions(c))
			if err != nil {
				return err
			}
			v := circ.Source.Verifier()
			out := c.String("out")
			if out == "" {
				if out, err = os.MkdirTemp("", "zkpipe-demo-"); err != nil {
					return err
				}
			}
			var jobs strings.Builder
			for i := 1; i <= c.Int("proofs"); i++ {
				fmt.Fprintf(&jobs, `{"id":"demo-%d","generate":{"seed":%d}}`+"\n", i, i)
			}
			fmt.Printf("proving %d proofs of %s (%d constraints) on %s into %s\n", c.Int("proofs"), name, circ.Constraints, c.String("device"), out)
			start := time.Now()
			done, bad := 0, 0
			opts, err := engineOptions(c, out)
			if err != nil {
				return err
			}
			err = runStream(c, opts, []*stages.Circuit{circ}, strings.NewReader(jobs.String()), nil, func(r stream.Result) error {
				done++
				status := "verified by gnark"
				if r.Error != "" {
					status, bad = "FAILED: "+r.Error, bad+1
				} else if _, err := v.Check(c.Context, blob.DirReader(""), stages.Outputs{Proof: r.Proof, Public: r.Public}); err != nil {
					status, bad = "REJECTED by gnark: "+err.Error(), bad+1
				}
				fmt.Printf("%-8s %s  %s  total %.1f ms\n", r.ID, status, stageSummary(r), r.TotalMS)
				return nil
			})
			if err != nil {
				return err
			}
			el := time.Since(start)
			fmt.Printf("%d proofs in %s: %.2f proofs/s, %d failed\n", done, el.Round(time.Millisecond), float64(done)/el.Seconds(), bad)
			if bad > 0 {
				return &JobsFailedError{Failed: bad, Total: done}
			}
			return nil
		},
	}
}

// demoCircuit returns the cached circuit directory, setting it up if missing.
func demoCircuit(cache, name string, n int) (string, error) {
	if cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		cache = filepath.Join(base, "zkpipe")
	}
	dir := filepath.Join(cache, fmt.Sprintf("%s-%d", name, n))
	if _, err := os.Stat(filepath.Join(dir, gnarksrc.MetaFile)); err == nil {
		return dir, nil
	}
	fmt.Printf("setting up %s with %d constraints in %s (once)\n", name, n, dir)
	if _, err := gnarksrc.Setup(name, n, dir); err != nil {
		return "", err
	}
	return dir, nil
}

// stageSummary is "stage run(+queue) …" in milliseconds.
func stageSummary(r stream.Result) string {
	var b strings.Builder
	for i, s := range r.Stages {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s %.1f", s.Stage, s.RunMS)
		if s.QueueMS >= 0.1 {
			fmt.Fprintf(&b, "(+%.1f)", s.QueueMS)
		}
	}
	return b.String()
}
