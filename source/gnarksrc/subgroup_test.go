package gnarksrc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/internal/hostilefile"
)

// A proving-key point on the curve but outside its prime-order subgroup
// ([α]₁ and [β]₂; A, Z, K on BLS12-381, whose G1 has a cofactor; B₂ on
// either curve; raw and compressed) is refused at load, naming the part
// and the point, whether the slices are read whole or left in the file
// and streamed. Before, the key loaded and every proof failed at the end
// (gnark's UnsafeReadFrom skips subgroup checks too).
func TestProvingKeyPointsOutsideTheSubgroupRefused(t *testing.T) {
	defer func(n int) { loadChunkBytes = n }(loadChunkBytes)
	loadChunkBytes = 1000 // chunks of a few points: one batch each
	blsG1, blsG2, bnG2 := hostilefile.OutsideBLS12381G1(), hostilefile.OutsideBLS12381G2(), hostilefile.OutsideBN254G2()
	type spoil struct {
		part  string
		point int
		want  string
	}
	for _, v := range []struct {
		id         curve.ID
		compressed bool
		spoils     []spoil
	}{
		{curve.BLS12_381, false, []spoil{{"proving key's [α]₁", 0, "proving key's [α]₁ is not in the prime-order subgroup"},
			{"proving key's [β]₂", 0, "proving key's [β]₂ is not in the prime-order subgroup"},
			{"proving key's A", 3, "point 3 is not in the prime-order subgroup"},
			{"proving key's Z", 100, "point 100 is not in the prime-order subgroup"},
			{"proving key's K", 40, "point 40 is not in the prime-order subgroup"},
			{"proving key's B₂", 7, "point 7 is not in the prime-order subgroup"}}},
		{curve.BLS12_381, true, []spoil{{"proving key's A", 5, "point 5 is not in the prime-order subgroup"}}},
		{curve.BN254, false, []spoil{{"proving key's B₂", 11, "point 11 is not in the prime-order subgroup"},
			{"proving key's [δ]₂", 0, "proving key's [δ]₂ is not in the prime-order subgroup"}}},
	} {
		base := filepath.Join(t.TempDir(), "c")
		if _, err := SetupOn(v.id, "commit", 64, base); err != nil {
			t.Fatal(err)
		}
		if v.compressed {
			compressOn(t, base, v.id)
		}
		data, err := os.ReadFile(filepath.Join(base, PKFile))
		if err != nil {
			t.Fatal(err)
		}
		parts := pkLayout(bytes.NewReader(data), int64(len(data)), v.id, nil).parts
		for _, s := range v.spoils {
			var enc []byte
			g2 := strings.Contains(s.part, "₂")
			switch {
			case v.id == curve.BN254 && g2:
				if v.compressed {
					b := bnG2.Bytes()
					enc = b[:]
				} else {
					b := bnG2.RawBytes()
					enc = b[:]
				}
			case g2:
				if v.compressed {
					b := blsG2.Bytes()
					enc = b[:]
				} else {
					b := blsG2.RawBytes()
					enc = b[:]
				}
			case v.compressed:
				b := blsG1.Bytes()
				enc = b[:]
			default:
				b := blsG1.RawBytes()
				enc = b[:]
			}
			b := bytes.Clone(data)
			found := false
			for _, p := range parts {
				if p.name == s.part {
					copy(b[p.off+int64(s.point*len(enc)):], enc)
					found = true
				}
			}
			if !found {
				t.Fatalf("no part %s", s.part)
			}
			for _, whole := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/compressed=%v/%s/whole=%v", v.id, v.compressed, s.part, whole), func(t *testing.T) {
					dir := copyDir(t, base)
					if err := os.WriteFile(filepath.Join(dir, PKFile), b, 0o644); err != nil {
						t.Fatal(err)
					}
					c, err := LoadDirWith(dir, Options{ReadKeyWhole: whole})
					if err == nil {
						err = c.Key.CheckDeferred() // what a backend's load of it reads
					}
					part := strings.TrimPrefix(s.part, "proving key's ")
					if err == nil || !strings.Contains(err.Error(), s.want) || !strings.Contains(err.Error(), part) || !strings.Contains(err.Error(), PKFile) {
						t.Fatalf("%v, want it refused at load saying %q, naming %s and the file", err, s.want, part)
					}
				})
			}
		}
	}
}

// compressOn is compress for a key of curve id.
func compressOn(t *testing.T, dir string, id curve.ID) {
	t.Helper()
	pk := groth16.NewProvingKey(id.ECC())
	b, err := os.ReadFile(filepath.Join(dir, PKFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pk.ReadFrom(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := pk.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, PKFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
