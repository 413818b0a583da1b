package gpu

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/zkpipe/zkpipe/proofdata"
)

// ─── pin/transfer: classification straight into pinned memory ───────────────

// TransferClassify is Transfer for vectors whose queries are not
// classified yet: it classifies w[selA[j]], w[selB[j]] and w[selK[j]]
// itself, a chunk at a time, straight into a transfer lane's pinned
// buffers, and the device copies each chunk from there while the CPU
// classifies the next into the other buffer. Against Classify then
// Transfer, the queries skip the pageable copy and its memcpy into the
// bounce buffers (36 B a scalar written and read again). v.QA, v.QB and
// v.QK get Len, NumOnes and Dense only: their values live on the device.
//
// hostB: B's query is already classified in v.QB and is uploaded from
// there as Transfer does (selB unused), for a B_G2 on the CPU, which reads
// that host copy. w must stay unchanged until TransferClassify returns.
func (c *CUDA) TransferClassify(ctx context.Context, res proofdata.Resident, v *proofdata.Vectors, w []proofdata.Scalar, selA, selB, selK []uint32, hostB bool) (*proofdata.Staged, error) {
	r, ok := res.(*cudaResident)
	if !ok {
		return nil, fmt.Errorf("cuda: resident of another backend")
	}
	k := r.key
	n := k.N()
	switch {
	case len(v.A) > n || len(v.B) > n || len(v.C) > n:
		return nil, fmt.Errorf("transfer: %d/%d/%d evaluations for a domain of %d", len(v.A), len(v.B), len(v.C), n)
	case len(selA) != k.Size.A || len(selK) != k.Size.K || !hostB && len(selB) != k.Size.B:
		return nil, fmt.Errorf("transfer: %d A, %d B and %d K scalars for %d, %d and %d bases", len(selA), len(selB), len(selK), k.Size.A, k.Size.B, k.Size.K)
	}
	if hostB {
		if err := checkQuery("B", &v.QB, k.Size.B); err != nil {
			return nil, err
		}
	}
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	// a, b, c padded to n, and, from the host, B's bitmap, values and indexes
	bufs := []hostBuf{bufOf(v.A, n), bufOf(v.B, n), bufOf(v.C, n)}
	if hostB {
		words := (v.QB.Len + 63) / 64
		bufs = append(bufs, bufOf(v.QB.Ones[:words], words), bufOf(v.QB.Vals, len(v.QB.Vals)))
		if !v.QB.Dense {
			bufs = append(bufs, bufOf(v.QB.Idx, len(v.QB.Idx)))
		}
	}
	p, err := c.stage(bufs)
	if err != nil {
		return nil, err
	}
	st := &cudaStaged{a: p[0], b: p[1], c: p[2], bufs: p}
	qs := []pinnedQuery{{sel: selA, dev: &st.q[0], host: &v.QA}, {sel: selK, dev: &st.q[2], host: &v.QK}}
	if hostB {
		qb := &st.q[1]
		qb.len, qb.nvals, qb.ones, qb.vals = v.QB.Len, len(v.QB.Vals), p[3], p[4]
		if !v.QB.Dense {
			qb.idx = p[5]
		}
	} else {
		qs = append(qs, pinnedQuery{sel: selB, dev: &st.q[1], host: &v.QB})
	}
	if r.streamed {
		for i := range qs {
			qs[i].piece = c.streamPiece
		}
		if hostB {
			st.q[1].cuts = cutsOf(v.QB.Idx, v.QB.Len, c.streamPiece)
		}
	}
	if err := c.classifyQueries(ctx, st, r.one, w, v.Tail, qs); err != nil {
		c.freeStaged(st)
		return nil, err
	}
	c.liveMu.Lock()
	c.staged[st] = struct{}{}
	c.liveMu.Unlock()
	return &proofdata.Staged{Resident: res, Host: v, Device: st}, nil
}

// pinnedQuery is one query TransferClassify classifies: the scalars
// w[sel[j]], into dev on the device; host gets its counts.
type pinnedQuery struct {
	sel  []uint32
	dev  *cudaQuery
	host *proofdata.Query
	room int // the significant scalars dev's values and indexes hold
	// piece: the points of a streamed piece of the query's bases, whose
	// significant scalars classifyInto counts (cudaQuery.cuts); 0: not streamed
	piece int
}

