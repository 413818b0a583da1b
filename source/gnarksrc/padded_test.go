package gnarksrc

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/internal/hostilefile"
)

// padded returns data with part grown by about pad bytes of zeros in its
// middle, where the zeros go (a sparse file's hole: hostilefile.Padded)
// and how many: with counted, its count (and what holds it) grown to
// match, else nothing else changed.
func padded(data []byte, p layoutPart, pad int64, counted bool) (b []byte, at, grow int64) {
	b = bytes.Clone(data)
	if p.countAt < 0 || !counted {
		return b, p.off + p.size/2, pad
	}
	k := pad / p.unit
	grow = k * p.unit
	switch {
	case p.width == 8 && p.countLE:
		binary.LittleEndian.PutUint64(b[p.countAt:], binary.LittleEndian.Uint64(b[p.countAt:])+uint64(k))
	case p.width == 8:
		binary.BigEndian.PutUint64(b[p.countAt:], binary.BigEndian.Uint64(b[p.countAt:])+uint64(k))
	default:
		binary.BigEndian.PutUint32(b[p.countAt:], binary.BigEndian.Uint32(b[p.countAt:])+uint32(k))
	}
	for _, w := range p.within {
		binary.LittleEndian.PutUint64(b[w:], binary.LittleEndian.Uint64(b[w:])+uint64(grow))
	}
	return b, p.off + p.size/2/p.unit*p.unit, grow
}

// gnarkFile is one gnark file of a circuit directory and how zkpipe reads
// it; parts walks its parts.
type gnarkFile struct {
	name  string
	file  string // in the directory
	parts func(data []byte) []layoutPart
	read  func(dir, path string) error
}

