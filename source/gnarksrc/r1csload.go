package gnarksrc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/consensys/gnark/constraint"
	"github.com/ronanh/intcomp"
	"github.com/zkpipe/zkpipe/curve"
)

// ─── circuit.r1cs over all cores ─────────────────────────────────────────────
//
// gnark v0.16.3 writes an R1CS (constraint/marshal.go, constraint/<curve>/
// marshal.go) as
//
//	totalLen, major, minor, patch              4 × uint64, little-endian
//	levelsLen, instructionsLen, calldataLen, bodyLen   the System's header
//	levels        uint64 count, then each level a compressed []uint32
//	instructions  four compressed arrays: blueprint IDs, constraint and
//	              wire offsets ([]uint32), calldata starts ([]uint64)
//	calldata      uint64 count, then each uint32 as a uvarint
//	body          CBOR: the rest of the System (blueprints, names, …)
//	coefficients  uint64 count, then each Fr element's Montgomery limbs
//
// where "compressed" is a uint64 count of uint32 words, then the words of
// ronanh/intcomp's CompressUint32 (CompressUint64: uint64 words). Its
// ReadFrom reads the whole file into memory, then decodes the levels, the
// instructions and the calldata on one goroutine each, the calldata a
// uvarint at a time (a 2^26 bits circuit's 1.5 GiB took 4.5 s on the
// H100 host, some 0.07 s per 2^20 constraints). readR1CS reads the same
// bytes into the same system from a regular file's offsets: the sections
// read in parallel, the calldata split at uvarint ends and decoded over all
// cores, the levels decoded over all cores into one array (a level a
// window of it, where gnark makes a slice a level: 2^27 of them for a
// mulchain), the instructions' four arrays side by side, the coefficients
// over all cores, and the body through gnark's own System.FromBytes (its
// CBOR tags are gnark's) with the other sections empty.
//
// Every count is checked against the bytes that hold it before anything
// is allocated by it, and a malformed compressed array is an error, not a
// panic or a loop (intcomp's own decoder trusts its block headers).

// r1csHeaderLen is the file's header and the System's: 8 uint64s.
const r1csHeaderLen = 64

// r1csSections are a file's sections: offsets and lengths in bytes.
type r1csSections struct {
	levels, instructions, calldata, body, coeffs [2]int64 // offset, length
}

// parseR1CSHeader reads the header of an r1cs of size bytes at r and
// where each section is. checkR1CSLayout has checked the sizes.
func parseR1CSHeader(r io.ReaderAt, size int64) (r1csSections, error) {
	var h [r1csHeaderLen]byte
	if _, err := r.ReadAt(h[:], 0); err != nil {
		return r1csSections{}, truncated(err, "the header")
	}
	u := func(i int) uint64 { return binary.LittleEndian.Uint64(h[8*i:]) }
	total, major, minor := u(0), u(1), u(2)
	if major != 0 || minor < 10 {
		return r1csSections{}, fmt.Errorf("written by gnark %d.%d.%d: gnark reads 0.10 and later", major, minor, u(3))
	}
	if total+32 != uint64(size) {
		return r1csSections{}, fmt.Errorf("its header says %d bytes, the file has %d", total+32, size)
	}
	var s r1csSections
	off := int64(r1csHeaderLen)
	for i, sec := range []*[2]int64{&s.levels, &s.instructions, &s.calldata, &s.body} {
		n := u(4 + i)
		if n > uint64(size-off) {
			return r1csSections{}, fmt.Errorf("its sections say more than its %d bytes", size)
		}
		*sec = [2]int64{off, int64(n)}
		off += int64(n)
	}
	s.coeffs = [2]int64{off, size - off}
	return s, nil
}

// r1csTarget is an empty R1CS of one curve (groth16.NewCS's), its System,
// and how its coefficient table is set from the file's n coefficients.
type r1csTarget struct {
	ccs       constraint.ConstraintSystem
	sys       *constraint.System
	setCoeffs func(raw []byte, n int)
}