// classifyQueries allocates each query's device buffers (its bitmap, and
// values and indexes for at most tail significant scalars, or all of them
// for tail ≤ 0: JobBytes counts them so) and classifies the queries at
// once, one lane each (one: 1 in the key's Fr). The buffers join st.bufs as they are
// allocated, so that freeing st frees them whatever failed.
func (c *CUDA) classifyQueries(ctx context.Context, st *cudaStaged, one proofdata.Scalar, w []proofdata.Scalar, tail int, qs []pinnedQuery) error {
	var e cerr
	for i := range qs {
		q := &qs[i]
		n := len(q.sel)
		q.room = n
		if tail > 0 {
			q.room = min(n, tail)
		}
		for _, d := range []struct {
			p     *uintptr
			bytes int
		}{{&q.dev.ones, 8 * ((n + 63) / 64)}, {&q.dev.vals, proofdata.ScalarBytes * q.room}, {&q.dev.idx, 4 * q.room}} {
			p, err := c.alloc(d.bytes, c.xfer)
			if err != nil {
				return err
			}
			st.bufs = append(st.bufs, p)
			*d.p = p
		}
	}
	// the lanes' streams use the buffers once their allocation is done
	if err := e.err("sync", c.fn.streamSync(c.xfer, e.p())); err != nil {
		return err
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	// the classifying goroutines shared out among the queries at once
	workers := c.classifyWorkers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	each := max(1, (workers+len(qs)-1)/len(qs))
	for _, q := range qs {
		l, err := c.takeLane()
		if err != nil {
			first = err
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := c.classifyInto(ctx, l, one, w, q, each)
			c.lanes <- l
			if err != nil {
				mu.Lock()
				first = errors.Join(first, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

// classifyInto classifies q (one: 1 in the key's Fr) a chunk at a time into l's two pinned buffers
// in turn, each laid out as [bitmap words | values | indexes], and queues
// the chunk's copies on l's stream. Before it queues chunk i it waits for
// chunk i−1's copies, whose buffer chunk i+1 fills next: classifying chunk
// i overlaps the copies of chunk i−1. Up to workers goroutines classify a
// chunk, in parts (proofdata.ClassifyParts) each copied to its place
// after the parts before it: the device gets what one goroutine would
// have put there.
func (c *CUDA) classifyInto(ctx context.Context, l *cudaLane, one proofdata.Scalar, w []proofdata.Scalar, q pinnedQuery, workers int) error {
	n := len(q.sel)
	// scalars a chunk: a multiple of 64 (whole bitmap words), 36⅛ B each
	per := c.pinBytes * 8 / (8*(proofdata.ScalarBytes+4) + 1) / 64 * 64
	var e cerr
	wait := func() error { return e.err("upload sync", c.fn.streamSync(l.stream, e.p())) }
	h2d := func(dst uintptr, src unsafe.Pointer, bytes int) error {
		if bytes == 0 {
			return nil
		}
		return e.err("upload", c.fn.h2dAsync(dst, src, uint64(bytes), l.stream, e.p()))
	}
	var parts []proofdata.ClassifyPart
	var counts []int // significant scalars a streamed piece
	if q.piece > 0 {
		counts = make([]int, piecesOf(n, q.piece))
	}
	k, ones := 0, 0
	for i, lo := 0, 0; lo < n; i, lo = i+1, lo+per {
		if err := ctx.Err(); err != nil {
			return errors.Join(err, wait())
		}
		hi := min(lo+per, n)
		pin := l.pin[i&1]
		bits := unsafe.Slice((*uint64)(pin), (hi-lo+63)/64)
		vals := unsafe.Slice((*proofdata.Scalar)(unsafe.Add(pin, per/8)), hi-lo)
		idx := unsafe.Slice((*uint32)(unsafe.Add(pin, per/8+proofdata.ScalarBytes*per)), hi-lo)
		parts = proofdata.ClassifyParts(one, w, q.sel, lo, hi, bits, idx, vals, workers, parts)
		if err := wait(); err != nil {
			return err
		}
		err := h2d(q.dev.ones+uintptr(lo/8), unsafe.Pointer(&bits[0]), 8*len(bits))
		for _, p := range parts {
			if k+p.K > q.room {
				// Vectors.Tail undercounted W: never write past the buffers
				return errors.Join(fmt.Errorf("transfer: a query has more than the %d significant scalars counted in W", q.room), wait())
			}
			off := p.Lo - lo
			err = errors.Join(err,
				h2d(q.dev.vals+uintptr(proofdata.ScalarBytes*k), unsafe.Pointer(&vals[off]), proofdata.ScalarBytes*p.K),
				h2d(q.dev.idx+uintptr(4*k), unsafe.Pointer(&idx[off]), 4*p.K))
			if counts != nil {
				countPieces(counts, idx[off:off+p.K], q.piece)
			}
			k, ones = k+p.K, ones+p.NumOnes
		}
		if err != nil {
			return errors.Join(err, wait())
		}
	}
	if err := wait(); err != nil {
		return err
	}
	q.dev.len, q.dev.nvals = n, k
	if counts != nil {
		q.dev.cuts = pieceCuts(counts)
	}
	*q.host = proofdata.Query{Len: n, NumOnes: ones, Dense: k == n}
	if k == n {
		q.dev.idx = 0 // dense: the bases as they are (the buffer is freed with the rest)
	}
	return nil
}
