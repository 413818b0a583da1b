package circomsrc

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/proofdata"
)

// ─── a zkey's bases, read where they will live ───────────────────────────────
//
// A zkey is almost all points (sections 5–9: A, B1, B2, C, H). Read whole,
// a big key was on the host twice over (the file's bytes, then the parsed
// slices) before a GPU backend copied it to the device and dropped it. So
// LoadFiles, given a regular file, reads only what the circuit needs on the
// host (the headers, IC, the coefficients) and one cheap pass over A, B1
// and C for which points are infinity (the selections: a wire whose point
// is infinity is dropped from its MSM). The point sections stay in the
// file; the circuit's key says so (proofdata.DeferredParts). A GPU backend
// streams them from the file straight to its memory at Load, chunk by
// chunk (Stream); a CPU backend reads them into the host copy (Fetch), as
// the whole read would have. Points are checked as they are read, with the
// whole read's errors (the file, the section, the point).
//
// H is permuted for BLS12-381 (snarkjs's row i is gnark-crypto's row
// rowMul·i mod n, curves.go): a chunk of the file's H is scattered over the
// whole key's H, and a sink takes runs of consecutive points (a GPU upload
// a run; reading H in the key's order instead would be a random read a
// point). So where rowMul is not 1, H streams in windows of rows: each pass
// reads the whole section and keeps the points whose rows fall in its
// window (checking each point once, in its window's pass), then hands the
// window to the sink. The host holds one window (hWindowBytes), at the
// cost of reading H once a window; a fetch into the host copy reads it
// once, straight into its rows.
//
// The file must stay as LoadFiles found it: a read refuses one whose size
// or time changed, or whose section headers or points at infinity are not
// what LoadFiles saw, naming the file.

// streamChunkBytes is how much of a section one chunk of a stream reads
// (tests make it small: many chunks, a short last one).
var streamChunkBytes = 1 << 20

// hWindowBytes bounds the rows of a permuted H one pass of a stream holds
// (a BLS12-381 key of 2^23 rows: one pass; of 2^26, six).
var hWindowBytes = 1 << 30

// zkeySection is one point section left in the file: n points of size
// bytes each from off.
type zkeySection struct {
	typ  uint32
	name string // as the whole read's errors name it
	off  int64
	n    int
	size int
}

// zkeyDeferral is what readZkeyDeferred left in the file.
type zkeyDeferral struct {
	path string
	o    Files
	cc   circomCurve

	parts proofdata.KeyParts
	sect  map[proofdata.KeyParts]zkeySection
	// sel are the wires kept of A, B (B1 and B2) and K (the C section,
	// wires nPublic+1 on): New's selections, which the stream checks the
	// file's points against.
	sel    [3][]uint32
	firstK uint32
	rowMul uint64 // H's point i is the key's row rowMul·i mod n

	size int64 // the file as read: a later read refuses another
	mod  time.Time
}

// the point sections by part: the section type, its name in errors
var zkeyPartSections = map[proofdata.KeyParts]struct {
	typ  uint32
	name string
}{
	proofdata.PartA: {5, "A"}, proofdata.PartB1: {6, "B1"}, proofdata.PartB2: {7, "B2"},
	proofdata.PartK: {8, "C"}, proofdata.PartZ: {9, "H"},
}

// loadZkey reads the zkey at path for LoadFiles: its point sections left
// in the file where it is a regular file (unless o.ReadKeyWhole).
func loadZkey(ctx context.Context, path string, o Files) (*Zkey, error) {
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && !o.ReadKeyWhole {
		return readZkeyDeferred(ctx, path, o)
	}
	return readZkeyFile(ctx, path, o)
}

// seqFile reads a regular file's sections in any order through its Read
// (so boundedread's IOTime clock counts the waits), skipping what it
// leaves unread.
type seqFile struct {
	f   *boundedread.File
	pos int64
}

func (s *seqFile) at(off int64) error {
	if off != s.pos {
		if err := s.f.Skip(off - s.pos); err != nil {
			return err
		}
		s.pos = off
	}
	return nil
}

