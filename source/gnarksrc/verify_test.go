package gnarksrc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
)

// TestVerifyFilesBoundsItsReads: zkpipe verify --circuit, and Done on a
// resumed stream, read files a user names. A FIFO nobody writes to ends
// with ctx (the old os.Open blocked in open(2) for ever), and a huge file
// is refused by its size, unread; errors name the file.
func TestVerifyFilesBoundsItsReads(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "j.proof")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, _, err := verifyFiles(ctx, groth16.NewVerifyingKey(ecc.BN254), HashDefault, fifo, filepath.Join(dir, "j.public"))
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), fifo) {
			t.Errorf("a FIFO proof: got %v, want an error naming it", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("verifyFiles still blocked on a FIFO nobody writes to")
	}

	huge := filepath.Join(dir, "huge.public")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	start := time.Now()
	if _, err := readLimited(context.Background(), huge, 44); err == nil || !strings.Contains(err.Error(), huge+": 1073741824 bytes, more than the 44") {
		t.Errorf("a 1 GiB public witness: got %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("refusing a 1 GiB file took %v: it was read", d)
	}
}
