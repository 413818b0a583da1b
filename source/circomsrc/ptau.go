package circomsrc

import (
	"context"
	"fmt"

	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/curve"
)

// ─── a prepared powers of tau (.ptau) ────────────────────────────────────────
//
// A ceremony's phase 1, as `snarkjs powersoftau prepare phase2` leaves it
// (powersoftau_preparephase2.js), for a ceremony of power p (domains up
// to 2^p):
//
//	1 header       n8 u32, q (n8 bytes), power u32, ceremony power u32
//	2 tauG1        2^(p+1) − 1 × G1 [τⁱ]₁
//	3 tauG2        2^p × G2 [τⁱ]₂
//	4 alphaTauG1   2^p × G1 [ατⁱ]₁
//	5 betaTauG1    2^p × G1 [βτⁱ]₁
//	6 betaG2       G2 [β]₂
//	7 contributions (not read)
//	12 the Lagrange basis of tauG1 for each domain 2^k, k = 0 … p+1, one
//	   after another: 2^(p+2) − 1 × G1, domain 2^k's [L_i(τ)]₁ from point 2^k − 1
//	13, 14, 15  likewise of tauG2, alphaTauG1, betaTauG1, k = 0 … p:
//	   2^(p+1) − 1 points each
//
// Points as in a zkey: affine, little-endian Montgomery coordinates.

// PtauPhase2 is what a circuit's phase 2 over a domain of n reads from a
// prepared .ptau, snarkjs's zkey_new's inputs (Points).
type PtauPhase2 struct {
	Curve      curve.ID
	Power      int // the ceremony's: domains up to 2^Power
	DomainSize int // n

	// Points is a *PtauPoints[G1, G2] of the curve's affine types.
	Points any

	// HashComplete is false when zkey_new's circuit hash reads past the
	// ceremony's tauG1 (PtauPoints.HashH): then no circuit hash of the
	// zkey matches the one snarkjs records for it.
	HashComplete bool
}

// PtauPoints are a phase 2's points from a prepared .ptau, for a domain
// of n with generator snarkjs's ωₙ.
type PtauPoints[G1, G2 any] struct {
	Alpha1, Beta1 G1 // [α]₁, [β]₁: alphaTauG1's and betaTauG1's first
	Beta2         G2 // [β]₂

	TauG1, AlphaTauG1, BetaTauG1 []G1 // [L_i(τ)]₁, [αL_i(τ)]₁, [βL_i(τ)]₁, i < n
	TauG2                        []G2 // [L_i(τ)]₂, i < n

	// H is the domain 2n's [L_{2i+1}(τ)]₁, i < n: the zkey's H section.
	H []G1
	// HashH is what zkey_new hashes for H: [τⁱ⁺ⁿ]₁ − [τⁱ]₁ = [τⁱ(τⁿ − 1)]₁
	// for each i its hashHPoints reads: i < n − 1, rounded up to its
	// chunks of 2^14 points past one chunk (a chunk's count is min(n − 1,
	// 2^14) wherever it starts), less those past tauG1 (HashComplete).
	HashH []G1
}

// ptauHashChunk is zkey_new's hashHPoints chunk (CHUNK_SIZE).
const ptauHashChunk = 1 << 14

// ptauHashCount is how many H points zkey_new hashes for a domain of n
// (PtauPoints.HashH).
func ptauHashCount(n int) int {
	k := n - 1
	if k <= ptauHashChunk {
		return k
	}
	return (k + ptauHashChunk - 1) / ptauHashChunk * ptauHashChunk
}

// ptauRaw is a phase 2's sections of a .ptau, as the file holds them:
// each point's bytes are its gnark-crypto affine point's memory, so the
// curve's half decodes them in place (decode).
type ptauRaw struct {
	alpha1, beta1, beta2                []byte
	tauG1, alphaTauG1, betaTauG1, tauG2 []byte
	h                                   []byte // domain 2n's, all 2n points
	mono                                []byte // tauG1's [τⁱ]₁, i < min(len, n + HashH's count)
	n                                   int
}

// ReadPtauPhase2 reads from the prepared .ptau at path the points of a
// phase 2 over a domain of n (a power of two): only those, each section's
// size checked against the header's power first, every point checked to
// be on its curve. A ptau of another curve than want's, one not prepared
// for phase 2 (no section 12: `snarkjs powersoftau prepare phase2` makes
// it) or one too small for n is an error saying so.
func ReadPtauPhase2(ctx context.Context, path string, want curve.ID, n int) (*PtauPhase2, error) {
	o := boundedread.Options{Timeout: 0, MinRate: loadRate, IOTime: true}
	p, err := boundedread.Read(ctx, path, o, func(f *boundedread.File) (*PtauPhase2, error) {
		return readPtau(f, want, n)
	})
	if err != nil {
		return nil, fmt.Errorf("ptau %s: %w", path, err)
	}
	return p, nil
}

