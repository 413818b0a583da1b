package boundedread_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/blob/boundedread"
)

// With IOTime, a reader's work between reads (a decoder's square roots)
// does not count against the deadline; without, it does. The work here
// is a wait longer than the timeout between two reads.
func TestIOTimeCountsOnlyWaiting(t *testing.T) {
	p := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(p, make([]byte, 1<<16), 0o644); err != nil {
		t.Fatal(err)
	}
	work := func(f *boundedread.File) (int, error) {
		head := make([]byte, 16)
		if _, err := io.ReadFull(f, head); err != nil {
			return 0, err
		}
		time.Sleep(300 * time.Millisecond) // decoding, not waiting for the file
		rest, err := io.ReadAll(f)
		return len(head) + len(rest), err
	}
	o := boundedread.Options{Timeout: 50 * time.Millisecond, IOTime: true}
	if n, err := boundedread.Read(context.Background(), p, o, work); err != nil || n != 1<<16 {
		t.Fatalf("IOTime: %d, %v", n, err)
	}
	o.IOTime = false
	if _, err := boundedread.Read(context.Background(), p, o, work); !errors.Is(err, boundedread.ErrTimeout) {
		t.Fatalf("without IOTime: %v, want a timeout", err)
	}
}

// With IOTime, a FIFO nobody writes to, and one whose writer stalls after
// a few bytes, still time out, saying the time was spent waiting; a
// cancelled context still wakes a blocked read.
func TestIOTimeStillCatchesAStall(t *testing.T) {
	o := boundedread.Options{Timeout: 200 * time.Millisecond, IOTime: true}
	p := fifo(t)
	_, err := boundedread.ReadAll(context.Background(), p, 100, o)
	if !errors.Is(err, boundedread.ErrTimeout) || !strings.Contains(err.Error(), "of waiting for the file") {
		t.Fatalf("nobody writes: %v", err)
	}

	q := fifo(t)
	release := make(chan struct{})
	defer close(release)
	go func() {
		w, err := os.OpenFile(q, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		w.Write([]byte("abc"))
		<-release // a writer that stalls until the test ends
	}()
	if _, err := boundedread.ReadAll(context.Background(), q, 100, o); !errors.Is(err, boundedread.ErrTimeout) {
		t.Fatalf("stalled writer: %v, want a timeout", err)
	}

	r := fifo(t)
	ctx, cancel := context.WithCancel(context.Background())
	o.Timeout = time.Hour
	go func() {
		w, err := os.OpenFile(r, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		w.Write([]byte("abc"))
		cancel() // once the reader has its first bytes
		<-release
	}()
	if _, err := boundedread.ReadAll(ctx, r, 100, o); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v, want context.Canceled", err)
	}
}