// readR1CS decodes the r1cs of size bytes at r, of curve id, as gnark's
// ReadFrom decodes it (the same system: TestR1CSReadsAsGnarks), counting
// the bytes it has decoded into read for progress lines.
func readR1CS(r io.ReaderAt, size int64, id curve.ID, read *atomic.Int64) (constraint.ConstraintSystem, error) {
	s, err := parseR1CSHeader(r, size)
	if err != nil {
		return nil, err
	}
	if gnarkCurves[id].newR1CS == nil {
		return nil, fmt.Errorf("no R1CS of curve %s", id)
	}
	t := gnarkCurves[id].newR1CS()

	// the sections' bytes, read in parallel pieces (a page cache copies
	// at some GB/s a core)
	whole := make([]byte, size-r1csHeaderLen)
	if err := readAtParallel(r, whole, r1csHeaderLen, read); err != nil {
		return nil, err
	}
	section := func(sec [2]int64) []byte { return whole[sec[0]-r1csHeaderLen : sec[0]-r1csHeaderLen+sec[1]] }

	var (
		levels       [][]uint32
		instructions []constraint.PackedInstruction
		calldata     []uint32
		errs         [5]error
		wg           sync.WaitGroup
	)
	run := func(i int, f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					errs[i] = fmt.Errorf("malformed: %v", p)
				}
			}()
			errs[i] = f()
		}()
	}
	run(0, func() (err error) {
		levels, err = decodeLevels(section(s.levels))
		return wrapSection(err, "levels")
	})
	run(1, func() (err error) {
		instructions, err = decodeInstructions(section(s.instructions))
		return wrapSection(err, "instructions")
	})
	run(2, func() (err error) {
		calldata, err = decodeCalldata(section(s.calldata))
		return wrapSection(err, "calldata")
	})
	run(3, func() error {
		return wrapSection(decodeBody(t.sys, section(s.body)), "body")
	})
	run(4, func() error {
		raw := section(s.coeffs)
		if len(raw) < 8 {
			return wrapSection(io.ErrUnexpectedEOF, "coefficients")
		}
		n := binary.LittleEndian.Uint64(raw)
		if n > uint64(len(raw)-8)/32 || uint64(len(raw)-8) != 32*n {
			return fmt.Errorf("its coefficient table says %d coefficients (%d bytes) in %d bytes", n, 32*n, len(raw)-8)
		}
		t.setCoeffs(raw[8:], int(n))
		return nil
	})
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	t.sys.Levels, t.sys.Instructions, t.sys.CallData = levels, instructions, calldata
	return t.ccs, nil
}

func wrapSection(err error, what string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("its %s: %w", what, err)
}

// readAtParallel fills buf from r at off, in pieces of 16 MiB read by
// GOMAXPROCS goroutines, adding each piece to read.
func readAtParallel(r io.ReaderAt, buf []byte, off int64, read *atomic.Int64) error {
	const piece = 16 << 20
	var err error
	var once sync.Once
	forRanges(len(buf), piece, func(start, end int) {
		if _, e := r.ReadAt(buf[start:end], off+int64(start)); e != nil {
			once.Do(func() { err = truncated(e, "its sections") })
			return
		}
		read.Add(int64(end - start))
	})
	return err
}

// forRanges calls f over [0, n) in ranges of at most step, on GOMAXPROCS
// goroutines that each take the next range, and returns when all are done.
func forRanges(n, step int, f func(start, end int)) {
	if n <= 0 {
		return
	}
	ranges := (n + step - 1) / step
	workers := min(runtime.GOMAXPROCS(0), ranges)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= ranges {
					return
				}
				f(k*step, min((k+1)*step, n))
			}
		}()
	}
	wg.Wait()
}

// decodeBody decodes the CBOR body into sys with gnark's System.FromBytes
// (its tag set is gnark's own), handing it a system whose levels,
// instructions and calldata sections are empty: those are decoded apart.
func decodeBody(sys *constraint.System, body []byte) error {
	var emptySections = [3][]byte{
		make([]byte, 8),  // no levels
		make([]byte, 32), // four compressed arrays of none
		make([]byte, 8),  // no calldata
	}
	data := make([]byte, 32, 32+8+32+8+len(body))
	binary.LittleEndian.PutUint64(data[0:], 8)
	binary.LittleEndian.PutUint64(data[8:], 32)
	binary.LittleEndian.PutUint64(data[16:], 8)
	binary.LittleEndian.PutUint64(data[24:], uint64(len(body)))
	for _, s := range emptySections {
		data = append(data, s...)
	}
	data = append(data, body...)
	n, err := sys.FromBytes(data)
	if err != nil {
		return err
	}
	if n != len(data) {
		return fmt.Errorf("%d bytes of its %d decoded", n-(len(data)-len(body)), len(body))
	}
	return nil
}

