package keygen

import (
	"fmt"
	"runtime"
	"time"

	"github.com/consensys/gnark/constraint"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/source/circomsrc"
)

// A circom circuit's key is snarkjs's (zkey_new.js, what `snarkjs groth16
// setup` runs, then `zkey contribute`), over snarkjs's domain and rows
// (circomsrc.ZkeyDomainSize, ZkeyCoefs: the constraints, then a row
// binding each public wire), its roots of unity ffjavascript's
// (circomsrc.RootOfUnity):
//
//	[α]₁ [β]₁ [β]₂ [γ]₂ [δ]₁ [δ]₂
//	IC_j = [(β·A_j(τ) + α·B_j(τ) + C_j(τ))/γ]₁   j ≤ nPublic (the one wire and the public ones)
//	C_j  = [(β·A_j(τ) + α·B_j(τ) + C_j(τ))/δ]₁   j > nPublic
//	A_j = [A_j(τ)]₁, B1_j = [B_j(τ)]₁, B2_j = [B_j(τ)]₂   every wire
//	H_i = [L_{2i+1}(τ)/δ]₁   i < n: the odd Lagrange bases of the domain of 2n
//
// The prover's h·Z is a polynomial of degree 2n − 2, zero on the even
// points of the domain of 2n (the domain of n), so its value at τ is
// Σ_i (h·Z)(ω₂ₙ^{2i+1})·L_{2i+1}(τ): the H points, which the prover
// multiplies by its a·b − c at the odd points. Zkey computes them from
// fresh toxic waste; ZkeyFromPtau from a ceremony's phase 1, with γ = δ = 1
// (the generators) as snarkjs's groth16 setup does before any phase 2
// contribution.

// circomSetup is one curve's circom keys.
type circomSetup struct {
	// special is 0, 1, 2 and −1 in Fr, in the order of gnark's
	// coefficient IDs (CoeffIdZero … CoeffIdMinusOne), which the QAP's
	// sums treat without a product.
	special [4]proofdata.Scalar
	// fresh computes z's points from fresh toxic waste.
	fresh func(z *circomsrc.Zkey, ct *circomTerms, clock *phaseClock, o *options) error
	// ptau computes z's points from p and returns what the circuit hash
	// takes for H (PtauPoints.HashH).
	ptau func(z *circomsrc.Zkey, ct *circomTerms, p *circomsrc.PtauPhase2, clock *phaseClock) (hashH any, err error)
}

// Zkey returns a Groth16 key for the circom circuit r, in snarkjs's layout
// (circomsrc.WriteZkey writes its file), from fresh toxic waste drawn from
// crypto/rand and zeroed when Zkey returns, never logged or stored: a test
// key, as Setup's are (package doc). It uses every core; WithFixedBase
// moves its fixed-base products to a GPU, and WithPhaseLog says where its
// time goes. The key's circuit hash (Zkey.Hash) is ZkeyHash's of its own
// points: no ceremony can check it, there being none.
func Zkey(r *circomsrc.R1CS, opts ...Option) (*circomsrc.Zkey, error) {
	z, ct, s, clock, o, err := newCircomZkey(r, opts)
	if err != nil {
		return nil, err
	}
	if err := s.fresh(z, ct, clock, o); err != nil {
		return nil, fmt.Errorf("keygen: %w", err)
	}
	if z.Hash, err = circomsrc.ZkeyHash(z, nil); err != nil {
		return nil, fmt.Errorf("keygen: %w", err)
	}
	clock.done("circuit hash")
	return z, nil
}

// ZkeyFromPtau returns the key `snarkjs groth16 setup` derives for the
// circom circuit r from a ceremony's prepared powers of tau p (read for
// r's domain, circomsrc.ReadPtauPhase2): the same points, coefficients
// and circuit hash, before any phase 2 contribution (γ and δ are the
// generators: a phase 2 contribution, `snarkjs zkey contribute`, must
// follow before the key is used in earnest). Its sums over the
// ceremony's Lagrange bases run over all cores.
func ZkeyFromPtau(r *circomsrc.R1CS, p *circomsrc.PtauPhase2, opts ...Option) (*circomsrc.Zkey, error) {
	z, ct, s, clock, _, err := newCircomZkey(r, opts)
	if err != nil {
		return nil, err
	}
	if p.Curve != r.Curve || p.DomainSize != z.DomainSize {
		return nil, fmt.Errorf("keygen: a %s phase 1 read for a domain of %d, for a %s circuit whose domain is %d", p.Curve, p.DomainSize, r.Curve, z.DomainSize)
	}
	hashH, err := s.ptau(z, ct, p, clock)
	if err != nil {
		return nil, fmt.Errorf("keygen: %w", err)
	}
	if z.Hash, err = circomsrc.ZkeyHash(z, hashH); err != nil {
		return nil, fmt.Errorf("keygen: %w", err)
	}
	clock.done("circuit hash")
	return z, nil
}

