package circomsrc

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"strconv"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// ─── snarkjs binary files ────────────────────────────────────────────────────
//
// .zkey, .wtns and .r1cs share one container (iden3's binfileutils):
//
//	magic    4 bytes  "zkey" | "wtns" | "r1cs"
//	version  u32
//	nSect    u32
//	nSect × { type u32, size u64, data[size] }
//
// all little-endian. A section type may appear once; the readers below check
// every size against what the headers say before they trust a byte of it.

// binFile is a parsed container: the data of each section by type, as
// sub-slices of the file's bytes (no copies).
type binFile struct {
	kind     string
	version  uint32
	sections map[uint32][]byte
}

func parseBinFile(data []byte, magic string, maxVersion uint32) (*binFile, error) {
	if len(data) < 12 {
		return nil, fmt.Errorf("%s: truncated: %d bytes, not even a header", magic, len(data))
	}
	if string(data[:4]) != magic {
		return nil, fmt.Errorf("not a %s file (it does not begin with %q)", magic, magic)
	}
	f := &binFile{kind: magic, version: binary.LittleEndian.Uint32(data[4:]), sections: map[uint32][]byte{}}
	if f.version == 0 || f.version > maxVersion {
		return nil, fmt.Errorf("%s: a version this reader does not know (it knows 1 to %d)", magic, maxVersion)
	}
	n := binary.LittleEndian.Uint32(data[8:])
	pos := uint64(12)
	for i := uint32(0); i < n; i++ {
		if uint64(len(data))-pos < 12 {
			return nil, fmt.Errorf("%s: truncated in the header of section %d of %d", magic, i+1, n)
		}
		typ := binary.LittleEndian.Uint32(data[pos:])
		size := binary.LittleEndian.Uint64(data[pos+4:])
		pos += 12
		if size > uint64(len(data))-pos {
			return nil, fmt.Errorf("%s: truncated: section %d (type %d) says %d bytes, %d remain", magic, i+1, typ, size, uint64(len(data))-pos)
		}
		if _, dup := f.sections[typ]; dup {
			return nil, fmt.Errorf("%s: section type %d appears twice", magic, typ)
		}
		f.sections[typ] = data[pos : pos+size]
		pos += size
	}
	if pos != uint64(len(data)) {
		return nil, fmt.Errorf("%s: %d bytes after the last of %d sections", magic, uint64(len(data))-pos, n)
	}
	return f, nil
}

// section returns section typ, which must be present.
func (f *binFile) section(typ uint32, name string) (*reader, error) {
	s, ok := f.sections[typ]
	if !ok {
		return nil, fmt.Errorf("%s: no %s section (type %d)", f.kind, name, typ)
	}
	return &reader{kind: f.kind, name: name, b: s}, nil
}

// reader consumes one section; the first short read sets err and every later
// read returns zeros, so a parser checks err once per section.
type reader struct {
	kind, name string
	b          []byte
	err        error
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return make([]byte, n)
	}
	if n < 0 || n > len(r.b) {
		r.err = fmt.Errorf("%s: %s section: truncated: needs %d more bytes, has %d", r.kind, r.name, n, len(r.b))
		return make([]byte, n)
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) u32() uint32 { return binary.LittleEndian.Uint32(r.take(4)) }
func (r *reader) u64() uint64 { return binary.LittleEndian.Uint64(r.take(8)) }

// done checks that the section was consumed exactly.
func (r *reader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%s: %s section: %d bytes more than its header accounts for", r.kind, r.name, len(r.b))
	}
	return r.err
}

// need checks, before a loop reads count items of size bytes each, that the
// section holds exactly that much more (plus rest bytes after), so a corrupt
// count fails at once instead of after a huge allocation.
func (r *reader) need(count, size, rest uint64, what string) error {
	if r.err != nil {
		return r.err
	}
	if size != 0 && count > (1<<40)/size {
		r.err = fmt.Errorf("%s: %s section: %d %s is absurd", r.kind, r.name, count, what)
		return r.err
	}
	if want := count*size + rest; uint64(len(r.b)) != want {
		r.err = fmt.Errorf("%s: %s section: %d %s need %d bytes, the section has %d", r.kind, r.name, count, what, want, len(r.b))
	}
	return r.err
}

// prime reads a field size n8 (u32) and a modulus of n8 bytes, and checks it
// is the modulus want (BN254's r or q).
func (r *reader) prime(want *big.Int, what string) {
	n8 := r.u32()
	if r.err != nil {
		return
	}
	if n8 != 32 {
		r.err = fmt.Errorf("%s: %s section: %s of %d bytes; only BN254 (32) is supported", r.kind, r.name, what, n8)
		return
	}
	if got := leInt(r.take(32)); r.err == nil && got.Cmp(want) != 0 {
		r.err = fmt.Errorf("%s: %s section: %s is %s; only BN254 (%s) is supported", r.kind, r.name, what, got, want)
	}
}

