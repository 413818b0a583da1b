package mem

import (
	"bytes"
	"os"
	"runtime/metrics"
	"strconv"
	"sync"
)

// Usage is one reading of the process's memory.
type Usage struct {
	RSS int64 // resident bytes (/proc/self/statm; the Go runtime's own count elsewhere)
	// Reusable is the part of RSS a new job can draw on without touching new
	// pages: buffers kept idle by Pools, and Go heap memory that is free but
	// not yet returned to the OS (runtime/metrics /memory/classes/heap/free).
	Reusable    int64
	MinorFaults int64 // since the process started (getrusage ru_minflt)
	// Go is the memory the Go runtime holds from the OS (runtime/metrics
	// total less released); RSS beyond it is the binary, C libraries and
	// pinned buffers, which the Go memory limit does not see.
	Go int64
	// GoHeld is Go less its free heap: live objects (and garbage not yet
	// swept), fragmentation, stacks and the runtime's own metadata, which
	// are resident wherever they were touched. RSS − Reusable can fall
	// below it, even below zero: heap/free also counts the pages of freed
	// objects that were never touched (a fresh span needs no zeroing), which
	// are not resident. A floor that must hold what the process keeps uses
	// the larger of the two (engine's chargeResident).
	GoHeld int64
}

// ReadUsage measures the process now. It costs about 10 µs: one read of
// /proc/self/statm, one getrusage and a runtime/metrics read.
func ReadUsage() Usage {
	var u Usage
	heap := readHeap()
	u.RSS = readStatm()
	u.Go = heap.total - heap.released
	u.GoHeld = u.Go - heap.free
	if u.RSS <= 0 {
		u.RSS = u.Go
	}
	u.Reusable = heap.free + IdleBytes()
	u.MinorFaults = minorFaults()
	return u
}

var pageSize = int64(os.Getpagesize())

// readStatm returns resident bytes from /proc/self/statm ("size resident
// shared …" in pages), or 0 where there is none.
func readStatm() int64 {
	var buf [128]byte
	f, err := os.Open("/proc/self/statm")
	if err != nil {
		return 0
	}
	n, _ := f.Read(buf[:])
	f.Close()
	fields := bytes.Fields(buf[:n])
	if len(fields) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(string(fields[1]), 10, 64)
	if err != nil {
		return 0
	}
	return pages * pageSize
}

var heapSamples = struct {
	sync.Mutex
	s []metrics.Sample
}{s: []metrics.Sample{
	{Name: "/memory/classes/total:bytes"},
	{Name: "/memory/classes/heap/released:bytes"},
	{Name: "/memory/classes/heap/free:bytes"},
}}

type heapUsage struct{ total, released, free int64 }

func readHeap() heapUsage {
	heapSamples.Lock()
	defer heapSamples.Unlock()
	metrics.Read(heapSamples.s)
	v := func(i int) int64 {
		if heapSamples.s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(heapSamples.s[i].Value.Uint64())
	}
	return heapUsage{total: v(0), released: v(1), free: v(2)}
}
