//go:build unix

package engine

import (
	"fmt"
	"os"
	"syscall"
)

// lockDir takes an exclusive, non-blocking flock on path. The kernel drops
// it when the process dies, however it dies, so a kill -9 leaves no stale
// lock behind.
func lockDir(path string) (func() error, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if err == syscall.EWOULDBLOCK {
			return nil, fmt.Errorf("%w (%s is locked)", ErrDirInUse, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	fmt.Fprintf(f, "%d\n", os.Getpid())
	return func() error {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return f.Close()
	}, nil
}
