package gnarksrc

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"runtime"
	"slices"

	"github.com/blang/semver/v4"
	"github.com/consensys/gnark/constraint"
	"github.com/ronanh/intcomp"
)

// ─── circuit.r1cs written as it is encoded ───────────────────────────────────
//
// gnark's WriteTo (constraint/marshal.go's ToBytes) builds the whole file
// in memory before its first byte is written: the calldata's uvarints in
// one buffer (sized for five bytes a value), then every section appended
// into another of the file's size, all on one goroutine. At a 2^27 setup
// that is some 10 GB beside the circuit, the setup's peak, and some 15 s.
// writeR1CS writes the same bytes (TestWriteR1CSIsGnarks) with the
// sections' lengths computed first: the levels compressed over all cores
// (their compressed words are kept: a fraction of the file), the
// instructions' four arrays one at a time, the calldata's uvarint lengths
// counted over all cores and its bytes encoded in batches over all cores
// and written in order, the body from gnark's own ToBytes of a copy of
// the system whose large sections are empty, the coefficients last.

// WriteR1CS writes ccs, an R1CS of a curve of package curve, as gnark's
// ccs.WriteTo does, byte for byte, without the file whole in memory and
// over all cores (writeR1CS), and returns the bytes written.
func WriteR1CS(w io.Writer, ccs constraint.ConstraintSystem) (int64, error) {
	for _, f := range gnarkCurves {
		if f.r1csParts == nil {
			continue
		}
		if sys, n, writeCoeffs, ok := f.r1csParts(ccs); ok {
			return writeR1CS(w, sys, n, writeCoeffs)
		}
	}
	return 0, fmt.Errorf("a %T is not an R1CS of a supported curve", ccs)
}

// calldataBatch is the calldata values a core encodes between writes
// (some 20 MiB of uvarints at most); tests make it small.
var calldataBatch = 4 << 20

// writeR1CS writes sys (whose coefficient table writeCoeffs writes, with
// its count: n coefficients) as gnark's WriteTo of its R1CS does, and
// returns the bytes written.
func writeR1CS(w io.Writer, sys *constraint.System, n int, writeCoeffs func(io.Writer) error) (int64, error) {
	version, err := semver.Parse(sys.GnarkVersion)
	if err != nil {
		return 0, fmt.Errorf("the system's gnark version %q: %w", sys.GnarkVersion, err)
	}
	levels := compressLevels(sys.Levels)
	instructions, err := compressInstructions(sys.Instructions)
	if err != nil {
		return 0, err
	}
	calldataLen := 8 + uvarintsLen(sys.CallData)
	body, err := systemBody(sys)
	if err != nil {
		return 0, err
	}
	coeffsLen := 8 + 32*int64(n)
	systemLen := 32 + levels.size + int64(len(instructions)) + calldataLen + int64(len(body))

	cw := &countingWriter{w: w}
	var head []byte
	for _, v := range []uint64{uint64(systemLen + coeffsLen), version.Major, version.Minor, version.Patch,
		uint64(levels.size), uint64(len(instructions)), uint64(calldataLen), uint64(len(body))} {
		head = binary.LittleEndian.AppendUint64(head, v)
	}
	if _, err := cw.Write(head); err != nil {
		return cw.n, err
	}
	if err := levels.write(cw); err != nil {
		return cw.n, err
	}
	if _, err := cw.Write(instructions); err != nil {
		return cw.n, err
	}
	if err := writeUvarints(cw, sys.CallData); err != nil {
		return cw.n, err
	}
	if _, err := cw.Write(body); err != nil {
		return cw.n, err
	}
	if err := writeCoeffs(cw); err != nil {
		return cw.n, err
	}
	if want := 32 + systemLen + coeffsLen; cw.n != want {
		return cw.n, fmt.Errorf("wrote %d bytes of an r1cs, its header says %d", cw.n, want)
	}
	return cw.n, nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	k, err := c.w.Write(p)
	c.n += int64(k)
	return k, err
}

// appendCompressed32 appends gnark's ioutils.CompressAndWriteUints32 of
// values: its intcomp words' count (uint64), then the words, little-endian.
func appendCompressed32(b []byte, values []uint32, scratch *[]uint32) []byte {
	*scratch = intcomp.CompressUint32(values, (*scratch)[:0])
	b = slices.Grow(b, 8+4*len(*scratch))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(*scratch)))
	for _, v := range *scratch {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	return b
}

// compressedLen32 is the bytes appendCompressed32 appends for values.
func compressedLen32(values []uint32, scratch *[]uint32) int {
	*scratch = intcomp.CompressUint32(values, (*scratch)[:0])
	return 8 + 4*len(*scratch)
}

// compressedLevels is the levels section: the count, then each level
// compressed, in ranges compressed over all cores.
type compressedLevels struct {
	ranges [][]byte
	size   int64
}

func compressLevels(levels [][]uint32) compressedLevels {
	const span = 1 << 12 // levels a task
	nbRanges := (len(levels) + span - 1) / span
	c := compressedLevels{ranges: make([][]byte, nbRanges+1)}
	c.ranges[0] = binary.LittleEndian.AppendUint64(nil, uint64(len(levels)))
	forRanges(nbRanges, 1, func(r, _ int) {
		// compressed twice: once for the range's length, so that its
		// bytes are made once (appended, a mulchain's tiny levels grew
		// five times their size in garbage)
		var scratch []uint32
		ls := levels[r*span : min((r+1)*span, len(levels))]
		n := 0
		for _, l := range ls {
			n += compressedLen32(l, &scratch)
		}
		b := make([]byte, 0, n)
		for _, l := range ls {
			b = appendCompressed32(b, l, &scratch)
		}
		c.ranges[r+1] = b
	})
	for _, b := range c.ranges {
		c.size += int64(len(b))
	}
	return c
}

