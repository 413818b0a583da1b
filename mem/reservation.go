package mem

import (
	"math"
	"sync"
)

// Reservation is one job's hold on the memory budget, from admission until
// the job leaves the pipeline. Stages hand parts back as they free buffers.
// A nil *Reservation is valid and holds nothing.
//
// A Reservation from Governor.Admit also records the job's memory as the
// governor saw it while the job was in flight: the highest RSS sampled and
// the minor page faults attributed to it (PeakRSS, MinorFaults).
type Reservation struct {
	mu      sync.Mutex
	held    int64
	initial int64
	release func(int64) // hands bytes back to whoever granted them
	closed  bool
	onClose func(rest int64) // the governor's: takes back the rest and ends the job's accounting
	input   bool             // the governor's Hold: an input held, not a job admitted

	// measured while in flight (the governor writes them under mu)
	peakRSS int64
	faults  float64 // a share of the process's faults; see Governor
}

// NewReservation holds bytes, handing them back through release.
func NewReservation(bytes int64, release func(int64)) *Reservation {
	return &Reservation{held: bytes, initial: bytes, release: release}
}

// Bytes is what is still held.
func (r *Reservation) Bytes() int64 {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

// Reserved is what was granted at admission.
func (r *Reservation) Reserved() int64 {
	if r == nil {
		return 0
	}
	return r.initial
}

// Release hands back up to bytes early.
func (r *Reservation) Release(bytes int64) {
	if r == nil || bytes <= 0 {
		return
	}
	r.mu.Lock()
	bytes = min(bytes, r.held)
	r.held -= bytes
	r.mu.Unlock()
	if bytes > 0 && r.release != nil {
		r.release(bytes)
	}
}

// Close hands back the rest; calling it again does nothing.
func (r *Reservation) Close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	rest, first := r.held, !r.closed
	r.held, r.closed = 0, true
	r.mu.Unlock()
	switch {
	case first && r.onClose != nil:
		r.onClose(rest)
	case rest > 0 && r.release != nil:
		r.release(rest)
	}
}

// PeakRSS is the highest process RSS sampled while the job was admitted
// (every 20 ms, and at admission and close); 0 without a governor.
func (r *Reservation) PeakRSS() int64 {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.peakRSS
}

// MinorFaults is the job's share of the process's minor page faults while it
// was admitted: the faults of each sampling interval are split evenly among
// the jobs admitted during it, so the shares of all jobs add up to the
// process's faults while any job was in flight, and a job alone in the
// pipeline gets exactly the process's.
func (r *Reservation) MinorFaults() int64 {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return int64(math.Round(r.faults))
}

// observe records one sample for the job.
func (r *Reservation) observe(rss int64, faults float64) {
	r.mu.Lock()
	r.peakRSS = max(r.peakRSS, rss)
	r.faults += faults
	r.mu.Unlock()
}