func leInt(b []byte) *big.Int {
	be := make([]byte, len(b))
	for i := range b {
		be[len(b)-1-i] = b[i]
	}
	return new(big.Int).SetBytes(be)
}

// item names what a reader reads, for its errors: "point 7", "[α]₁". It is
// formatted only on an error: a zkey holds millions of items.
type item struct {
	name string
	i    int // −1: no index
}

func (it item) String() string {
	if it.i < 0 {
		return it.name
	}
	return it.name + " " + strconv.Itoa(it.i)
}

// fr reads a scalar in standard form, little-endian (a .wtns value). It must
// be below r.
func (r *reader) fr(what item) fr.Element {
	var b [32]byte
	copy(b[:], r.take(32))
	e, err := fr.LittleEndian.Element(&b)
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("%s: %s section: %s is not below the field modulus", r.kind, r.name, what)
	}
	return e
}

// frMont2 reads a zkey coefficient: snarkjs stores c·R² mod r (R = 2²⁵⁶), so
// that one Montgomery product with a standard-form witness value gives the
// Montgomery form of c·w. As gnark's limbs, c·R² is the Montgomery form of
// c·R; one product with R⁻¹ gives c.
func (r *reader) frMont2(what item) fr.Element {
	var e fr.Element
	b := r.take(32)
	for i := range e {
		e[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	if !frCanonical(&e) && r.err == nil {
		r.err = fmt.Errorf("%s: %s section: %s is not below the field modulus", r.kind, r.name, what)
	}
	return *e.Mul(&e, &rInv)
}

// fp reads a base-field coordinate in Montgomery form, little-endian: the
// same limbs gnark's fp.Element holds.
func (r *reader) fp(what item) fp.Element {
	var e fp.Element
	b := r.take(32)
	for i := range e {
		e[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	if !fpCanonical(&e) && r.err == nil {
		r.err = fmt.Errorf("%s: %s section: %s: coordinate not below the field modulus", r.kind, r.name, what)
	}
	return e
}

// g1 reads an affine G1 point (x, y); (0, 0) is the point at infinity, as in
// gnark. A point off the curve is an error. Subgroup membership is not
// checked (G1 has cofactor 1).
func (r *reader) g1(what item) bn254.G1Affine {
	var p bn254.G1Affine
	p.X = r.fp(what)
	p.Y = r.fp(what)
	if r.err == nil && !p.IsInfinity() && !p.IsOnCurve() {
		r.err = fmt.Errorf("%s: %s section: %s is not on the curve", r.kind, r.name, what)
	}
	return p
}

// g2 reads an affine G2 point (x.c0, x.c1, y.c0, y.c1). A point off the
// twist is an error; like gnark's UnsafeReadFrom for proving keys, the
// subgroup is not checked (milliseconds a point): a bad proving key only
// spoils its own proofs, which verifiers reject.
func (r *reader) g2(what item) bn254.G2Affine {
	var p bn254.G2Affine
	p.X.A0 = r.fp(what)
	p.X.A1 = r.fp(what)
	p.Y.A0 = r.fp(what)
	p.Y.A1 = r.fp(what)
	if r.err == nil && !p.IsInfinity() && !p.IsOnCurve() {
		r.err = fmt.Errorf("%s: %s section: %s is not on the curve", r.kind, r.name, what)
	}
	return p
}

// rInv is R⁻¹ mod r, R = 2²⁵⁶ (the Montgomery constant).
var rInv = func() (e fr.Element) {
	e.SetBigInt(new(big.Int).Lsh(big.NewInt(1), 256))
	return *e.Inverse(&e)
}()

// Limb-wise comparisons with the moduli, most significant limb first.
var frLimbs, fpLimbs = limbsOf(fr.Modulus()), limbsOf(fp.Modulus())

func frCanonical(e *fr.Element) bool { return below((*[4]uint64)(e), &frLimbs) }
func fpCanonical(e *fp.Element) bool { return below((*[4]uint64)(e), &fpLimbs) }

func limbsOf(m *big.Int) (l [4]uint64) {
	b := m.FillBytes(make([]byte, 32))
	for i := range l {
		l[i] = binary.BigEndian.Uint64(b[32-8*(i+1):])
	}
	return l
}

func below(x, m *[4]uint64) bool {
	for i := 3; i >= 0; i-- {
		if x[i] != m[i] {
			return x[i] < m[i]
		}
	}
	return false
}
