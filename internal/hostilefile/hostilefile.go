// Package hostilefile makes the files a hostile user hands a loader, for
// tests of bounded reads: a FIFO nobody writes to, /dev/zero, and a sparse
// file of a terabyte, each with (part of) the error boundedread gives for it.
package hostilefile

import (
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
