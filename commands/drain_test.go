package commands

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// One SIGTERM or SIGINT in the middle of a stream drains it: the jobs read
// are finished, and the process exits ExitDrained (not 0), its stderr
// saying how many jobs were not read; for a jobs file, those answered and
// those not read add up to the file's jobs. Over stdin (a pipe held open),
// the count is a least one.
func TestOneSignalWithJobsLeftIsNotSuccess(t *testing.T) {
	bin := binary(t)
	root := t.TempDir()
	chain := setupCircuit(t, root, "chain", "mulchain", 3000)
	const n = 40
	jobs := filepath.Join(root, "jobs.jsonl")
	writeJobs(t, jobs, generateJobs(n)...)
	for _, c := range []struct {
		name  string
		sig   syscall.Signal
		stdin bool
	}{
		{"SIGTERM, jobs file", syscall.SIGTERM, false},
		{"SIGINT, jobs file", syscall.SIGINT, false},
		{"SIGTERM, stdin pipe", syscall.SIGTERM, true},
		{"SIGINT, stdin pipe", syscall.SIGINT, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := []string{"prove", "--device", "cpu", "--circuit", chain, "--out", out, "--results", "-", "--mem-status", "0"}
			var pipe io.WriteCloser
			cmd := exec.Command(bin, append(args, "--jobs", jobs)...)
			if c.stdin {
				cmd = exec.Command(bin, append(args, "--jobs", "-")...)
				var err error
				if pipe, err = cmd.StdinPipe(); err != nil {
					t.Fatal(err)
				}
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if pipe != nil {
				data, _ := os.ReadFile(jobs)
				if _, err := pipe.Write(data); err != nil {
					t.Fatal(err)
				}
				defer pipe.Close() // held open until the process has exited
			}
			sc := bufio.NewScanner(stdout)
			answered := 0
			for answered < 2 && sc.Scan() {
				answered++
			}
			cmd.Process.Signal(c.sig)
			for sc.Scan() {
				answered++
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != ExitDrained {
				t.Fatalf("exit %v, want code %d; stderr:\n%s", err, ExitDrained, stderr.String())
			}
			if answered >= n {
				t.Fatalf("all %d jobs answered: the test needs a run stopped mid-stream", n)
			}
			if c.stdin {
				if !regexp.MustCompile(`jobs not read: at least \d+`).MatchString(stderr.String()) {
					t.Errorf("stderr does not say jobs were not read:\n%s", stderr.String())
				}
				return
			}
			m := regexp.MustCompile(`stopped by a signal: (\d+) job\(s\) answered \(0 failed\); (\d+) job\(s\) not read`).FindStringSubmatch(stderr.String())
			if m == nil {
				t.Fatalf("no summary on stderr:\n%s", stderr.String())
			}
			got, _ := strconv.Atoi(m[1])
			unread, _ := strconv.Atoi(m[2])
			if got != answered || got+unread != n {
				t.Errorf("summary: %d answered, %d not read; %d result lines for %d jobs", got, unread, answered, n)
			}
		})
	}
}
