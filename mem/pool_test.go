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
	if p.Idle() != 8<<10 || IdleBytes()-before != 8<<10 {
		t.Fatalf("idle %d, all pools %d", p.Idle(), IdleBytes()-before)
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
	if IdleBytes()-before != 1<<20 {
		t.Fatalf("idle %d", IdleBytes()-before)
	}
	q = nil
	runtime.GC()
	runtime.GC()
	if got := IdleBytes() - before; got != 0 {
		t.Fatalf("a collected pool still counts %d bytes", got)
	}
	runtime.KeepAlive(p)
}
