package circomsrc

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/internal/hostilefile"
)

// sectionsOf lists a snarkjs container's sections in file order: type,
// offset of its size field, offset and size of its data.
func sectionsOf(t *testing.T, data []byte) []struct {
	typ             uint32
	sizeAt, off, sz int64
} {
	t.Helper()
	var out []struct {
		typ             uint32
		sizeAt, off, sz int64
	}
	pos := int64(12)
	for range binary.LittleEndian.Uint32(data[8:]) {
		sz := int64(binary.LittleEndian.Uint64(data[pos+4:]))
		out = append(out, struct {
			typ             uint32
			sizeAt, off, sz int64
		}{binary.LittleEndian.Uint32(data[pos:]), pos + 4, pos + 12, sz})
		pos += 12 + sz
	}
	return out
}

// padReader is one way zkpipe reads a snarkjs file, and which of its
// sections it reads (the others it must pass over unread).
type padReader struct {
	name  string
	file  string // testdata's
	read  func(path string) error
	reads map[uint32]string // section type → the name errors give it
	path  bool              // its errors name the file (not a stream's)
}

var zkeySections = map[uint32]string{1: "header", 2: "Groth16 header", 3: "IC", 4: "coefficients",
	5: "A", 6: "B1", 7: "B2", 8: "C", 9: "H"}

func padReaders() []padReader {
	load := func(whole bool) func(string) error {
		return func(p string) error {
			c, err := LoadFiles(context.Background(), Files{Zkey: p, ReadKeyWhole: whole})
			if err == nil {
				err = c.Key.CheckDeferred() // the bases a backend would read
				c.Source.(*Source).Close(context.Background())
			}
			return err
		}
	}
	only := func(types ...uint32) map[uint32]string {
		m := map[uint32]string{}
		for _, t := range types {
			m[t] = zkeySections[t]
		}
		return m
	}
	return []padReader{
		{"zkey (points left in the file)", "mul.zkey", load(false), zkeySections, true},
		{"zkey (read whole)", "mul.zkey", load(true), zkeySections, true},
		{"BLS12-381 zkey (read whole)", "bls12381/blsmul.zkey", load(true), zkeySections, true},
		{"zkey's verifying key (streamed)", "mul.zkey", func(p string) error {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = ReadZkeyVerifyingKey(f)
			return err
		}, only(1, 2, 3), false},
		{"r1cs", "mul.r1cs", func(p string) error { _, err := ReadR1CSFile(p); return err },
			map[uint32]string{1: "header", 2: "constraints", 3: "wire→label"}, true},
		{"BLS12-381 r1cs", "bls12381/blsmul.r1cs", func(p string) error { _, err := ReadR1CSFile(p); return err },
			map[uint32]string{1: "header", 2: "constraints", 3: "wire→label"}, true},
		{"wtns's public inputs", "mul.wtns", func(p string) error {
			_, err := ReadWtnsPublic(context.Background(), p, 1, boundedreadOptions())
			return err
		}, map[uint32]string{1: "header", 2: "values"}, true},
	}
}

// TestSectionsPaddedInTheMiddle: every section of every snarkjs file zkpipe
// reads (zkey, its points left in the file or read whole, either curve; a
// zkey's verifying key streamed; r1cs; a wtns's public inputs), grown by
// 256 MiB or 4 GiB of zeros inserted in its middle (a sparse file, its
// table and size consistent), is refused by its declared size before it
// is read, naming the section, the heap growing by a few megabytes at
// most; a section the reader never reads (the MPC transcript; a streamed
// verifying key's sections after IC) is passed over unread, and the file
// reads. Before, the zkey's sections 1-4 (5-9 read whole) and the r1cs's
// were read whole first, 4.25 GB of RSS for a 4 GiB pad, and an r1cs whose
// wire→label section was padded was accepted.
func TestSectionsPaddedInTheMiddle(t *testing.T) {
	for _, pad := range []int64{256 << 20, 4 << 30} {
		for _, r := range padReaders() {
			data, err := os.ReadFile(filepath.Join("testdata", r.file))
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range sectionsOf(t, data) {
				t.Run(fmt.Sprintf("%dMiB/%s/section %d", pad>>20, r.name, s.typ), func(t *testing.T) {
					b := append([]byte(nil), data...)
					binary.LittleEndian.PutUint64(b[s.sizeAt:], uint64(s.sz+pad))
					p := filepath.Join(t.TempDir(), filepath.Base(r.file))
					hostilefile.Padded(t, p, b, s.off+s.sz/2, pad)
					before := allocated()
					err := r.read(p)
					grew := allocated() - before
					if grew > 64<<20 {
						t.Errorf("%d bytes allocated reading it (%v)", grew, err)
					}
					name, read := r.reads[s.typ]
					switch {
					case !read && err != nil:
						t.Errorf("a section it does not read, padded: %v, want the file read", err)
					case read && (err == nil || !strings.Contains(err.Error(), name+" section") || r.path && !strings.Contains(err.Error(), p)):
						t.Errorf("%v, want it refused naming the %s section and the file", err, name)
					}
				})
			}
		}
	}
}
