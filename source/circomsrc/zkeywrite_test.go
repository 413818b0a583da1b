package circomsrc

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteZkeyIsSnarkjsLayout: a snarkjs zkey read and written again is
// its file section for section (the contributions aside: WriteZkey writes
// its hash and none), on both curves; and reading the written file gives
// the same key.
func TestWriteZkeyIsSnarkjsLayout(t *testing.T) {
	paths, _ := filepath.Glob("testdata/*.zkey")
	more, _ := filepath.Glob("testdata/bls12381/*.zkey")
	paths = append(paths, more...)
	if len(paths) < 4 {
		t.Fatalf("testdata has %d zkeys", len(paths))
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			z, err := ParseZkey(data)
			if err != nil {
				t.Fatal(err)
			}
			orig, err := parseBinFile(data, "zkey", 1)
			if err != nil {
				t.Fatal(err)
			}
			copy(z.Hash[:], orig.sections[10])
			var buf bytes.Buffer
			if err := WriteZkey(&buf, z); err != nil {
				t.Fatal(err)
			}
			ours, err := parseBinFile(buf.Bytes(), "zkey", 1)
			if err != nil {
				t.Fatal(err)
			}
			for typ := uint32(1); typ <= 9; typ++ {
				if !bytes.Equal(ours.sections[typ], orig.sections[typ]) {
					t.Errorf("section %d differs: %d bytes, snarkjs's %d", typ, len(ours.sections[typ]), len(orig.sections[typ]))
				}
			}
			c := ours.sections[10]
			if len(c) != 68 || !bytes.Equal(c[:64], orig.sections[10][:64]) || binary.LittleEndian.Uint32(c[64:]) != 0 {
				t.Errorf("contributions section %x: want the hash and no contributions", c)
			}
			z2, err := ParseZkey(buf.Bytes())
			if err != nil {
				t.Fatalf("the written zkey does not read back: %v", err)
			}
			if z2.NVars != z.NVars || z2.NPublic != z.NPublic || z2.DomainSize != z.DomainSize || z2.Curve != z.Curve {
				t.Errorf("read back %+v, wrote %+v", z2, z)
			}
		})
	}
}

// TestZkeyCoefsFromR1CS: the domain and coefficients snarkjs's groth16
// setup derived from each testdata r1cs are ZkeyDomainSize's and
// ZkeyCoefs's, on both curves.
func TestZkeyCoefsFromR1CS(t *testing.T) {
	paths, _ := filepath.Glob("testdata/*.zkey")
	more, _ := filepath.Glob("testdata/bls12381/*.zkey")
	for _, path := range append(paths, more...) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			z, err := ReadZkeyFile(path)
			if err != nil {
				t.Fatal(err)
			}
			r, err := ReadR1CSFile(path[:len(path)-len(".zkey")] + ".r1cs")
			if err != nil {
				t.Fatal(err)
			}
			if n, err := r.ZkeyDomainSize(); err != nil || n != z.DomainSize {
				t.Errorf("ZkeyDomainSize %d, %v; snarkjs's %d", n, err, z.DomainSize)
			}
			co := r.ZkeyCoefs()
			for m := range co {
				a, b := co[m], z.Coefs[m]
				if len(a.Row) != len(b.Row) {
					t.Fatalf("matrix %d: %d coefficients, snarkjs's %d", m, len(a.Row), len(b.Row))
				}
				for k := range a.Row {
					if a.Row[k] != b.Row[k] || a.Wire[k] != b.Wire[k] || a.Value[k] != b.Value[k] {
						t.Fatalf("matrix %d coefficient %d: (%d, %d, %x), snarkjs's (%d, %d, %x)", m, k, a.Row[k], a.Wire[k], a.Value[k], b.Row[k], b.Wire[k], b.Value[k])
					}
				}
			}
		})
	}
}
