//go:build !unix

package stages

import "time"

// processCPU is not measured here: every stage reports 0 CPU time.
func processCPU() time.Duration { return 0 }
