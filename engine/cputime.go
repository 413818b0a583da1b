package engine

import (
	"sync"
	"time"

	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/stages"
)

// cpuShare attributes the process's CPU time (user + system, every thread)
// to the stage runs in progress: between two events — a run starting or
// ending — the CPU the process used is split evenly among the runs active
// then. A run alone in the process gets exactly its CPU time (and the
// runtime's: GC, the status line); runs that overlap share what they used
// together, so a light stage beside a heavy one is over-counted and the
// heavy one under-counted. Proving one job at a time (zkpipe bench's CPU
// pass) makes every figure exact.
//
// One getrusage call per event, about a microsecond: negligible beside a
// stage's milliseconds.
type cpuShare struct {
	mu     sync.Mutex
	last   time.Duration
	active map[*cpuRun]struct{}
}

type cpuRun struct{ used time.Duration }

func (s *cpuShare) start() *cpuRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	if s.active == nil {
		s.active = make(map[*cpuRun]struct{})
	}
	r := &cpuRun{}
	s.active[r] = struct{}{}
	return r
}

// end stops r and returns the CPU time attributed to it.
func (s *cpuShare) end(r *cpuRun) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	delete(s.active, r)
	return r.used
}

func (s *cpuShare) advanceLocked() {
	now := mem.ProcessCPU()
	d := now - s.last
	s.last = now
	if n := len(s.active); n > 0 && d > 0 {
		each := d / time.Duration(n)
		for r := range s.active {
			r.used += each
		}
	}
}

// addCPU attributes d of CPU time to j's stage.
func addCPU(j *stages.Job, stage string, d time.Duration) {
	if j.CPU == nil {
		j.CPU = make(map[string]time.Duration, len(stages.Names))
	}
	j.CPU[stage] += d
}