func (s *seqFile) read(p []byte) error {
	n, err := io.ReadFull(s.f, p)
	s.pos += int64(n)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("the file ends %d bytes short", len(p)-n)
	}
	return err
}

// readZkeyDeferred is readZkeyFile for a regular file, less the point
// sections: their offsets, and which A, B1 and C points are infinity.
func readZkeyDeferred(ctx context.Context, path string, o Files) (*Zkey, error) {
	bo := boundedread.Options{Timeout: o.LoadTimeout, MinRate: loadRate, IOTime: true}
	return boundedread.Read(ctx, path, bo, func(f *boundedread.File) (*Zkey, error) {
		z, err := readZkeyHead(f, path, o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return z, nil
	})
}

func readZkeyHead(f *boundedread.File, path string, o Files) (*Zkey, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if f.Size() < 0 {
		return nil, fmt.Errorf("not a regular file")
	}
	// the table checked against the file before any section is allocated;
	// sections 1–4 read into memory each once its size is what the
	// headers say (the coefficients, the largest, by their count)
	bf, err := fileBinFile(f, "zkey", 1)
	if err != nil {
		return nil, err
	}
	sf := bf.file
	z, err := parseZkeyHead(bf)
	if err != nil {
		return nil, err
	}
	if z, err = parseCoefs(bf, z); err != nil {
		return nil, err
	}
	cc := curveOf(z.Curve)
	p := z.Curve.Params()
	d := &zkeyDeferral{path: path, o: o, cc: cc, sect: map[proofdata.KeyParts]zkeySection{},
		firstK: uint32(z.NPublic + 1), size: st.Size(), mod: st.ModTime()}
	kx, err := cc.power()
	if err != nil {
		return nil, err
	}
	rowMul := kx % uint64(z.DomainSize)
	// each point section's size checked as the whole read checks it
	// (pointsNeed), unread, in the whole read's order
	for _, part := range []proofdata.KeyParts{proofdata.PartA, proofdata.PartB1, proofdata.PartK, proofdata.PartZ, proofdata.PartB2} {
		ps := zkeyPartSections[part]
		n, size := z.NVars, p.G1AffineBytes
		switch part {
		case proofdata.PartK:
			n = z.NVars - z.NPublic - 1
		case proofdata.PartZ:
			n = z.DomainSize
		case proofdata.PartB2:
			size = p.G2AffineBytes
		}
		s, ok, err := bf.span(ps.typ, ps.name, pointsNeed(n, size))
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("zkey: no %s section (type %d)", ps.name, ps.typ)
		}
		d.sect[part] = zkeySection{typ: ps.typ, name: ps.name, off: s.off, n: n, size: size}
		d.parts |= part
	}
	// which A, B1 and C points are infinity: all zero bytes (a point that
	// is not, but is no point either, fails when the bases are read)
	for i, part := range []proofdata.KeyParts{proofdata.PartA, proofdata.PartB1, proofdata.PartK} {
		s := d.sect[part]
		first := uint32(0)
		if part == proofdata.PartK {
			first = d.firstK
		}
		if d.sel[i], err = scanInfinity(sf, s, first); err != nil {
			return nil, fmt.Errorf("zkey: %s section: %w", s.name, err)
		}
	}
	d.rowMul = rowMul
	z.def = d
	return z, nil
}

// scanInfinity reads section s in chunks and returns the wires (first + i)
// whose points are not all zero bytes: the whole read's selection, without
// the points.
func scanInfinity(sf *seqFile, s zkeySection, first uint32) ([]uint32, error) {
	if err := sf.at(s.off); err != nil {
		return nil, err
	}
	per := max(streamChunkBytes/s.size, 1)
	buf := make([]byte, min(per, s.n)*s.size)
	// n is the section's, which checkBinTable found within the file, but a
	// sparse file can claim billions: grown as the points come, then clipped
	sel := make([]uint32, 0, min(s.n, 1<<20))
	for i := 0; i < s.n; i += per {
		k := min(per, s.n-i)
		b := buf[:k*s.size]
		if err := sf.read(b); err != nil {
			return nil, err
		}
		for j := range k {
			if !allZero(b[j*s.size : (j+1)*s.size]) {
				sel = append(sel, first+uint32(i+j))
			}
		}
	}
	if len(sel) < cap(sel) {
		// exactly sized: the circuit keeps it as long as it lives
		sel = slices.Clone(sel)
	}
	return sel, nil
}

func allZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// deferKey makes k's bases the deferred parts d reads: k's sizes are the
// selections', and its host copy gets them only on Fetch.
func (d *zkeyDeferral) deferKey(k *proofdata.Key, cc circomCurve) {
	k.Size.A, k.Size.B, k.Size.B2, k.Size.K = len(d.sel[0]), len(d.sel[1]), len(d.sel[1]), len(d.sel[2])
	if d.parts&proofdata.PartZ != 0 {
		k.Size.Z = d.sect[proofdata.PartZ].n
	}
	k.SetDeferred(&proofdata.DeferredParts{Parts: d.parts,
		Fetch: func(parts proofdata.KeyParts) error {
			mem, set := cc.hostParts(k, parts)
			if err := d.read(parts, hostSink(mem)); err != nil {
				return err
			}
			set()
			return nil
		},
		Stream: d.read,
	})
}

// hostSink writes a stream's points into the host slices' memory.
type hostSink map[proofdata.KeyParts][]byte

func (h hostSink) Write(part proofdata.KeyParts, at, count int, points []byte) error {
	size := len(points) / count
	copy(h[part][at*size:], points)
	return nil
}

// pointBytes is the memory of points, as a BaseSink takes it.
func pointBytes[P any](points []P) []byte {
	if len(points) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&points[0])), len(points)*int(unsafe.Sizeof(points[0])))
}

// zkeyChunk is k points of a section from point first, read into buf.
type zkeyChunk struct {
	part     proofdata.KeyParts
	first, k int
	buf      *chunkBuf
	seq      int64 // its place among the stream's chunks
	win      *hWindow
}

// hPasses is how many passes a read of a permuted H into sink makes, and
// how many rows each holds: one, straight into a fetch's host copy.
func (d *zkeyDeferral) hPasses(sink proofdata.BaseSink) (passes, rows int) {
	s := d.sect[proofdata.PartZ]
	if _, ok := sink.(hostSink); ok || d.rowMul == 1 || s.n == 0 {
		return 1, s.n
	}
	rows = min(max(hWindowBytes/s.size, 1), s.n)
	return (s.n + rows - 1) / rows, rows
}

// hWindow is a pass of a permuted H's stream: its rows j0 … j0+n−1, put
// in mem by the chunks of the pass (each point to its row, if in the
// window) before mem goes to the sink. Of several bad H points, the one
// named is the first of the first window to hold one, not the lowest.
type hWindow struct {
	j0, n int
	mem   []byte
	wg    sync.WaitGroup // the pass's chunks not yet put
}

type chunkBuf struct {
	words []uint64 // a point's words aligned as gnark-crypto's points
	inf   []bool
	idx   []int // putRows's: the window's points of the chunk
}