// TestPartsPaddedInTheMiddle: every part of every gnark file zkpipe reads
// (circuit.r1cs's sections; circuit.pk's, raw and compressed, and
// circuit.vk's points and slices, through LoadDir and alone; a proof and
// its public witness through verify; a job's witness), of a circuit with a
// commitment on BN254 and on BLS12-381, grown in its middle by 4 MiB, 32
// MiB or 4 GiB of zeros (a sparse file), inserted alone or with its count
// grown to match, is refused before it is read: the heap grows by less
// than a quarter of the pad (and 64 MiB) beyond what reading the file as
// it is takes, and under the files' own size limits a part whose count
// was grown is named. Before, an r1cs section padded after its items was
// read whole and accepted, and a key's slice was decoded at its padded
// count first.
func TestPartsPaddedInTheMiddle(t *testing.T) {
	type variant struct {
		name       string
		id         curve.ID
		compressed bool
	}
	for _, v := range []variant{{"bn254", curve.BN254, false}, {"bn254 compressed", curve.BN254, true}, {"bls12-381", curve.BLS12_381, false}} {
		base := filepath.Join(t.TempDir(), "c")
		if _, err := SetupOn(v.id, "commit", 64, base); err != nil {
			t.Fatal(err)
		}
		if v.compressed {
			compress(t, base)
		}
		c, err := LoadDir(base)
		if err != nil {
			t.Fatal(err)
		}
		src := c.Source.(*Source)
		w, err := src.Witness(1)
		if err != nil {
			t.Fatal(err)
		}
		pk, err := src.WholeProvingKey()
		if err != nil {
			t.Fatal(err)
		}
		proof, err := groth16.Prove(src.R1CS(), pk, w, src.ProverOptions()...)
		if err != nil {
			t.Fatal(err)
		}
		var proofBytes bytes.Buffer
		if _, err := proof.WriteTo(&proofBytes); err != nil {
			t.Fatal(err)
		}
		pub, _ := w.Public()
		pubBytes, _ := pub.MarshalBinary()
		witBytes, _ := w.MarshalBinary()
		shape := src.witnessShape("c")
		files := []gnarkFile{
			{"r1cs", R1CSFile, func(d []byte) []layoutPart {
				l, _, _ := r1csLayout(bytes.NewReader(d), int64(len(d)))
				return l.parts
			}, func(dir, _ string) error { _, err := LoadDir(dir); return err }},
			{"proving key", PKFile, func(d []byte) []layoutPart {
				return pkLayout(bytes.NewReader(d), int64(len(d)), v.id, nil).parts
			}, func(dir, _ string) error { _, err := LoadDir(dir); return err }},
			{"verifying key", VKFile, func(d []byte) []layoutPart {
				return vkLayout(bytes.NewReader(d), int64(len(d)), v.id, nil).parts
			}, func(dir, _ string) error { _, err := LoadDir(dir); return err }},
			{"verifying key alone", VKFile, func(d []byte) []layoutPart {
				return vkLayout(bytes.NewReader(d), int64(len(d)), v.id, nil).parts
			}, func(_, p string) error { _, err := ReadVerifyingKey(p); return err }},
			{"proof", "p.proof", func(d []byte) []layoutPart {
				return proofLayout(d, v.id, -1).parts
			}, func(dir, p string) error { return VerifyFiles(src.VerifyingKey(), p, filepath.Join(dir, "p.public")) }},
			{"public witness", "p.public", func(d []byte) []layoutPart {
				return []layoutPart{{name: "public witness", off: 12, size: int64(len(d) - 12), countAt: 0, width: 4, unit: 32}}
			}, func(dir, p string) error { return VerifyFiles(src.VerifyingKey(), filepath.Join(dir, "p.proof"), p) }},
			{"witness", "w.witness", func(d []byte) []layoutPart {
				return []layoutPart{{name: "witness", off: 12, size: int64(len(d) - 12), countAt: 4, width: 4, unit: 32}}
			}, func(_, p string) error {
				_, err := readWitnessFile(context.Background(), p, shape, boundedread.Options{})
				return err
			}},
		}
		extra := map[string][]byte{"p.proof": proofBytes.Bytes(), "p.public": pubBytes, "w.witness": witBytes}
		for _, f := range files {
			data, ok := extra[f.file]
			if !ok {
				if data, err = os.ReadFile(filepath.Join(base, f.file)); err != nil {
					t.Fatal(err)
				}
			}
			parts := f.parts(data)
			if len(parts) < 2 && f.file != "p.public" && f.file != "w.witness" {
				t.Fatalf("%s %s: %d parts walked", v.name, f.name, len(parts))
			}
			// what reading the file as it is allocates
			dir := copyDir(t, base)
			for name, b := range extra {
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var good error
			baseline := allocated(func() { good = f.read(dir, filepath.Join(dir, f.file)) })
			if good != nil {
				t.Fatalf("%s %s as it is: %v", v.name, f.name, good)
			}
			for _, c := range []struct {
				pad     int64
				counted bool
			}{{4 << 20, false}, {4 << 20, true}, {32 << 20, true}, {4 << 30, false}, {4 << 30, true}} {
				for _, p := range parts {
					pad := c.pad
					if c.counted && (p.countAt < 0 || p.name == "its coefficients") {
						// no count, or one nothing but the file bounds (the
						// coefficient table: zeros are coefficients too)
						continue
					}
					how := "inserted"
					if c.counted {
						how = "counted"
					}
					t.Run(fmt.Sprintf("%s/%s/%s/%dMiB %s", v.name, f.name, p.name, pad>>20, how), func(t *testing.T) {
						dir := copyDir(t, base)
						for name, b := range extra {
							if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
								t.Fatal(err)
							}
						}
						b, at, grow := padded(data, p, pad, c.counted)
						path := filepath.Join(dir, f.file)
						hostilefile.Padded(t, path, b, at, grow)
						if f.file == "w.witness" && c.counted {
							// the witness's values: its secret count and its
							// element count say them
							binary.BigEndian.PutUint32(b[8:], binary.BigEndian.Uint32(b[8:])+uint32(grow/32))
							hostilefile.Padded(t, path, b, at, grow)
						}
						var err error
						grew := allocated(func() { err = f.read(dir, path) })
						if err == nil {
							t.Fatalf("accepted")
						}
						if grew > baseline+uint64(min(grow/4, 64<<20)) {
							t.Errorf("%d bytes allocated before the refusal: %v", grew, err)
						}
						// (a proof or public witness grown is refused by its
						// size alone; a verifying key alone with the error of
						// the first curve it is tried as)
						if pad == 4<<20 && c.counted && strings.HasPrefix(f.file, "circuit.") && f.name != "verifying key alone" && !strings.Contains(err.Error(), p.name) {
							t.Errorf("%v, want the error to name %s", err, p.name)
						}
					})
				}
			}
		}
	}
}
