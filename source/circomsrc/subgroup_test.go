package circomsrc

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/zkpipe/zkpipe/internal/hostilefile"
)

// zkeyPoint is a point's bytes in a zkey: its memory (little-endian
// Montgomery limbs, x then y).
func zkeyPoint[P any](p P) []byte {
	return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&p)), unsafe.Sizeof(p))...)
}

// A zkey point on the curve but outside its prime-order subgroup (the
// Groth16 header's [α]₁, [β]₂, [δ]₂; IC, A, B1, C, H on BLS12-381, whose
// G1 has a cofactor; B2 on either curve) is refused at load, naming the
// section and the point, whether the points are read whole or left in the
// file and streamed (in chunks of a few points, H in windows of its
// permuted rows). Before, the key loaded and every proof failed its
// check at the end, blamed on the witness.
func TestZkeyPointsOutsideTheSubgroupRefused(t *testing.T) {
	defer func(b, w int) { streamChunkBytes, hWindowBytes = b, w }(streamChunkBytes, hWindowBytes)
	streamChunkBytes, hWindowBytes = 1000, 3000
	blsG1, blsG2, bnG2 := zkeyPoint(hostilefile.OutsideBLS12381G1()), zkeyPoint(hostilefile.OutsideBLS12381G2()), zkeyPoint(hostilefile.OutsideBN254G2())
	type spoil struct {
		file  string
		typ   uint32
		point int // in the section; −1: the header's point at off
		off   func(n8q int) int
		bytes []byte
		want  string
	}
	// the Groth16 header: n8q, q, n8r, r, three counts, then [α]₁ [β]₁
	// [β]₂ [γ]₂ [δ]₁ [δ]₂
	head := func(n8q int) int { return 4 + n8q + 4 + 32 + 12 }
	for _, s := range []spoil{
		{"bls12381/blsmul.zkey", 2, -1, func(n8q int) int { return head(n8q) }, blsG1, "Groth16 header section: [α]₁ is not in the prime-order subgroup"},
		{"bls12381/blsmul.zkey", 2, -1, func(n8q int) int { return head(n8q) + 2*2*n8q }, blsG2, "Groth16 header section: [β]₂ is not in the prime-order subgroup"},
		{"mul.zkey", 2, -1, func(n8q int) int { return head(n8q) + 3*2*n8q + 2*4*n8q }, bnG2, "Groth16 header section: [δ]₂ is not in the prime-order subgroup"},
		{"bls12381/blsmul.zkey", 3, 1, nil, blsG1, "IC section: point 1 is not in the prime-order subgroup"},
		{"bls12381/blsmul.zkey", 5, 3, nil, blsG1, "A section: point 3 is not in the prime-order subgroup"},
		{"bls12381/blsmul.zkey", 6, 22, nil, blsG1, "B1 section: point 22 is not in the prime-order subgroup"},
		{"bls12381/blsmul.zkey", 7, 5, nil, blsG2, "B2 section: point 5 is not in the prime-order subgroup"},
		{"mul.zkey", 7, 9, nil, bnG2, "B2 section: point 9 is not in the prime-order subgroup"},
		{"bls12381/blsmul.zkey", 8, 2, nil, blsG1, "C section: point 2 is not in the prime-order subgroup"},
		{"bls12381/blsmul.zkey", 9, 17, nil, blsG1, "H section: point 17 is not in the prime-order subgroup"},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", s.file))
		if err != nil {
			t.Fatal(err)
		}
		for _, sec := range sectionsOf(t, data) {
			if sec.typ != s.typ {
				continue
			}
			at := sec.off + int64(s.point*len(s.bytes))
			if s.point < 0 {
				at = sec.off + int64(s.off(int(binary.LittleEndian.Uint32(data[sec.off:]))))
			}
			copy(data[at:], s.bytes)
		}
		p := filepath.Join(t.TempDir(), filepath.Base(s.file))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, whole := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/%d/%d/whole=%v", s.file, s.typ, s.point, whole), func(t *testing.T) {
				c, err := LoadFiles(context.Background(), Files{Zkey: p, ReadKeyWhole: whole})
				if err == nil {
					err = c.Key.CheckDeferred() // what a backend's load of it reads
					c.Source.(*Source).Close(context.Background())
				}
				if err == nil || !strings.Contains(err.Error(), s.want) || !strings.Contains(err.Error(), p) {
					t.Fatalf("%v, want it refused at load saying %q and naming the file", err, s.want)
				}
			})
		}
	}
}