func readPtau(f *boundedread.File, want curve.ID, n int) (*PtauPhase2, error) {
	if f.Size() < 0 {
		return nil, fmt.Errorf("not a regular file: a phase 2 reads parts of a .ptau at their offsets")
	}
	table, _, _, err := binFileTable(f, "ptau", 1)
	if err != nil {
		return nil, err
	}
	read := func(typ uint32, off, size int64, what string) ([]byte, error) {
		s := table[typ]
		if off < 0 || size < 0 || off+size > s.size {
			return nil, fmt.Errorf("section %d (%s): %d bytes at %d, the section has %d", typ, what, size, off, s.size)
		}
		b := make([]byte, size)
		if k, err := f.ReadAt(b, s.off+off); int64(k) != size {
			return nil, fmt.Errorf("section %d (%s): read %d of %d bytes: %v", typ, what, k, size, err)
		}
		return b, nil
	}

	// ─── header ───
	s, ok := table[1]
	if !ok {
		return nil, fmt.Errorf("no header section (type 1)")
	}
	if s.size > 4+64+8 {
		return nil, fmt.Errorf("header section of %d bytes; a ptau's has at most %d", s.size, 4+64+8)
	}
	hb, err := read(1, 0, s.size, "header")
	if err != nil {
		return nil, err
	}
	h := &reader{kind: "ptau", name: "header", b: hb}
	cc := h.field("base field q", true)
	power := h.u32()
	h.u32() // the ceremony's power
	if err := h.done(); err != nil {
		return nil, err
	}
	if cc.id() != want {
		return nil, fmt.Errorf("a %s powers of tau, for a %s circuit", cc.id(), want)
	}
	if power > 62 {
		return nil, fmt.Errorf("power %d", power)
	}
	if n < 1 || n&(n-1) != 0 {
		return nil, fmt.Errorf("domain size %d is not a power of two", n)
	}
	if _, ok := table[12]; !ok {
		return nil, fmt.Errorf("not prepared for phase 2 (no section 12): run `snarkjs powersoftau prepare phase2` on it")
	}
	if uint64(n) > 1<<power {
		return nil, fmt.Errorf("the circuit needs a domain of %d (2^%d), this powers of tau holds 2^%d: use a larger one", n, log2(n), power)
	}

	// ─── every section the phase 2 reads, its size from the power ───
	g1, g2 := int64(cc.pointSize(false)), int64(cc.pointSize(true))
	p2 := int64(1) << power
	for _, want := range []struct {
		typ  uint32
		size int64
		what string
	}{
		{2, (2*p2 - 1) * g1, "tauG1"},
		{4, p2 * g1, "alphaTauG1"},
		{5, p2 * g1, "betaTauG1"},
		{6, g2, "betaG2"},
		{12, (4*p2 - 1) * g1, "tauG1's Lagrange bases"},
		{13, (2*p2 - 1) * g2, "tauG2's Lagrange bases"},
		{14, (2*p2 - 1) * g1, "alphaTauG1's Lagrange bases"},
		{15, (2*p2 - 1) * g1, "betaTauG1's Lagrange bases"},
	} {
		s, ok := table[want.typ]
		if !ok {
			return nil, fmt.Errorf("no %s section (type %d)", want.what, want.typ)
		}
		if s.size != want.size {
			return nil, fmt.Errorf("%s section (type %d) of %d bytes; a ptau of power %d has %d", want.what, want.typ, s.size, power, want.size)
		}
	}

	nn := int64(n)
	raw := &ptauRaw{n: n}
	hashed := min(int64(ptauHashCount(n))+nn, 2*p2-1) // tauG1's points the hash reads
	for _, r := range []struct {
		dst       *[]byte
		typ       uint32
		off, size int64
		what      string
	}{
		{&raw.alpha1, 4, 0, g1, "[α]₁"},
		{&raw.beta1, 5, 0, g1, "[β]₁"},
		{&raw.beta2, 6, 0, g2, "[β]₂"},
		{&raw.tauG1, 12, (nn - 1) * g1, nn * g1, "tauG1's Lagrange bases"},
		{&raw.h, 12, (2*nn - 1) * g1, 2 * nn * g1, "tauG1's Lagrange bases of the double domain"},
		{&raw.tauG2, 13, (nn - 1) * g2, nn * g2, "tauG2's Lagrange bases"},
		{&raw.alphaTauG1, 14, (nn - 1) * g1, nn * g1, "alphaTauG1's Lagrange bases"},
		{&raw.betaTauG1, 15, (nn - 1) * g1, nn * g1, "betaTauG1's Lagrange bases"},
		{&raw.mono, 2, 0, hashed * g1, "tauG1"},
	} {
		b, err := read(r.typ, r.off, r.size, r.what)
		if err != nil {
			return nil, err
		}
		*r.dst = b
	}
	pts, complete, err := cc.ptau(raw)
	if err != nil {
		return nil, err
	}
	return &PtauPhase2{Curve: cc.id(), Power: int(power), DomainSize: n, Points: pts, HashComplete: complete}, nil
}

// log2 is k for n = 2^k.
func log2(n int) int {
	k := 0
	for n > 1 {
		n >>= 1
		k++
	}
	return k
}

// ptauSection is a reader over a ptau's section bytes, for the curve's
// decode; what names them in errors.
func ptauSection(b []byte, what string) *reader { return &reader{kind: "ptau", name: what, b: b} }
