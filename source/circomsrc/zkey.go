package circomsrc

import (
	"context"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/zkpipe/zkpipe/source/boundedread"
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
//	9 H               domainSize × G1: [L₂ᵢ₊₁(τ)·Z(τ)/δ]₁ over the 2n domain
//	10 contributions  (the MPC transcript; not read)
//
// Points are affine, coordinates little-endian in Montgomery form, (0, 0) for
// infinity. The coefficient section lists A and B only: snarkjs computes
// c = a∘b, and adds to A one row per public wire (nConstraints + i selects
// wire i) so the public inputs are bound to the proof.
type Zkey struct {
	NVars, NPublic, DomainSize int // NPublic excludes the one wire

	Alpha1, Beta1, Delta1 bn254.G1Affine
	Beta2, Gamma2, Delta2 bn254.G2Affine

	IC     []bn254.G1Affine
	Coefs  [2]Coefs // A, B
	A, B1  []bn254.G1Affine
	B2     []bn254.G2Affine
	C      []bn254.G1Affine
	H      []bn254.G1Affine
	NbRows int // 1 + the highest constraint a coefficient names
}

// Coefs is one matrix in coordinate form: value[k] at (Row[k], Wire[k]).
type Coefs struct {
	Row, Wire []uint32
	Value     []fr.Element
}

// maxLogDomain: snarkjs evaluates h on the coset ω₂ₙ·⟨ωₙ⟩, and BN254's scalar
// field has 2-adicity 28, so n ≤ 2²⁷ (snarkjs's own 2²⁸ case uses another
// shift, which zkpipe does not follow).
const maxLogDomain = 27

// ReadZkeyFile reads and checks a .zkey file, bounded as LoadFiles reads it.
func ReadZkeyFile(path string) (*Zkey, error) {
	return readZkeyFile(context.Background(), path, Files{})
}

func readZkeyFile(ctx context.Context, path string, o Files) (*Zkey, error) {
	// parsed from memory: no larger than the machine's, and its section
	// table checked against the file before a section is read
	f, err := readBinPath(ctx, path, "zkey", 1, boundedread.MachineMemory(), o)
	if err != nil {
		return nil, err
	}
	z, err := parseZkey(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return z, nil
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
	r, err := f.section(1, "header")
	if err != nil {
		return nil, err
	}
	if p := r.u32(); r.err == nil && p != 1 {
		return nil, fmt.Errorf("zkey: protocol %d; only Groth16 (1) is supported (PLONK and FFLONK keys are not)", p)
	}
	if err := r.done(); err != nil {
		return nil, err
	}

	if r, err = f.section(2, "Groth16 header"); err != nil {
		return nil, err
	}
	r.prime(fp.Modulus(), "base field q")
	r.prime(fr.Modulus(), "scalar field r")
	z := &Zkey{NVars: int(r.u32()), NPublic: int(r.u32()), DomainSize: int(r.u32())}
	if r.err != nil {
		return nil, r.err
	}
	switch {
	case z.NVars < 1 || z.NVars > 1<<31-1:
		return nil, fmt.Errorf("zkey: %d wires", z.NVars)
	case z.NPublic+1 > z.NVars:
		return nil, fmt.Errorf("zkey: %d public inputs for %d wires", z.NPublic, z.NVars)
	case z.DomainSize < 2 || z.DomainSize&(z.DomainSize-1) != 0:
		return nil, fmt.Errorf("zkey: domain size %d is not a power of two", z.DomainSize)
	case z.DomainSize > 1<<maxLogDomain:
		return nil, fmt.Errorf("zkey: domain size %d is over 2^%d", z.DomainSize, maxLogDomain)
	}
	z.Alpha1, z.Beta1 = r.g1(item{"[α]₁", -1}), r.g1(item{"[β]₁", -1})
	z.Beta2, z.Gamma2 = r.g2(item{"[β]₂", -1}), r.g2(item{"[γ]₂", -1})
	z.Delta1, z.Delta2 = r.g1(item{"[δ]₁", -1}), r.g2(item{"[δ]₂", -1})
	if err := r.done(); err != nil {
		return nil, err
	}

	// ─── point sections ───
	if z.IC, err = g1s(f, 3, "IC", z.NPublic+1); err != nil {
		return nil, err
	}
	return z, nil
}

// g1s reads section typ as count G1 points.
func g1s(f *binFile, typ uint32, name string, count int) ([]bn254.G1Affine, error) {
	r, err := f.section(typ, name)
	if err != nil {
		return nil, err
	}
	if err := r.need(uint64(count), 64, 0, "points"); err != nil {
		return nil, err
	}
	out := make([]bn254.G1Affine, count)
	for i := range out {
		out[i] = r.g1(item{"point", i})
		if r.err != nil {
			return nil, r.err
		}
	}
	// parsed: the raw section (as large as out) is garbage from here, so
	// a zkey read from a file peaks near its size, not twice it
	delete(f.sections, typ)
	return out, r.done()
}

// parseZkeyBody parses the proving key's point and coefficient sections.
func parseZkeyBody(f *binFile, z *Zkey) (*Zkey, error) {
	var err error
	if z.A, err = g1s(f, 5, "A", z.NVars); err != nil {
		return nil, err
	}
	if z.B1, err = g1s(f, 6, "B1", z.NVars); err != nil {
		return nil, err
	}
	if z.C, err = g1s(f, 8, "C", z.NVars-z.NPublic-1); err != nil {
		return nil, err
	}
	if z.H, err = g1s(f, 9, "H", z.DomainSize); err != nil {
		return nil, err
	}
	r, err := f.section(7, "B2")
	if err != nil {
		return nil, err
	}
	if err := r.need(uint64(z.NVars), 128, 0, "points"); err != nil {
		return nil, err
	}
	z.B2 = make([]bn254.G2Affine, z.NVars)
	for i := range z.B2 {
		if z.B2[i] = r.g2(item{"point", i}); r.err != nil {
			return nil, r.err
		}
	}
	if err := r.done(); err != nil {
		return nil, err
	}
	delete(f.sections, 7)

	// ─── coefficients ───
	if r, err = f.section(4, "coefficients"); err != nil {
		return nil, err
	}
	m := r.u32()
	if err := r.need(uint64(m), 12+32, 0, "coefficients"); err != nil {
		return nil, err
	}
	for k := uint32(0); k < m; k++ {
		mat, row, wire := r.u32(), r.u32(), r.u32()
		v := r.frMont2(item{"coefficient", int(k)})
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
