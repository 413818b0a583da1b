package gnarksrc

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"testing"
)

// serialVarints is the walk walkVarints replaces: count varints of at
// most 5 bytes, one after another, then the section's end.
func serialVarints(b []byte, count uint64) bool {
	i := 0
	for range count {
		k := 0
		for ; k < binary.MaxVarintLen32; k++ {
			if i+k >= len(b) {
				return false // overruns
			}
			if b[i+k] < 0x80 {
				break
			}
		}
		if k == binary.MaxVarintLen32 {
			return false // more than 5 bytes
		}
		i += k + 1
	}
	return i == len(b)
}

// walkVarints accepts exactly what the serial walk accepts: sections of
// valid varints, with a count one off, cut short, with runs of 4, 5 and 6
// bytes of 0x80 and over (inside a piece and across pieces' ends), of
// continuation bytes only, of zeros, empty; in pieces of 1, 2, 3, 5, 7
// and 64 bytes, on 1, 3 and all cores.
func TestWalkVarintsIsTheSerialWalk(t *testing.T) {
	defer func(p int64) { varintPiece = p }(varintPiece)
	rng := rand.New(rand.NewPCG(49, 2))
	type section struct {
		b     []byte
		count uint64
	}
	var cases []section
	valid := func(n int) section {
		var b []byte
		for range n {
			b = binary.AppendUvarint(b, uint64(rng.Uint32()>>rng.IntN(32)))
		}
		return section{b, uint64(n)}
	}
	for _, n := range []int{0, 1, 2, 17, 200} {
		v := valid(n)
		cases = append(cases, v, section{v.b, v.count + 1})
		if n > 0 {
			cases = append(cases, section{v.b, v.count - 1}, section{v.b[:len(v.b)-1], v.count})
		}
	}
	for _, run := range []int{4, 5, 6, 11} {
		for _, at := range []int{0, 3, 30, 63} {
			v := valid(40)
			b := append(bytes.Clone(v.b[:min(at, len(v.b))]), bytes.Repeat([]byte{0x81}, run)...)
			b = append(append(b, 0x01), v.b[min(at, len(v.b)):]...)
			cases = append(cases, section{b, v.count + 1})
		}
	}
	cases = append(cases, section{bytes.Repeat([]byte{0x80}, 100), 1}, section{make([]byte, 100), 100}, section{make([]byte, 100), 99})
	for _, c := range cases {
		want := serialVarints(c.b, c.count)
		for _, piece := range []int64{1, 2, 3, 5, 7, 64} {
			for _, procs := range []int{1, 3, runtime.NumCPU()} {
				varintPiece = piece
				old := runtime.GOMAXPROCS(procs)
				err := walkVarints(bytes.NewReader(c.b), 0, int64(len(c.b)), c.count)
				runtime.GOMAXPROCS(old)
				if (err == nil) != want {
					t.Fatalf("%d bytes, count %d, pieces of %d, %d cores: walkVarints %v, the serial walk accepts: %v", len(c.b), c.count, piece, procs, err, want)
				}
			}
		}
	}
}
