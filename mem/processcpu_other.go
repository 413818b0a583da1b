//go:build !unix

package mem

import "time"

// ProcessCPU is not measured here: every stage reports 0 CPU time.
func ProcessCPU() time.Duration { return 0 }
