package boundedread_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/blob/boundedread"
)

// MinRate gives a regular file time for its size: a slow read of a large
// key is not cut off at the base timeout, which alone would end it.
func TestMinRateGrowsARegularFilesDeadline(t *testing.T) {
	p := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(p, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	slow := func(f *boundedread.File) (int, error) {
		time.Sleep(400 * time.Millisecond) // a slow disk
		b, err := io.ReadAll(f)
		return len(b), err
	}
	n, err := boundedread.Read(context.Background(), p, boundedread.Options{Timeout: 100 * time.Millisecond, MinRate: 1 << 20}, slow)
	if err != nil || n != 1<<20 {
		t.Fatalf("with MinRate: %d, %v", n, err)
	}
	_, err = boundedread.Read(context.Background(), p, boundedread.Options{Timeout: 100 * time.Millisecond}, slow)
	if !errors.Is(err, boundedread.ErrTimeout) {
		t.Fatalf("without MinRate: %v, want a timeout", err)
	}
}

// ReadLimited refuses a regular file over its limit unread, and fails a
// pipe that gives more than the limit rather than hand on a cut stream.
func TestReadLimited(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 101), 0o644); err != nil {
		t.Fatal(err)
	}
	read := func(r io.Reader) ([]byte, error) { return io.ReadAll(r) }
	_, err := boundedread.ReadLimited(context.Background(), big, "thing", 100, boundedread.Options{}, func(r io.Reader) ([]byte, error) {
		t.Error("read a file over its limit")
		return nil, nil
	})
	if err == nil || !strings.Contains(err.Error(), big+": 101 bytes, more than a thing can be (100)") {
		t.Errorf("regular file: %v", err)
	}
	if b, err := boundedread.ReadLimited(context.Background(), big, "thing", 101, boundedread.Options{}, read); err != nil || len(b) != 101 {
		t.Errorf("at its limit: %d, %v", len(b), err)
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		w.Write(make([]byte, 200))
	}()
	_, err = boundedread.ReadLimited(context.Background(), fifo, "thing", 100, boundedread.Options{Timeout: 5 * time.Second}, read)
	if err == nil || !strings.Contains(err.Error(), fifo+": more than a thing can be (100 bytes)") {
		t.Errorf("pipe: %v", err)
	}
}
