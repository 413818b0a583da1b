//go:build unix

package mem

import "syscall"

// minorFaults is the process's minor page faults so far (getrusage).
func minorFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return int64(ru.Minflt)
}
