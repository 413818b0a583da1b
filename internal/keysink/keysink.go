// Package keysink holds a proofdata.BaseSink for tests of the sources that
// stream a key file's bases (gnarksrc, circomsrc): it assembles what a
// stream hands it, a part at a time, so a test can hold it against the
// key read whole, and counts how often each point was written.
package keysink

import (
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/zkpipe/zkpipe/proofdata"
)

// Recorder is the assembled parts (Bytes, in the host slices' layout) and
// each point's writes (Writes), by part.
type Recorder struct {
	mu     sync.Mutex
	Bytes  map[proofdata.KeyParts][]byte
	Writes map[proofdata.KeyParts][]int
	size   map[proofdata.KeyParts]int // a point's bytes
}

// New is a Recorder with room for every base part of k, at k's sizes.
func New(k *proofdata.Key) *Recorder {
	p := k.Curve.Params()
	s := &Recorder{Bytes: map[proofdata.KeyParts][]byte{}, Writes: map[proofdata.KeyParts][]int{}, size: map[proofdata.KeyParts]int{}}
	for part, n := range map[proofdata.KeyParts]int{proofdata.PartA: k.Size.A, proofdata.PartB1: k.Size.B, proofdata.PartK: k.Size.K, proofdata.PartZ: k.Size.Z, proofdata.PartB2: k.Size.B2} {
		size := p.G1AffineBytes
		if part == proofdata.PartB2 {
			size = p.G2AffineBytes
		}
		s.Bytes[part], s.Writes[part], s.size[part] = make([]byte, n*size), make([]int, n), size
	}
	return s
}

// Write is proofdata.BaseSink's: it may be called from several goroutines.
func (s *Recorder) Write(part proofdata.KeyParts, at, count int, points []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	copy(s.Bytes[part][at*s.size[part]:], points[:count*s.size[part]])
	for i := at; i < at+count; i++ {
		s.Writes[part][i]++
	}
	return nil
}

// BaseBytes is the memory of k's bases in the host slices' layout.
func BaseBytes(k *proofdata.Key) int64 {
	p := k.Curve.Params()
	return int64(k.Size.A+k.Size.B+k.Size.K+k.Size.Z)*int64(p.G1AffineBytes) + int64(k.Size.B2)*int64(p.G2AffineBytes)
}

// Allocated is the heap memory f allocated (TotalAlloc), counted from a
// collection: how a test tells a stream that holds no whole part from a
// read into the host copy.
func Allocated(f func() error) (int64, error) {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	err := f()
	runtime.ReadMemStats(&m1)
	return int64(m1.TotalAlloc - m0.TotalAlloc), err
}

// Watch records what a key's deferred parts were asked for: the parts
// streamed and fetched, and how many times Stream was called.
type Watch struct {
	mu                sync.Mutex
	streamed, fetched proofdata.KeyParts
	streams           int
}

// WatchKey wraps k's deferral (its source's) in one that records into the
// Watch it returns and then reads as the source's would.
func WatchKey(k *proofdata.Key) *Watch {
	inner := *k // the source's own deferral
	w := &Watch{}
	k.SetDeferred(&proofdata.DeferredParts{Parts: inner.Deferred(),
		Fetch: func(parts proofdata.KeyParts) error {
			w.mu.Lock()
			w.fetched |= parts
			w.mu.Unlock()
			return inner.Need(parts)
		},
		Stream: func(parts proofdata.KeyParts, sink proofdata.BaseSink) error {
			w.mu.Lock()
			w.streams++
			w.streamed |= parts
			w.mu.Unlock()
			return inner.Stream(parts, sink)
		}})
	return w
}

// Streamed is the parts streamed so far, Fetched those fetched, and
// Streams the calls to Stream.
func (w *Watch) Streamed() proofdata.KeyParts {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.streamed
}

func (w *Watch) Fetched() proofdata.KeyParts {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fetched
}

func (w *Watch) Streams() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.streams
}

// ReadDeferred reads every part k's source left unread, as a GPU's load
// streams them (into no memory) and then as the CPU's fetches them (into
// the host copy): the first error either gives.
func ReadDeferred(k *proofdata.Key) error {
	if err := k.CheckDeferred(); err != nil {
		return err
	}
	return k.Need(proofdata.AllParts)
}

// Agree says how a whole read's outcome and a deferred read's (its load,
// then ReadDeferred) of the same damaged file differ: one refused it and
// the other did not, or a refusal does not name file. nil when they agree.
func Agree(whole, deferred error, file string) error {
	if (whole == nil) != (deferred == nil) {
		return fmt.Errorf("the whole read says %v, the deferred one %v", whole, deferred)
	}
	for _, err := range []error{whole, deferred} {
		if err != nil && !strings.Contains(err.Error(), file) {
			return fmt.Errorf("%v does not name %s", err, file)
		}
	}
	return nil
}