// ─── calldata: uvarints, split where one ends ────────────────────────────────

// calldataPiece is the bytes a goroutine takes of the calldata (its
// uvarints split at the first end after each multiple); tests make it
// small.
var calldataPiece = 4 << 20

// decodeCalldata decodes gnark's calldata section: a uint64 count, then
// that many uvarints, each kept as its low 32 bits (gnark's uint32(v)).
// The section is cut into pieces, each starting after a byte below 0x80
// (a uvarint's last), counted, then decoded in place, all over all cores.
func decodeCalldata(sec []byte) ([]uint32, error) {
	if len(sec) < 8 {
		return nil, io.ErrUnexpectedEOF
	}
	count := binary.LittleEndian.Uint64(sec)
	b := sec[8:]
	if count > uint64(len(b)) {
		return nil, fmt.Errorf("%d values in %d bytes", count, len(b))
	}
	if len(b) > 0 && b[len(b)-1] >= 0x80 {
		return nil, fmt.Errorf("its last value is cut short")
	}
	// piece k starts after the first uvarint end at or past k·calldataPiece
	nbPieces := (len(b) + calldataPiece - 1) / calldataPiece
	starts := make([]int, nbPieces+1)
	starts[nbPieces] = len(b)
	forRanges(nbPieces, 1, func(k, _ int) {
		if k == 0 {
			return
		}
		i := k * calldataPiece
		for i < len(b) && b[i-1] >= 0x80 {
			i++
		}
		starts[k] = i
	})
	counts := make([]uint64, nbPieces+1) // then: the first value of each piece
	forRanges(nbPieces, 1, func(k, _ int) {
		var n uint64
		for _, c := range b[starts[k]:max(starts[k], starts[k+1])] {
			if c < 0x80 {
				n++
			}
		}
		counts[k+1] = n
	})
	for k := range nbPieces {
		counts[k+1] += counts[k]
	}
	if counts[nbPieces] != count {
		return nil, fmt.Errorf("its count is %d, it holds %d values", count, counts[nbPieces])
	}
	out := make([]uint32, count)
	var bad atomic.Int64
	bad.Store(-1)
	forRanges(nbPieces, 1, func(k, _ int) {
		p := b[starts[k]:max(starts[k], starts[k+1])]
		j := counts[k]
		for len(p) > 0 {
			v, n := binary.Uvarint(p)
			if n <= 0 {
				bad.CompareAndSwap(-1, int64(j))
				return
			}
			out[j] = uint32(v)
			j++
			p = p[n:]
		}
	})
	if j := bad.Load(); j >= 0 {
		return nil, fmt.Errorf("value %d is not a uvarint of 64 bits", j)
	}
	return out, nil
}

// ─── levels and instructions: intcomp's compressed arrays ────────────────────

// compressed is one compressed array of a section: its words (of 32 or 64
// bits, as stored: little-endian) and the values it holds.
type compressed struct {
	words  []byte
	values int
}

