package circomsrc

import (
	"os"
	"syscall"
)

// maxRSS is a finished child's peak resident memory in bytes (Linux gives
// ru_maxrss in KiB).
func maxRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss << 10
	}
	return 0
}
