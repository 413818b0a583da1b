// Package hostilefile makes the files a hostile user hands a loader, for
// tests of bounded reads: a FIFO nobody writes to, /dev/zero, and a sparse
// file of a terabyte, each with (part of) the error boundedread gives for it.
package hostilefile

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"
)

// Kind is one hostile file: Make turns path into it; Want is part of the
// error a bounded read of it gives.
type Kind struct {
	Name, Want string
	Make       func(t *testing.T, path string)
}

// Kinds are the FIFO, /dev/zero and the sparse terabyte, in that order.
var Kinds = []Kind{
	{"fifo", "no complete read within", func(t *testing.T, p string) {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}},
	{"dev-zero", "character device", func(t *testing.T, p string) {
		if err := os.Symlink("/dev/zero", p); err != nil {
			t.Fatal(err)
		}
	}},
	{"sparse", "1099511627776 bytes, more than a", func(t *testing.T, p string) {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(1 << 40); err != nil {
			t.Skipf("no terabyte sparse file here: %v", err)
		}
	}},
}

// Damaged is a damaged copy of a file's bytes for the try'th of a test's
// tries (how says which): every fifth cut short at a random length, the
// others with one to four random bytes changed.
func Damaged(r *rand.Rand, orig []byte, try int) (data []byte, how string) {
	if try%5 == 4 {
		return bytes.Clone(orig[:r.IntN(len(orig))]), "cut short"
	}
	data = bytes.Clone(orig)
	for range 1 + r.IntN(4) {
		data[r.IntN(len(data))] ^= byte(1 + r.IntN(255))
	}
	return data, "bytes changed"
}

// Padded writes data to path with pad zero bytes inserted at off, as a
// hole (a sparse file: a few kilobytes on disk for gigabytes of pad): a
// part of a binary file grown in the middle, for a reader that must check
// the part's declared size (grown by pad by the caller) against what the
// file's header says it holds before reading it.
func Padded(t *testing.T, path string, data []byte, off, pad int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data[:off]); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(pad, io.SeekCurrent); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data[off:]); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(int64(len(data)) + pad); err != nil {
		t.Skipf("no sparse file here: %v", err)
	}
}