// nextCompressed takes the compressed array at the start of sec (a uint64
// count of words of size bytes, then the words) and returns it and the
// rest, its value count from its blocks' headers (walked, each checked,
// so that neither a count nor a block can lead a decoder astray).
func nextCompressed(sec []byte, size int) (compressed, []byte, error) {
	if len(sec) < 8 {
		return compressed{}, nil, io.ErrUnexpectedEOF
	}
	n := binary.LittleEndian.Uint64(sec)
	if n > uint64(len(sec)-8)/uint64(size) {
		return compressed{}, nil, fmt.Errorf("a compressed array of %d words in %d bytes", n, len(sec)-8)
	}
	words := sec[8 : 8+int(n)*size]
	word := func(i int) uint64 {
		if size == 4 {
			return uint64(binary.LittleEndian.Uint32(words[4*i:]))
		}
		return binary.LittleEndian.Uint64(words[8*i:])
	}
	// intcomp's layout: blocks, then the last block's length (one word)
	values := 0
	if n > 0 {
		end := int(n) - 1
		for h := 0; h < end; {
			var outLen, inLen int
			if size == 4 {
				outLen, inLen = int(word(h)), 0
				if h+1 < end {
					inLen = int(word(h + 1))
				}
			} else {
				w := word(h)
				outLen, inLen = int(int32(w)), int(w>>32)
			}
			// a block's header is its values, its words (with the
			// header) and its first value; a block holds at most 32
			// values a word (bit-packed deltas of zero take none: 128
			// values in a header word a group)
			if inLen < 2 || inLen > end-h || outLen < 0 || outLen > 128*inLen {
				return compressed{}, nil, fmt.Errorf("a compressed block of %d values in %d words at word %d of %d", outLen, inLen, h, end)
			}
			values += outLen
			h += inLen
		}
	}
	return compressed{words: words, values: values}, sec[8+int(n)*size:], nil
}

// uint32s is c's words, in scratch when it is large enough.
func (c compressed) uint32s(scratch *[]uint32) []uint32 {
	n := len(c.words) / 4
	if cap(*scratch) < n {
		*scratch = make([]uint32, n)
	}
	w := (*scratch)[:n]
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(c.words[4*i:])
	}
	return w
}

// decompress32 decodes c into out[:0] (cap(out) = c.values), as intcomp's
// UncompressUint32 does, block by block, in place: its own would make a
// slice (of one more value) where out is a window of a larger array.
// scratch holds c's words meanwhile. A block that decodes past its
// window panics (intcomp's decoders index without checks): the caller
// recovers.
func decompress32(c compressed, out []uint32, scratch *[]uint32) error {
	in := c.uint32s(scratch)
	if len(in) > 0 {
		in = in[:len(in)-1] // the last block's length
	}
	for len(in) > 0 {
		before := len(out)
		if in[0] < intcomp.BitPackingBlockSize32 {
			in, out = intcomp.UncompressDeltaVarByteUint32(in, out)
		} else {
			in, out = intcomp.UncompressDeltaBinPackUint32(in, out)
		}
		if len(out) == before && len(in) > 0 {
			return errors.New("a compressed block of no values")
		}
	}
	if len(out) != c.values || cap(out) != c.values {
		return fmt.Errorf("%d values decompressed, its blocks say %d", len(out), c.values)
	}
	return nil
}

