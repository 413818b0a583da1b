package commands

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/stream"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair (/dev/ptmx, as posix_openpt does):
// what a user's shell gives zkpipe as stdin.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil { // unlockpt
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN) // ptsname
	if err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the terminal's slave: %v", err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// TestProveSaysWhenWaitingOnTerminal: with jobs from a terminal (a real
// pseudo-terminal, as stdin or as --jobs), prove says on stderr that it
// waits for jobs, then proves what is typed until Ctrl-D; from a pipe it
// says nothing of the kind.
func TestProveSaysWhenWaitingOnTerminal(t *testing.T) {
	root := t.TempDir()
	chain := setupCircuit(t, root, "chain", "mulchain", 100)
	for _, asFlag := range []bool{false, true} {
		master, slave := openPTY(t)
		results := filepath.Join(root, "r.jsonl")
		args := []string{"prove", "--device", "cpu", "--circuit", chain, "--out", filepath.Join(root, "out"), "--results", results}
		if asFlag {
			args = append(args, "--jobs", slave.Name())
		}
		cmd := exec.Command(binary(t), args...)
		cmd.Stdin = slave
		if asFlag {
			cmd.Stdin = nil // /dev/null: the terminal comes through --jobs
		}
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go io.Copy(io.Discard, master) // the terminal's echo
		// Wait for the engine to be up (its shape line, which the message
		// follows, or the message itself), then type a job and Ctrl-D at the
		// start of a line: the end of the jobs. A prove that says nothing
		// still ends, and the whole of stderr is checked then.
		var said strings.Builder
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			said.WriteString(sc.Text() + "\n")
			if strings.HasPrefix(sc.Text(), "zkpipe: shape ") || strings.Contains(sc.Text(), "waiting for jobs") {
				break
			}
		}
		if _, err := master.Write([]byte(`{"id":"typed","generate":{"seed":3}}` + "\n\x04")); err != nil {
			t.Fatal(err)
		}
		for sc.Scan() { // the same scanner: it holds what it read ahead
			said.WriteString(sc.Text() + "\n")
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("prove from the terminal: %v\n%s", err, said.String())
		}
		if !strings.Contains(said.String(), "zkpipe: waiting for jobs on the terminal") {
			t.Errorf("jobs from a terminal (as --jobs: %v): prove never said it waits for them:\n%s", asFlag, said.String())
		}
		slave.Close()
		master.Close()
		lines, err := stream.ReadResultsFile(results)
		if err != nil || len(lines) != 1 || lines[0].ID != "typed" || lines[0].Error != "" {
			t.Fatalf("results %+v, %v", lines, err)
		}
	}

	// from a pipe: no word about a terminal
	cmd := exec.Command(binary(t), "prove", "--device", "cpu", "--circuit", chain, "--out", filepath.Join(root, "out2"), "--results", filepath.Join(root, "r2.jsonl"))
	cmd.Stdin = strings.NewReader(`{"id":"piped","generate":{"seed":4}}` + "\n")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "terminal") {
		t.Fatalf("prove from a pipe: %v\n%s", err, out)
	}
}
