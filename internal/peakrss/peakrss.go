// Package peakrss measures a child process's own peak resident memory, for
// tests that bound what a zkpipe process may take.
//
// Not os.ProcessState's ru_maxrss: Go starts children with vfork, and at
// exec Linux folds the mm the child leaves (its parent's, shared) into the
// child's ru_maxrss, so every child of a test process that has grown to
// 370 MiB reports at least 370 MiB. VmHWM in /proc/PID/status is the
// high-water mark of the child's own address space after its exec.
package peakrss

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Watch samples VmHWM of the process pid, which is to run the program
// named by path, every millisecond until the process is gone; Peak, called
// after the caller's Wait, returns the highest sample in bytes. Samples
// taken before the exec (the process still named after its parent) are
// ignored.
func Watch(pid int, path string) *Watcher {
	w := &Watcher{done: make(chan struct{})}
	name := filepath.Base(path)
	if len(name) > 15 { // the kernel's comm is 15 bytes
		name = name[:15]
	}
	go func() {
		defer close(w.done)
		status := fmt.Sprintf("/proc/%d/status", pid)
		for {
			hwm, ok := sample(status, name)
			if !ok {
				return
			}
			w.peak = max(w.peak, hwm)
			time.Sleep(time.Millisecond)
		}
	}()
	return w
}

// Watcher is a running Watch.
type Watcher struct {
	done chan struct{}
	peak int64
}

// Peak waits for the watched process to be gone (call it after Wait) and
// returns its highest VmHWM in bytes.
func (w *Watcher) Peak() int64 {
	<-w.done
	return w.peak
}

// sample reads VmHWM from a status file; ok is false once the process is
// gone (or a zombie, whose status has no Vm lines).
func sample(status, name string) (hwm int64, ok bool) {
	f, err := os.Open(status)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	ours, vm := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if v, found := strings.CutPrefix(line, "Name:"); found {
			ours = strings.TrimSpace(v) == name
		}
		if v, found := strings.CutPrefix(line, "VmHWM:"); found {
			vm = true
			kib, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if ours {
				hwm = kib << 10
			}
		}
	}
	return hwm, vm || !ours
}

// Run runs cmd as cmd.Run does and returns its peak resident memory in
// bytes (0 if it never started).
func Run(cmd *exec.Cmd) (int64, error) {
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	w := Watch(cmd.Process.Pid, cmd.Path)
	err := cmd.Wait()
	return w.Peak(), err
}
