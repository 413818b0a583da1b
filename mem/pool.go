package mem

import (
	"math/bits"
	"sync"
)

// Pool hands out slices of T from free lists keyed by capacity class (powers
// of two), so a stream of proofs of one circuit reuses the same few large
// vectors instead of allocating and faulting in fresh ones every proof (on the
// H200 machine first-touching 4 GiB took 3.9 s).
//
// Unlike sync.Pool, a Pool keeps what it is given across garbage collections:
// dropping a 32 MiB vector only to fault it in again is the cost it exists to
// avoid. Limit bounds how many slices each class keeps. The zero value is
// ready to use with Limit 4.
type Pool[T any] struct {
	Limit int // slices kept per capacity class; 0 means 4

	mu   sync.Mutex
	free map[int][][]T // class → slices
}

// Get returns a slice of length n whose contents are unspecified (a reused
// slice keeps its old values; callers that need zeros must clear it).
func (p *Pool[T]) Get(n int) []T {
	if n == 0 {
		return nil
	}
	c := class(n)
	p.mu.Lock()
	if l := p.free[c]; len(l) > 0 {
		s := l[len(l)-1]
		p.free[c] = l[:len(l)-1]
		p.mu.Unlock()
		return s[:n]
	}
	p.mu.Unlock()
	return make([]T, n, 1<<c)
}

// Put gives s back for reuse. s must have come from Get and must not be used
// after Put.
func (p *Pool[T]) Put(s []T) {
	if cap(s) == 0 {
		return
	}
	c := class(cap(s))
	if 1<<c != cap(s) {
		return // not one of ours: let the GC have it
	}
	limit := p.Limit
	if limit == 0 {
		limit = 4
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.free == nil {
		p.free = make(map[int][][]T)
	}
	if len(p.free[c]) < limit {
		p.free[c] = append(p.free[c], s[:0])
	}
}

// class is the smallest c with 1<<c ≥ n.
func class(n int) int { return bits.Len(uint(n - 1)) }
