package mem

import (
	"math/bits"
	"sync"
	"unsafe"
	"weak"
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
//
// The bytes a Pool keeps idle are resident but promised to no job; the
// Governor counts them as reusable (IdleBytes), since the next job of the same
// circuit takes them instead of new pages.
type Pool[T any] struct {
	Limit int // slices kept per capacity class; 0 means 4

	mu         sync.Mutex
	free       map[int][][]T // class → slices
	idle       int64         // bytes in free
	registered bool
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
		p.idle -= sizeOf[T](cap(s))
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
	if p.free == nil {
		p.free = make(map[int][][]T)
	}
	first := !p.registered
	p.registered = true
	if len(p.free[c]) < limit {
		p.free[c] = append(p.free[c], s[:0])
		p.idle += sizeOf[T](cap(s))
	}
	p.mu.Unlock()
	if first {
		register(p) // outside p.mu: IdleBytes takes the registry's lock, then p.mu
	}
}

// Idle is the bytes p keeps for reuse now.
func (p *Pool[T]) Idle() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.idle
}

// class is the smallest c with 1<<c ≥ n.
func class(n int) int { return bits.Len(uint(n - 1)) }

// ClassBytes is what a Pool of T really allocates for a slice of n: its
// capacity is rounded up to a power of two (the Governor's footprints use it).
func ClassBytes[T any](n int) int64 {
	if n <= 0 {
		return 0
	}
	return sizeOf[T](1 << class(n))
}

func sizeOf[T any](n int) int64 {
	var zero T
	return int64(unsafe.Sizeof(zero)) * int64(n)
}

// pools holds a weak pointer to every Pool that has kept something, so that
// IdleBytes can add them up without keeping dead engines' pools alive.
var pools struct {
	sync.Mutex
	idle []func() (int64, bool) // bytes idle; false once the pool is gone
}

func register[T any](p *Pool[T]) {
	w := weak.Make(p)
	pools.Lock()
	defer pools.Unlock()
	pools.idle = append(pools.idle, func() (int64, bool) {
		q := w.Value()
		if q == nil {
			return 0, false
		}
		return q.Idle(), true
	})
}

// IdleBytes is the bytes all live Pools keep idle.
func IdleBytes() int64 {
	pools.Lock()
	defer pools.Unlock()
	var sum int64
	live := pools.idle[:0]
	for _, f := range pools.idle {
		if n, ok := f(); ok {
			sum += n
			live = append(live, f)
		}
	}
	clear(pools.idle[len(live):])
	pools.idle = live
	return sum
}
