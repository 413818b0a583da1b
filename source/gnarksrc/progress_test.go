package gnarksrc_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/internal/syncbuf"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

// TestLoadReportsProgress: with Progress set, loading a circuit directory
// says, for each of its files, how long its load took (every load outlasts
// an interval of 1 ns), naming the file and the bytes read; without it, or
// with no interval, nothing is said.
func TestLoadReportsProgress(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	if _, err := gnarksrc.Setup("mulchain", 1<<10, dir); err != nil {
		t.Fatal(err)
	}
	var log syncbuf.Buffer
	if _, err := gnarksrc.LoadDirWith(dir, gnarksrc.Options{Progress: &log, ProgressEvery: time.Nanosecond}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{gnarksrc.R1CSFile, gnarksrc.PKFile, gnarksrc.VKFile} {
		if !strings.Contains(log.String(), "zkpipe: loaded "+filepath.Join(dir, f)+" (") {
			t.Errorf("no load line for %s:\n%s", f, log.String())
		}
	}
	var quiet syncbuf.Buffer
	if _, err := gnarksrc.LoadDirWith(dir, gnarksrc.Options{Progress: &quiet}); err != nil {
		t.Fatal(err)
	}
	if quiet.String() != "" {
		t.Errorf("progress with no interval: %q", quiet.String())
	}
}
