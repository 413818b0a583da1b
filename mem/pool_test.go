package mem

import (
	"runtime"
	"testing"
)

func TestPoolIdleBytes(t *testing.T) {
	before := IdleBytes()
	p := &Pool[uint64]{Limit: 1}
	a, b := p.Get(1000), p.Get(1000) // capacity 1024 words
	if cap(a) != 1024 || ClassBytes[uint64](1000) != 8<<10 {
		t.Fatalf("cap %d, class bytes %d", cap(a), ClassBytes[uint64](1000))
	}
	p.Put(a)
	p.Put(b) // over Limit: dropped
	// other tests' pools can only shrink (be collected) while this runs
	if p.Idle() != 8<<10 || IdleBytes() > before+8<<10 || IdleBytes() < p.Idle() {
		t.Fatalf("idle %d, all pools %d (before %d)", p.Idle(), IdleBytes(), before)
	}
	if c := p.Get(700); cap(c) != 1024 || p.Idle() != 0 {
		t.Fatalf("reuse: cap %d, idle %d", cap(c), p.Idle())
	}
	p.Put(make([]uint64, 100)) // not from a Pool: ignored
	if p.Idle() != 0 {
		t.Fatalf("idle %d after a foreign Put", p.Idle())
	}

	// a pool nobody holds stops counting
	q := &Pool[byte]{}
	q.Put(q.Get(1 << 20))
	alive := IdleBytes()
	if alive < 1<<20 {
		t.Fatalf("idle %d with a pool keeping 1 MiB", alive)
	}
	q = nil
	runtime.GC()
	runtime.GC()
	if got := IdleBytes(); got > alive-1<<20 {
		t.Fatalf("a collected pool still counts: %d bytes idle, %d before it went", got, alive)
	}
	runtime.KeepAlive(p)
}
