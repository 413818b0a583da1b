package circomsrc

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/proofdata"
)

// Zkey is a snarkjs Groth16 proving key (.zkey), as snarkjs's zkey_new and
// groth16_prove lay it out:
//
//	1 header          u32 protocol (1: Groth16)
//	2 Groth16 header  n8q u32, q, n8r u32, r, nVars u32, nPublic u32,
//	                  domainSize u32, [α]₁ [β]₁ [β]₂ [γ]₂ [δ]₁ [δ]₂
//	3 IC              nPublic+1 × G1: [(βA_i+αB_i+C_i)(τ)/γ]₁, public wires
//	4 coefficients    u32 m, then m × {matrix u32 (0 A, 1 B), constraint u32,
//	                  signal u32, value (c·R² mod r)}
//	5 A               nVars × G1 [A_i(τ)]₁
//	6 B1              nVars × G1 [B_i(τ)]₁
//	7 B2              nVars × G2 [B_i(τ)]₂
//	8 C               nVars−nPublic−1 × G1 [(βA_i+αB_i+C_i)(τ)/δ]₁, private wires
//	9 H               domainSize × G1: [L₂ᵢ₊₁(τ)/δ]₁, the odd Lagrange bases of the 2n domain
//	10 contributions  (the MPC transcript; not read)
//
// Points are affine, coordinates little-endian in Montgomery form of q, (0, 0)
// for infinity: a BN254 G1 point is 64 bytes, a BLS12-381 one 96 (x, y of
// 48), G2 twice that. The coefficient section lists A and B only: snarkjs computes
// c = a∘b, and adds to A one row per public wire (nConstraints + i selects
// wire i) so the public inputs are bound to the proof.
type Zkey struct {
	Curve                      curve.ID // from q and r in the Groth16 header
	NVars, NPublic, DomainSize int      // NPublic excludes the one wire

	// Points is a *ZkeyPoints[G1, G2] of the curve's affine types
	// (PointsOf); after New, the source's copy holds only the header's
	// points and IC.
	Points any

	Coefs  [2]Coefs // A, B
	NbRows int      // 1 + the highest constraint a coefficient names

	// Hash is the circuit hash (csHash) WriteZkey puts in the
	// contributions section (ZkeyHash); the readers leave it zero.
	Hash [64]byte

	// def, when set, is where the point sections lie in the zkey's file,
	// unread (Points has none of A, B1, B2, C, H): New builds
	// a key whose bases stream from the file (zkeydefer.go).
	def *zkeyDeferral
}

// Coefs is one matrix in coordinate form: value[k] at (Row[k], Wire[k]),
// each value in Montgomery form of the zkey's Fr.
type Coefs struct {
	Row, Wire []uint32
	Value     []proofdata.Scalar
}

// maxLogDomain: snarkjs evaluates h on the coset ω₂ₙ·⟨ωₙ⟩, so n is at most
// half the scalar field's 2-adicity allows: 2²⁷ for BN254 (snarkjs's own 2²⁸
// case uses another shift, which zkpipe does not follow), 2³¹ for BLS12-381.
func maxLogDomain(id curve.ID) int { return id.Params().TwoAdicity - 1 }

// ReadZkeyFile reads and checks a .zkey file, bounded as LoadFiles reads it.
func ReadZkeyFile(path string) (*Zkey, error) {
	return readZkeyFile(context.Background(), path, Files{})
}

func readZkeyFile(ctx context.Context, path string, o Files) (*Zkey, error) {
	// read whole: no larger than the machine's memory; each section read
	// once its size is checked (a pipe's in snarkjs's order, 1 to 9)
	return readBinPath(ctx, path, "zkey", 1, boundedread.MachineMemory(), o, types(1, 2, 3, 4, 5, 6, 7, 8, 9), parseZkey)
}

// ParseZkey parses a .zkey held in memory. It checks every header field and
// section size, that every coordinate is below the field modulus and every
// point is on its curve (not the G2 subgroup), and that every coefficient
// names a row of the domain and a wire of the circuit.
func ParseZkey(data []byte) (*Zkey, error) {
	f, err := parseBinFile(data, "zkey", 1)
	if err != nil {
		return nil, err
	}
	return parseZkey(f)
}

func parseZkey(f *binFile) (*Zkey, error) {
	z, err := parseZkeyHead(f)
	if err != nil {
		return nil, err
	}
	return parseZkeyBody(f, z)
}

