package gnarksrc

import (
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
)

// varintPiece is the bytes of the calldata one task of walkVarints reads
// (a buffer a worker: 16 MiB on 16 cores).
var varintPiece int64 = 1 << 20

// walkVarints checks that the bytes [start, end) of r are count varints
// of a u32, at most 5 bytes each, and nothing after them, as count walks
// of a varint then a check of the section's end would, but over all
// cores, a piece at a time: a 2^27 porep's calldata is some 5 GB, a
// serial walk some 15 s. Each piece's bytes below 0x80 (a varint's last)
// are counted, and its runs of bytes of 0x80 and over (a varint's first
// four at most) measured at its ends and within; the pieces' runs are
// joined in order. The walk stops once the pieces read hold more varints
// than count (a section grown with zeros: each a varint).
func walkVarints(r io.ReaderAt, start, end int64, count uint64) error {
	n := end - start
	type piece struct {
		ends       uint64 // varints ending in it
		lead, tail int64  // bytes ≥ 0x80 before its first end, after its last (no end: lead is the piece)
		inner      int64  // the longest run between two ends, and where it starts
		innerAt    int64
		err        error
	}
	nbPieces := int((n + varintPiece - 1) / varintPiece)
	pieces := make([]piece, nbPieces)
	var next atomic.Int64
	var seen atomic.Uint64 // varints counted so far
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), nbPieces) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, varintPiece)
			for {
				k := int(next.Add(1)) - 1
				if k >= nbPieces || seen.Load() > count {
					return
				}
				p := &pieces[k]
				at := start + int64(k)*varintPiece
				b := buf[:min(varintPiece, end-at)]
				if _, err := r.ReadAt(b, at); err != nil {
					p.err = fmt.Errorf("at byte %d: %w", at, err)
					return
				}
				run, first := int64(0), true
				for i, c := range b {
					if c >= 0x80 {
						run++
						continue
					}
					p.ends++
					if first {
						p.lead, first = run, false
					} else if run > p.inner {
						p.inner, p.innerAt = run, at+int64(i)-run
					}
					run = 0
				}
				if first {
					p.lead = run
				} else {
					p.tail = run
				}
				seen.Add(p.ends)
			}
		}()
	}
	wg.Wait()
	if seen.Load() > count {
		return fmt.Errorf("more than its %d varints before byte %d", count, end)
	}
	run, runAt := int64(0), start // the run of bytes ≥ 0x80 open at a piece's start
	for k, p := range pieces {
		if p.err != nil {
			return p.err
		}
		at := start + int64(k)*varintPiece
		if p.ends == 0 { // the run goes on through the piece
			if run == 0 {
				runAt = at
			}
			run += p.lead
		} else {
			if run+p.lead >= binary.MaxVarintLen32 {
				return fmt.Errorf("a varint of more than 5 bytes at byte %d", runAt)
			}
			if p.inner >= binary.MaxVarintLen32 {
				return fmt.Errorf("a varint of more than 5 bytes at byte %d", p.innerAt)
			}
			run, runAt = p.tail, at+min(varintPiece, end-at)-p.tail
		}
		if run >= binary.MaxVarintLen32 {
			return fmt.Errorf("a varint of more than 5 bytes at byte %d", runAt)
		}
	}
	switch total := seen.Load(); {
	case run > 0:
		return fmt.Errorf("a varint overruns its section at byte %d", end)
	case total != count:
		return fmt.Errorf("its %d varints end at byte %d: it holds %d", count, end, total)
	}
	return nil
}