func (c compressedLevels) write(w io.Writer) error {
	for _, b := range c.ranges {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// compressInstructions is the instructions section: the blueprint IDs,
// constraint offsets and wire offsets compressed as []uint32, the calldata
// starts as []uint64, each array made and compressed in turn.
func compressInstructions(insts []constraint.PackedInstruction) ([]byte, error) {
	var out []byte
	var scratch []uint32
	u32 := make([]uint32, len(insts))
	for _, field := range []func(p *constraint.PackedInstruction) uint32{
		func(p *constraint.PackedInstruction) uint32 { return uint32(p.BlueprintID) },
		func(p *constraint.PackedInstruction) uint32 { return p.ConstraintOffset },
		func(p *constraint.PackedInstruction) uint32 { return p.WireOffset },
	} {
		forRanges(len(insts), 1<<16, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				u32[i] = field(&insts[i])
			}
		})
		out = appendCompressed32(out, u32, &scratch)
	}
	u32 = nil
	u64 := make([]uint64, len(insts))
	forRanges(len(insts), 1<<16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			u64[i] = insts[i].StartCallData
		}
	})
	words := intcomp.CompressUint64(u64, nil)
	out = slices.Grow(out, 8+8*len(words))
	out = binary.LittleEndian.AppendUint64(out, uint64(len(words)))
	for _, v := range words {
		out = binary.LittleEndian.AppendUint64(out, v)
	}
	return out, nil
}

// uvarintLen is the bytes of v's uvarint.
func uvarintLen(v uint32) int64 { return int64(max(1, (bits.Len32(v)+6)/7)) }

// uvarintsLen is the bytes of the uvarints of values, over all cores.
func uvarintsLen(values []uint32) int64 {
	nbRanges := (len(values) + calldataBatch - 1) / calldataBatch
	sums := make([]int64, nbRanges)
	forRanges(nbRanges, 1, func(r, _ int) {
		var s int64
		for _, v := range values[r*calldataBatch : min((r+1)*calldataBatch, len(values))] {
			s += uvarintLen(v)
		}
		sums[r] = s
	})
	var n int64
	for _, s := range sums {
		n += s
	}
	return n
}

// writeUvarints writes the calldata section: the count, then each value's
// uvarint, GOMAXPROCS batches encoded at a time over all cores and
// written in order.
func writeUvarints(w io.Writer, values []uint32) error {
	if _, err := w.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(values)))); err != nil {
		return err
	}
	nbBatches := (len(values) + calldataBatch - 1) / calldataBatch
	group := runtime.GOMAXPROCS(0)
	bufs := make([][]byte, group)
	for first := 0; first < nbBatches; first += group {
		k := min(group, nbBatches-first)
		forRanges(k, 1, func(j, _ int) {
			r := first + j
			batch := values[r*calldataBatch : min((r+1)*calldataBatch, len(values))]
			var n int64
			for _, v := range batch {
				n += uvarintLen(v)
			}
			b := slices.Grow(bufs[j][:0], int(n)) // made once, kept from batch to batch
			for _, v := range batch {
				b = binary.AppendUvarint(b, uint64(v))
			}
			bufs[j] = b
		})
		for _, b := range bufs[:k] {
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
	}
	return nil
}

// systemBody is the body section gnark's ToBytes writes for sys: its CBOR,
// from ToBytes of a copy of sys whose levels, instructions and calldata
// (not in the CBOR: cbor:"-") are empty.
func systemBody(sys *constraint.System) ([]byte, error) {
	light := *sys
	light.Levels, light.Instructions, light.CallData = nil, nil, nil
	b, err := light.ToBytes()
	if err != nil {
		return nil, err
	}
	var lens [4]uint64
	for i := range lens {
		lens[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	off := 32 + lens[0] + lens[1] + lens[2]
	if off+lens[3] != uint64(len(b)) {
		return nil, fmt.Errorf("gnark's encoding of the system is %d bytes, its header says %d", len(b), off+lens[3])
	}
	return b[off:], nil
}

// encodeCoefficients writes the coefficient table as gnark's CoeffTable
// does: the count, then each element's four limbs (Montgomery form),
// little-endian, in 32 MiB batches encoded over all cores.
func encodeCoefficients[E ~[4]uint64](w io.Writer, coeffs []E) error {
	if _, err := w.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(coeffs)))); err != nil {
		return err
	}
	const batch = 1 << 20
	buf := make([]byte, 32*min(batch, len(coeffs)))
	for start := 0; start < len(coeffs); start += batch {
		part := coeffs[start:min(start+batch, len(coeffs))]
		forRanges(len(part), 1<<14, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				for j := range 4 {
					binary.LittleEndian.PutUint64(buf[32*i+8*j:], part[i][j])
				}
			}
		})
		if _, err := w.Write(buf[:32*len(part)]); err != nil {
			return err
		}
	}
	return nil
}