// parseZkeyHead parses the sections a verifier needs: the headers and IC.
func parseZkeyHead(f *binFile) (*Zkey, error) {
	// ─── headers ───
	r, err := f.section(1, "header", boundedread.Exactly(4, "a protocol"))
	if err != nil {
		return nil, err
	}
	if p := r.u32(); r.err == nil && p != 1 {
		return nil, fmt.Errorf("zkey: protocol %d; only Groth16 (1) is supported (PLONK and FFLONK keys are not)", p)
	}
	if err := r.done(); err != nil {
		return nil, err
	}

	// n8q, then q, n8r = 32, r, three counts, three G1 and three G2 points
	// of 2·n8q and 4·n8q bytes: 52 + 19·n8q bytes
	if r, err = f.sectionBy(2, "Groth16 header", 4, func(head []byte) boundedread.Need {
		n8q := binary.LittleEndian.Uint32(head)
		return boundedread.Exactly(boundedread.Items(uint64(n8q), 19, 52), fmt.Sprintf("its fields and points of %d-byte coordinates", n8q))
	}); err != nil {
		return nil, err
	}
	cq := r.field("base field q", true)
	cr := r.field("scalar field r", false)
	if r.err == nil && cq != cr {
		return nil, fmt.Errorf("zkey: Groth16 header: the base field q is %s's, the scalar field r %s's", cq.id(), cr.id())
	}
	z := &Zkey{NVars: int(r.u32()), NPublic: int(r.u32()), DomainSize: int(r.u32())}
	if r.err != nil {
		return nil, r.err
	}
	cc := cq
	z.Curve = cc.id()
	switch {
	case z.NVars < 1 || z.NVars > 1<<31-1:
		return nil, fmt.Errorf("zkey: %d wires", z.NVars)
	case z.NPublic+1 > z.NVars:
		return nil, fmt.Errorf("zkey: %d public inputs for %d wires", z.NPublic, z.NVars)
	case z.DomainSize < 2 || z.DomainSize&(z.DomainSize-1) != 0:
		return nil, fmt.Errorf("zkey: domain size %d is not a power of two", z.DomainSize)
	case z.DomainSize > 1<<maxLogDomain(z.Curve):
		return nil, fmt.Errorf("zkey: domain size %d is over 2^%d, the most a %s zkey can have", z.DomainSize, maxLogDomain(z.Curve), z.Curve)
	}
	cc.headPoints(r, z)
	if err := r.done(); err != nil {
		return nil, err
	}

	// ─── point sections ───
	if err := cc.ic(f, z); err != nil {
		return nil, err
	}
	return z, nil
}

// parseZkeyBody parses the proving key's point and coefficient sections.
func parseZkeyBody(f *binFile, z *Zkey) (*Zkey, error) {
	cc := curveOf(z.Curve)
	if err := cc.bodyPoints(f, z); err != nil {
		return nil, err
	}
	return parseCoefs(f, z)
}

// parseCoefs parses the coefficient section into z.Coefs and z.NbRows.
func parseCoefs(f *binFile, z *Zkey) (*Zkey, error) {
	cc := curveOf(z.Curve)
	// m, then m × {matrix, row, wire, a 32-byte value}
	r, err := f.sectionBy(4, "coefficients", 4, func(head []byte) boundedread.Need {
		m := binary.LittleEndian.Uint32(head)
		return boundedread.Exactly(boundedread.Items(uint64(m), 12+32, 4), fmt.Sprintf("%d coefficients", m))
	})
	if err != nil {
		return nil, err
	}
	m := r.u32()
	for k := uint32(0); k < m; k++ {
		mat, row, wire := r.u32(), r.u32(), r.u32()
		v := cc.coef(r, item{"coefficient", int(k)})
		if r.err != nil {
			return nil, r.err
		}
		switch {
		case mat > 1:
			return nil, fmt.Errorf("zkey: coefficient %d: matrix %d (want 0 for A or 1 for B)", k, mat)
		case int(row) >= z.DomainSize:
			return nil, fmt.Errorf("zkey: coefficient %d: row %d outside the domain of %d", k, row, z.DomainSize)
		case int(wire) >= z.NVars:
			return nil, fmt.Errorf("zkey: coefficient %d: wire %d of %d", k, wire, z.NVars)
		}
		c := &z.Coefs[mat]
		c.Row, c.Wire, c.Value = append(c.Row, row), append(c.Wire, wire), append(c.Value, v)
		z.NbRows = max(z.NbRows, int(row)+1)
	}
	if err := r.done(); err != nil {
		return nil, err
	}
	return z, nil
}
