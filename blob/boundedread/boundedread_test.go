package boundedread_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/blob/boundedread"
)

func fifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "w.fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return p
}

// within fails the test if f takes longer than d.
func within(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	t0 := time.Now()
	f()
	if el := time.Since(t0); el > d {
		t.Fatalf("took %v, want under %v", el, d)
	}
}

func TestAFIFONobodyWritesToTimesOut(t *testing.T) {
	p := fifo(t)
	within(t, 3*time.Second, func() {
		_, err := boundedread.ReadAll(context.Background(), p, 100, boundedread.Options{Timeout: time.Second})
		if !errors.Is(err, boundedread.ErrTimeout) || !strings.Contains(err.Error(), p) {
			t.Errorf("error %v, want a timeout naming the path", err)
		}
	})
}

func TestAFIFOWhoseWriterStallsTimesOut(t *testing.T) {
	p := fifo(t)
	go func() {
		// a writer that opens, writes a little and never closes
		w, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		w.Write([]byte("abc"))
		time.Sleep(5 * time.Second)
		w.Close()
	}()
	within(t, 3*time.Second, func() {
		_, err := boundedread.ReadAll(context.Background(), p, 100, boundedread.Options{Timeout: time.Second})
		if !errors.Is(err, boundedread.ErrTimeout) {
			t.Errorf("error %v, want a timeout", err)
		}
	})
}

func TestCancellingTheContextEndsABlockedRead(t *testing.T) {
	p := fifo(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	within(t, 2*time.Second, func() {
		_, err := boundedread.ReadAll(ctx, p, 100, boundedread.Options{Timeout: time.Minute})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
	})
}

func TestAFIFOWithALateWriterIsRead(t *testing.T) {
	p := fifo(t)
	go func() {
		time.Sleep(200 * time.Millisecond)
		w, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		w.Write([]byte("hello"))
		w.Close()
	}()
	data, err := boundedread.ReadAll(context.Background(), p, 100, boundedread.Options{Timeout: 5 * time.Second})
	if err != nil || string(data) != "hello" {
		t.Fatalf("read %q, %v", data, err)
	}
}

func TestDevicesDirectoriesAndHugeFilesAreRefusedFast(t *testing.T) {
	dir := t.TempDir()
	sparse := filepath.Join(dir, "sparse")
	if err := os.WriteFile(sparse, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(sparse, 1<<30); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/dev/zero":                   "character device that cannot be read with a deadline",
		dir:                           "a directory",
		sparse:                        "1073741824 bytes, more than the 100 expected",
		filepath.Join(dir, "missing"): "no such file",
	} {
		within(t, time.Second, func() {
			_, err := boundedread.ReadAll(context.Background(), path, 100, boundedread.Options{Timeout: time.Second})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %v, want %q", path, err, want)
			}
		})
	}
}