// decodeLevels decodes gnark's levels section: a uint64 count, then each
// level a compressed []uint32. The levels' values go into one array, each
// level a window of it (three-index: an append to one cannot reach the
// next). One pass on one goroutine finds where each level starts (its
// word count, 8 bytes a level); the rest runs over all cores, a range of
// levels a task: their blocks' headers checked and counted, then, once
// each level's place in the array is known, decoded.
func decodeLevels(sec []byte) ([][]uint32, error) {
	if len(sec) < 8 {
		return nil, io.ErrUnexpectedEOF
	}
	n := binary.LittleEndian.Uint64(sec)
	if n > uint64(len(sec)-8)/8 {
		return nil, fmt.Errorf("%d levels in %d bytes", n, len(sec)-8)
	}
	// at[i]: where level i starts in sec; at[n] its end
	at := make([]int, n+1)
	at[0] = 8
	for i := range int(n) {
		if len(sec)-at[i] < 8 {
			return nil, fmt.Errorf("level %d of %d: %w", i, n, io.ErrUnexpectedEOF)
		}
		words := binary.LittleEndian.Uint64(sec[at[i]:])
		if words > uint64(len(sec)-at[i]-8)/4 {
			return nil, fmt.Errorf("level %d of %d: a compressed array of %d words in %d bytes", i, n, words, len(sec)-at[i]-8)
		}
		at[i+1] = at[i] + 8 + 4*int(words)
	}
	if at[n] != len(sec) {
		return nil, fmt.Errorf("%d bytes after its %d levels", len(sec)-at[n], n)
	}
	levels := make([][]uint32, n)
	errs := make([]error, n)
	task := max(1, int(n)/(16*runtime.GOMAXPROCS(0)))
	// each level's values (its blocks' headers, checked), then where in
	// the array it goes
	first := make([]int, n+1)
	forRanges(int(n), task, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			c, _, err := nextCompressed(sec[at[i]:at[i+1]], 4)
			if err != nil {
				errs[i] = fmt.Errorf("level %d of %d: %w", i, n, err)
				return
			}
			first[i+1] = c.values
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	for i := range int(n) {
		first[i+1] += first[i]
	}
	all := make([]uint32, first[n])
	forRanges(int(n), task, func(lo, hi int) {
		var scratch []uint32
		i := lo
		defer func() {
			if p := recover(); p != nil {
				errs[i] = fmt.Errorf("level %d of %d: malformed: %v", i, n, p)
			}
		}()
		for ; i < hi; i++ {
			c, _, _ := nextCompressed(sec[at[i]:at[i+1]], 4)
			w := all[first[i]:first[i]:first[i+1]]
			if err := decompress32(c, w, &scratch); err != nil {
				errs[i] = fmt.Errorf("level %d of %d: %w", i, n, err)
				return
			}
			levels[i] = w[:c.values]
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return levels, nil
}

// decodeInstructions decodes gnark's instructions section: four
// compressed arrays of one length (blueprint IDs, constraint offsets,
// wire offsets: []uint32; calldata starts: []uint64), each decoded on a
// goroutine of its own, then zipped over all cores.
func decodeInstructions(sec []byte) ([]constraint.PackedInstruction, error) {
	var cs [4]compressed
	var err error
	rest := sec
	for i := range cs {
		size := 4
		if i == 3 {
			size = 8
		}
		if cs[i], rest, err = nextCompressed(rest, size); err != nil {
			return nil, fmt.Errorf("array %d of 4: %w", i, err)
		}
		if cs[i].values != cs[0].values {
			return nil, fmt.Errorf("array %d of 4 holds %d values, the first %d", i, cs[i].values, cs[0].values)
		}
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%d bytes after its four arrays", len(rest))
	}
	var u32 [3][]uint32
	var starts []uint64
	var errs [4]error
	var wg sync.WaitGroup
	for i := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					errs[i] = fmt.Errorf("array %d of 4: malformed: %v", i, p)
				}
			}()
			if i == 3 {
				in := make([]uint64, len(cs[i].words)/8)
				for k := range in {
					in[k] = binary.LittleEndian.Uint64(cs[i].words[8*k:])
				}
				starts = intcomp.UncompressUint64(in, nil)
				if len(starts) != cs[i].values {
					errs[i] = fmt.Errorf("array 3 of 4: %d values decompressed, its blocks say %d", len(starts), cs[i].values)
				}
				return
			}
			u32[i] = make([]uint32, 0, cs[i].values)
			var scratch []uint32
			if err := decompress32(cs[i], u32[i], &scratch); err != nil {
				errs[i] = fmt.Errorf("array %d of 4: %w", i, err)
			}
			u32[i] = u32[i][:cs[i].values]
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	out := make([]constraint.PackedInstruction, cs[0].values)
	forRanges(len(out), 1<<16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = constraint.PackedInstruction{
				BlueprintID:      constraint.BlueprintID(u32[0][i]),
				ConstraintOffset: u32[1][i],
				WireOffset:       u32[2][i],
				StartCallData:    starts[i],
			}
		}
	})
	return out, nil
}

// decodeCoefficients sets out from n Fr elements' limbs (four uint64s
// each, little-endian, in Montgomery form as gnark writes them), over all
// cores: E is a curve's fr.Element.
func decodeCoefficients[E ~[4]uint64](raw []byte, n int) []E {
	out := make([]E, n)
	forRanges(n, 1<<16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for j := range 4 {
				out[i][j] = binary.LittleEndian.Uint64(raw[32*i+8*j:])
			}
		}
	})
	return out
}
