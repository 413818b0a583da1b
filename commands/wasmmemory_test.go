package commands

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// An explicit --wasm-memory larger than --mem-budget is refused, naming
// both: each calculator instance is allocated whole at --wasm-memory, so
// none could be admitted, and the one made at load would take the process
// past its budget (issue 45, row 2: accepted before). auto follows the
// budget; equal or smaller sizes are taken.
func TestWasmMemoryAboveTheBudgetIsRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		mem  int64 // want Limits.Memory
		err  string
	}{
		{args: []string{"--wasm-memory", "4GiB", "--mem-budget", "3GiB"}, err: "--wasm-memory 4GiB is more than --mem-budget 3GiB"},
		{args: []string{"--wasm-memory", "300MiB", "--mem-budget", "256MiB"}, err: "--wasm-memory 300MiB is more than --mem-budget 256MiB"},
		{args: []string{"--wasm-memory", "256MiB", "--mem-budget", "256MiB"}, mem: 256 << 20},
		{args: []string{"--wasm-memory", "4GiB", "--mem-budget", "off"}, mem: 4 << 30},
		{args: []string{"--wasm-memory", "64MiB", "--mem-budget", "1GiB"}, mem: 64 << 20},
		{args: []string{"--wasm-memory", "auto", "--mem-budget", "1GiB"}, mem: 0},
	} {
		var got int64
		var err error
		for i, flags := range [][]cli.Flag{proveFlags(), workerCommand().Flags} {
			args := append([]string{"zkpipe"}, c.args...)
			if i == 1 {
				args = append(args, "--nats", "nats://127.0.0.1:4222") // required; not dialled here
			}
			app := &cli.App{Flags: flags, Action: func(c *cli.Context) error {
				l, e := circomLimits(c)
				got, err = l.Memory, e
				return nil
			}}
			if rerr := app.Run(args); rerr != nil {
				t.Fatalf("%v: %v", c.args, rerr)
			}
			switch {
			case c.err == "" && (err != nil || got != c.mem):
				t.Errorf("%v: %d bytes, %v; want %d", c.args, got, err, c.mem)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Errorf("%v: %v; want an error with %q", c.args, err, c.err)
			}
		}
	}
}