// read hands sink the points of parts (deferred ones), in the file's
// order: one goroutine reads chunks through boundedread (its deadline is
// of waiting on the file), a few check and filter them and call sink. The
// file must be the one LoadFiles read: same size and time, the same
// sections, the same points at infinity.
func (d *zkeyDeferral) read(parts proofdata.KeyParts, sink proofdata.BaseSink) error {
	type partSection struct {
		part proofdata.KeyParts
		s    zkeySection
	}
	var order []partSection
	for part, s := range d.sect {
		if parts&part != 0 {
			order = append(order, partSection{part, s})
		}
	}
	slices.SortFunc(order, func(a, b partSection) int { return cmp.Compare(a.s.off, b.s.off) })
	bo := boundedread.Options{Timeout: d.o.LoadTimeout, MinRate: loadRate, IOTime: true}
	if passes, _ := d.hPasses(sink); parts&proofdata.PartZ != 0 && passes > 1 && bo.Timeout >= 0 {
		// MinRate's time is for the file's size: the passes over a
		// permuted H read more
		if bo.Timeout == 0 {
			bo.Timeout = boundedread.DefaultTimeout
		}
		more := float64(passes-1) * float64(d.sect[proofdata.PartZ].n*d.sect[proofdata.PartZ].size) / loadRate
		bo.Timeout += time.Duration(more * float64(time.Second))
	}
	_, err := boundedread.Read(context.Background(), d.path, bo, func(f *boundedread.File) (struct{}, error) {
		if st, err := os.Stat(d.path); err != nil {
			return struct{}{}, err
		} else if f.Size() != d.size || st.Size() != d.size || !st.ModTime().Equal(d.mod) {
			return struct{}{}, d.changed("its size or time")
		}
		workers := min(runtime.GOMAXPROCS(0), 4)
		jobs := make(chan zkeyChunk, workers)
		free := make(chan *chunkBuf, workers+1)
		for range workers + 1 {
			free <- nil // allocated on first use, at the largest chunk's size
		}
		// The error is the first bad chunk's in the file, as the whole
		// read's is, whichever worker meets one first: a chunk before the
		// first failure so far is still checked, one after it is not.
		var (
			mu       sync.Mutex
			firstErr error
			stop     atomic.Int64 // the first failed chunk's number so far
			wg       sync.WaitGroup
		)
		stop.Store(math.MaxInt64)
		fail := func(seq int64, err error) {
			mu.Lock()
			defer mu.Unlock()
			if seq < stop.Load() {
				firstErr = err
				stop.Store(seq)
			}
		}
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for c := range jobs {
					if c.seq < stop.Load() {
						if err := d.put(c, sink); err != nil {
							fail(c.seq, err)
						}
					}
					if c.win != nil {
						c.win.wg.Done()
					}
					free <- c.buf
				}
			}()
		}
		sf := &seqFile{f: f}
		var seq int64 // chunks in file order
		err := func() error {
			for _, o := range order {
				s, part := o.s, o.part
				// one pass over the section, but for a permuted H: a pass
				// a window of its rows, into mem (the host copy's H itself
				// for a fetch)
				passes, rows := 1, s.n
				var mem []byte
				direct := false
				if part == proofdata.PartZ && d.rowMul != 1 {
					passes, rows = d.hPasses(sink)
					if h, ok := sink.(hostSink); ok {
						mem, direct = h[part], true
					} else {
						mem = wordBytes(make([]uint64, (rows*s.size+7)/8))
					}
				}
				for pass := range passes {
					var win *hWindow
					if mem != nil {
						win = &hWindow{j0: pass * rows, n: min(rows, s.n-pass*rows), mem: mem}
					}
					// the section's header, as LoadFiles found it
					var head [12]byte
					if err := sf.at(s.off - 12); err != nil {
						return err
					}
					if err := sf.read(head[:]); err != nil {
						return fmt.Errorf("zkey: %s section: %w", s.name, err)
					}
					if binary.LittleEndian.Uint32(head[:]) != s.typ || binary.LittleEndian.Uint64(head[4:]) != uint64(s.n*s.size) {
						return d.changed(fmt.Sprintf("its %s section", s.name))
					}
					per := max(streamChunkBytes/s.size, 1)
					for first := 0; first < s.n && stop.Load() == math.MaxInt64; first += per {
						k := min(per, s.n-first)
						b := <-free
						if b == nil || len(b.words)*8 < k*s.size {
							b = &chunkBuf{words: make([]uint64, (k*s.size+7)/8), inf: make([]bool, k)}
						}
						if len(b.inf) < k {
							b.inf = make([]bool, k)
						}
						if err := sf.read(wordBytes(b.words)[:k*s.size]); err != nil {
							free <- b
							return fmt.Errorf("zkey: %s section: %w", s.name, err)
						}
						if win != nil {
							win.wg.Add(1)
						}
						jobs <- zkeyChunk{part: part, first: first, k: k, buf: b, seq: seq, win: win}
						seq++
					}
					if win == nil {
						continue
					}
					win.wg.Wait() // its rows all in mem
					if stop.Load() != math.MaxInt64 {
						return nil // firstErr says why
					}
					if !direct {
						if err := sink.Write(part, win.j0, win.n, mem[:win.n*s.size]); err != nil {
							return err
						}
					}
				}
			}
			return nil
		}()
		close(jobs)
		wg.Wait()
		if err != nil {
			return struct{}{}, err
		}
		return struct{}{}, firstErr
	})
	if err != nil {
		return fmt.Errorf("%s: %w", d.path, err)
	}
	return nil
}

