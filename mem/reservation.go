package mem

import "sync"

// Reservation is one job's hold on the memory budget, from admission until
// the job leaves the pipeline. Stages hand parts back as they free buffers.
// A nil *Reservation is valid and holds nothing.
type Reservation struct {
	mu      sync.Mutex
	held    int64
	initial int64
	release func(int64) // hands bytes back to whoever granted them
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
	r.Release(r.Bytes())
}