// newCircomZkey is a key's frame for r (its header and coefficients, no
// points yet), r's terms for the QAP's sums, and its curve's setup.
func newCircomZkey(r *circomsrc.R1CS, opts []Option) (*circomsrc.Zkey, *circomTerms, *circomSetup, *phaseClock, *options, error) {
	if r == nil {
		return nil, nil, nil, nil, nil, fmt.Errorf("keygen: no r1cs")
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	clock := &phaseClock{log: o.phaseLog, last: time.Now()}
	s, ok := circomSetups[r.Curve]
	if !ok {
		return nil, nil, nil, nil, nil, fmt.Errorf("keygen: a %s r1cs; circom keys are made for %s", r.Curve, curve.Names("and"))
	}
	n, err := r.ZkeyDomainSize()
	if err != nil {
		return nil, nil, nil, nil, nil, fmt.Errorf("keygen: %w", err)
	}
	z := &circomsrc.Zkey{Curve: r.Curve, NVars: r.NWires, NPublic: r.NPublic(), DomainSize: n, Coefs: r.ZkeyCoefs()}
	z.NbRows = len(r.Constraints) + r.NPublic() + 1
	ct, err := newCircomTerms(r, s.special)
	if err != nil {
		return nil, nil, nil, nil, nil, fmt.Errorf("keygen: %w", err)
	}
	clock.done("terms")
	return z, ct, s, clock, &o, nil
}

// circomTerms are a circom R1CS's terms as the QAP's sums take them
// (terms.go), snarkjs's public rows included, and the coefficient table
// their IDs index: IDs 0–3 are 0, 1, 2 and −1 (gnark's), the others each
// distinct value of the r1cs once.
type circomTerms struct {
	tm     *terms
	coeffs []proofdata.Scalar
	rows   int // the constraints and the public rows: L's length
}

// newCircomTerms collects r's terms, bucketed by wire range as
// collectTerms buckets a gnark R1CS's, in one chunk.
func newCircomTerms(r *circomsrc.R1CS, special [4]proofdata.Scalar) (*circomTerms, error) {
	nbWires := r.NWires
	ct := &circomTerms{coeffs: special[:], rows: len(r.Constraints) + r.NPublic() + 1}
	ids := map[proofdata.Scalar]uint32{}
	for i, v := range special {
		ids[v] = uint32(i)
	}
	workers := runtime.GOMAXPROCS(0)
	nbRanges := 4 * workers
	span := max(1, (nbWires+nbRanges-1)/nbRanges)
	nbRanges = (nbWires + span - 1) / span
	var buckets [3][][]term // by matrix, then wire range
	for m := range buckets {
		buckets[m] = make([][]term, nbRanges)
	}
	add := func(m, row int, t circomsrc.Term) error {
		id, ok := ids[t.Value]
		if !ok {
			id = uint32(len(ct.coeffs))
			if id > coeffMask {
				return fmt.Errorf("more than %d distinct coefficients", coeffMask)
			}
			ids[t.Value] = id
			ct.coeffs = append(ct.coeffs, t.Value)
		}
		if id == constraint.CoeffIdZero {
			return nil // no term: snarkjs's sums skip nothing, but 0·P adds nothing
		}
		w := int(t.Wire)
		buckets[m][w/span] = append(buckets[m][w/span], term{wire: t.Wire, row: uint32(row), coeff: uint32(m)<<matrixShift | id})
		return nil
	}
	for k := range r.Constraints {
		c := &r.Constraints[k]
		for m, lc := range [3][]circomsrc.Term{c.A, c.B, c.C} {
			for _, t := range lc {
				if err := add(m, k, t); err != nil {
					return nil, err
				}
			}
		}
	}
	for i := 0; i <= r.NPublic(); i++ {
		if err := add(0, len(r.Constraints)+i, circomsrc.Term{Wire: uint32(i), Value: special[constraint.CoeffIdOne]}); err != nil {
			return nil, err
		}
	}
	ct.tm = &terms{span: span, nbRanges: nbRanges, rows: ct.rows}
	for m := range buckets {
		ct.tm.byChunk[m] = [][][]term{buckets[m]}
	}
	return ct, nil
}
