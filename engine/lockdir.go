package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LockDir takes the lock OpenOutDir takes on an output directory, on any
// directory a zkpipe process must hold alone (serve's --store): an
// exclusive flock on DIR/.zkpipe.lock, dropped by the kernel however the
// process dies. A directory another process holds is refused with an
// error wrapping ErrDirInUse that names the holder's pid when it is known.
func LockDir(dir string) (unlock func() error, err error) {
	path := filepath.Join(dir, LockFile)
	unlock, err = lockDir(path)
	if errors.Is(err, ErrDirInUse) {
		if pid := lockHolder(path); pid > 0 {
			return nil, fmt.Errorf("%w: held by process %d", err, pid)
		}
	}
	return unlock, err
}

// lockHolder is the pid the holder of the lock file wrote in it (its first
// line: lockDir writes over an older, longer pid without truncating), or 0.
func lockHolder(path string) int {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 64 {
		return 0
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
