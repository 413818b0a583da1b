package commands

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/stream"
)

// Every duration flag of every command refuses a negative value, given on
// the command line or in its ZKPIPE_ variable, before the command runs.
func TestNegativeDurationsRefused(t *testing.T) {
	// cancelled: a command that took the value would stop at once rather
	// than serve or prove
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var walk func(path []string, cmds []*cli.Command)
	seen := 0
	walk = func(path []string, cmds []*cli.Command) {
		for _, cmd := range cmds {
			p := append(append([]string{}, path...), cmd.Name)
			for _, f := range cmd.Flags { // required flags are checked first
				if r, ok := f.(cli.RequiredFlag); ok && r.IsRequired() {
					p = append(p, "--"+f.Names()[0], "x")
				}
			}
			for _, f := range cmd.Flags {
				df, ok := f.(*cli.DurationFlag)
				if !ok {
					continue
				}
				seen++
				args := append(append([]string{"zkpipe"}, p...), "--"+df.Name, "-1s")
				err := App().RunContext(ctx, args)
				if err == nil || !strings.Contains(err.Error(), "--"+df.Name+" -1s: a duration must be 0 or more") {
					t.Errorf("%s: %v", strings.Join(args[1:], " "), err)
				}
				if len(df.EnvVars) > 0 {
					t.Setenv(df.EnvVars[0], "-5ms")
					err := App().RunContext(ctx, append([]string{"zkpipe"}, p...))
					if err == nil || !strings.Contains(err.Error(), "--"+df.Name+" -5ms") {
						t.Errorf("%s=-5ms %s: %v", df.EnvVars[0], strings.Join(p, " "), err)
					}
					t.Setenv(df.EnvVars[0], "")
				}
			}
			walk(append(append([]string{}, path...), cmd.Name), cmd.Subcommands)
		}
	}
	walk(nil, App().Commands)
	if seen < 5 {
		t.Fatalf("only %d duration flags found", seen)
	}
}

// A witness that is a FIFO nobody writes to, under a read timeout of an
// hour: one SIGTERM ends the read (the job fails alone, saying why) and the
// process exits, instead of waiting out the hour.
func TestSignalEndsAFIFOWitnessWhateverTheTimeout(t *testing.T) {
	bin := binary(t)
	root := t.TempDir()
	chain := setupCircuit(t, root, "chain", "mulchain", 100)
	fifo := filepath.Join(root, "w.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	jobs := filepath.Join(root, "jobs.jsonl")
	writeJobs(t, jobs, fmt.Sprintf(`{"id":"stuck","witness":%q}`, fifo))
	results := filepath.Join(root, "r.jsonl")
	cmd := exec.Command(bin, "prove", "--device", "cpu", "--circuit", chain, "--jobs", jobs, "--read-timeout", "1h",
		"--out", filepath.Join(root, "out"), "--results", results, "--mem-status", "1s")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && !strings.Contains(sc.Text(), "| parse 0+1/") {
	}
	cmd.Process.Signal(syscall.SIGTERM)
	go func() {
		for sc.Scan() {
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err = <-exited:
	case <-time.After(time.Minute): // a hang guard, not a speed check
		cmd.Process.Kill()
		t.Fatal("still running a minute after SIGTERM: the FIFO read outlived it")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitJobsFailed {
		t.Errorf("exit %v, want code %d (the job failed)", err, ExitJobsFailed)
	}
	lines, err := stream.ReadResultsFile(results)
	if err != nil || len(lines) != 1 || !strings.Contains(lines[0].Error, "intake stopped") {
		t.Errorf("result lines %+v (%v), want the job failed saying the intake stopped", lines, err)
	}
}