func wordBytes(w []uint64) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), 8*len(w)) }

func (d *zkeyDeferral) changed(why string) error {
	return fmt.Errorf("changed since the circuit was loaded (%s): load the circuit again", why)
}

// put checks c's points, keeps those its part's selection keeps (all of
// H's), and hands them to sink at their index in the key's part.
func (d *zkeyDeferral) put(c zkeyChunk, sink proofdata.BaseSink) error {
	s := d.sect[c.part]
	raw := wordBytes(c.buf.words)[:c.k*s.size]
	if c.win != nil {
		return d.putRows(c, raw)
	}
	inf := c.buf.inf[:c.k]
	r := &reader{kind: "zkey", name: s.name, b: raw}
	if err := d.cc.decode(r, c.part == proofdata.PartB2, c.first, inf); err != nil {
		return err
	}
	if c.part == proofdata.PartZ {
		return sink.Write(c.part, c.first, c.k, raw)
	}
	var sel []uint32
	wire0 := uint32(0)
	switch c.part {
	case proofdata.PartA:
		sel = d.sel[0]
	case proofdata.PartB1, proofdata.PartB2:
		sel = d.sel[1]
	case proofdata.PartK:
		sel, wire0 = d.sel[2], d.firstK
	}
	// the chunk's kept points are the selection's wires from its first on
	lo := sort.Search(len(sel), func(j int) bool { return sel[j] >= wire0+uint32(c.first) })
	at := lo
	for i := range c.k {
		kept := at < len(sel) && sel[at] == wire0+uint32(c.first+i)
		if kept == inf[i] {
			if c.part == proofdata.PartB2 {
				return fmt.Errorf("zkey's B1 and B2 disagree on wire %d: one is infinity, the other not", c.first+i)
			}
			return d.changed(fmt.Sprintf("its %s section's point %d", s.name, c.first+i))
		}
		if kept {
			copy(raw[(at-lo)*s.size:], raw[i*s.size:(i+1)*s.size])
			at++
		}
	}
	if at == lo {
		return nil
	}
	return sink.Write(c.part, lo, at-lo, raw[:(at-lo)*s.size])
}

// putRows checks and puts each point of a chunk of a permuted H whose row
// is in the chunk's window there; the others are another pass's.
func (d *zkeyDeferral) putRows(c zkeyChunk, raw []byte) error {
	s, w, n := d.sect[c.part], c.win, uint64(d.sect[c.part].n)
	r := reader{kind: "zkey", name: s.name}
	// the window's points of the chunk, decoded, moved to the chunk's
	// front for one batched subgroup check
	idx := c.buf.idx[:0]
	defer func() { c.buf.idx = idx }()
	for i := range c.k {
		j := int(d.rowMul * uint64(c.first+i) % n)
		if j < w.j0 || j >= w.j0+w.n {
			continue
		}
		p := raw[i*s.size : (i+1)*s.size]
		r.b = p
		if err := d.cc.decodeOne(&r, c.first+i); err != nil {
			return err
		}
		copy(w.mem[(j-w.j0)*s.size:], p)
		copy(raw[len(idx)*s.size:], p)
		idx = append(idx, c.first+i)
	}
	if err := d.cc.subgroup(raw, idx); err != nil {
		return fmt.Errorf("zkey: %s section: %w", s.name, err)
	}
	return nil
}
