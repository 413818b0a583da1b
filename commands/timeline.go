package commands

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/ioplan"
	"github.com/zkpipe/zkpipe/stream"
	"github.com/zkpipe/zkpipe/timeline"
)

func timelineCommand() *cli.Command {
	return &cli.Command{
		Name:      "timeline",
		Usage:     "draw the stages of every job of a results file on a time axis (SVG)",
		UsageText: "zkpipe timeline RESULTS.jsonl --svg FILE.svg   (RESULTS - for stdin; --svg - for stdout)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "svg", Aliases: []string{"o"}, Value: "timeline.svg", Usage: "SVG file to write, - for stdout"},
			oldString("out", "svg"),
			&cli.IntFlag{Name: "width", Value: 1200, Usage: "picture width in pixels"},
			&cli.StringFlag{Name: "title", Usage: "title (default: jobs, time and throughput)"},
		},
		Action: func(c *cli.Context) error {
			args, err := trailingFlags(c)
			if err != nil {
				return err
			}
			if len(args) != 1 {
				return fmt.Errorf("timeline: want one results file (or -), got %d arguments", len(args))
			}
			svg, err := spelling(c, "svg", "out")
			if err != nil {
				return err
			}
			var plan ioplan.Plan
			if args[0] != "-" {
				plan.Read("the results file "+args[0], args[0])
			} else if fi, err := os.Stdin.Stat(); err == nil && fi.Mode().IsRegular() {
				plan.ReadOpen("the results on stdin", fi)
			}
			plan.Replace("--"+svg, c.String(svg))
			if err := plan.Check(); err != nil {
				return fmt.Errorf("timeline: %w", err)
			}
			in := io.Reader(os.Stdin)
			if args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return err
				}
				defer f.Close()
				in = f
			}
			results, err := stream.ReadResults(in)
			if err != nil {
				return fmt.Errorf("timeline: read %s: %w", args[0], err)
			}
			opt := timeline.Options{Width: c.Int("width"), Title: c.String("title")}
			if out := c.String(svg); out != "-" {
				return writeAtomic(out, func(w io.Writer) error { return timeline.Write(w, results, opt) })
			}
			return timeline.Write(os.Stdout, results, opt)
		},
	}
}

// trailingFlags returns the positional arguments, applying any of the
// command's flags that follow them (urfave/cli v2 stops parsing flags at the
// first argument, and `zkpipe timeline RESULTS -o FILE` reads naturally).
func trailingFlags(c *cli.Context) ([]string, error) {
	var args []string
	rest := c.Args().Slice()
	for len(rest) > 0 {
		fs := flag.NewFlagSet("timeline", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		for _, f := range c.Command.Flags {
			for _, name := range f.Names() { // every flag here takes a value
				fs.Func(name, "", func(v string) error { return c.Set(f.Names()[0], v) })
			}
		}
		if err := fs.Parse(rest); err != nil {
			return nil, fmt.Errorf("timeline: %w", err)
		}
		rest = fs.Args()
		if len(rest) > 0 {
			args = append(args, rest[0])
			rest = rest[1:]
		}
	}
	return args, nil
}

// writeAtomic writes path through a temporary file in its directory, so a
// failed run leaves no half picture.
func writeAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
