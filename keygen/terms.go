package keygen

import (
	"fmt"
	"runtime"

	"github.com/consensys/gnark/constraint"
)

// term is one nonzero coefficient of the R1CS: matrix (A, B or C: the
// constraint's L, R or O) in the top two bits of coeff, the coefficient's
// ID in the rest, at row (the constraint) and wire. 12 bytes: a 2^24 bits
// circuit's 50M terms are 600 MB, held only while A, B, C are summed.
type term struct {
	wire, row, coeff uint32
}

const (
	matrixShift = 30
	coeffMask   = 1<<matrixShift - 1
)

// terms are an R1CS's coefficients bucketed by matrix and wire range:
// byChunk[m][k][r] holds the terms of matrix m (0: A, 1: B, 2: C) in the
// k-th chunk of constraints whose wires are in [r·span, (r+1)·span).
// Summing range r reads byChunk[m][*][r] and writes only its own wires,
// so the ranges sum in parallel without locks, and a sum over one matrix
// reads that matrix's terms alone.
type terms struct {
	byChunk  [3][][][]term
	span     int
	nbRanges int
	rows     int // the R1C constraints seen, gnark's GetNbConstraints
}

// The matrices of an R1CS, as terms number them.
const (
	matrixA = iota
	matrixB
	matrixC
)

// collectTerms decodes sys's R1C instructions over all cores, numbering
// rows as gnark's R1CIterator does (an R1C instruction a row, the others
// skipped), and buckets their nonzero terms by matrix and wire range. It
// decodes them twice: first counting each bucket's terms (and each
// chunk's rows), then filling buckets made at their length, so that the
// terms take 12 B each and no more (appended, a bucket's growth left up
// to as much again in garbage beside the circuit: at 2^27, gigabytes at
// the setup's peak).
func collectTerms(sys *constraint.System, nbWires int) (*terms, error) {
	isR1C := make([]bool, len(sys.Blueprints))
	for i, b := range sys.Blueprints {
		_, isR1C[i] = b.(constraint.BlueprintR1C)
	}
	insts := sys.Instructions
	workers := runtime.GOMAXPROCS(0)
	nbChunks := min(len(insts), 4*workers)
	nbChunks = max(nbChunks, 1)
	chunk := (len(insts) + nbChunks - 1) / max(nbChunks, 1)
	nbChunks = (len(insts) + max(chunk, 1) - 1) / max(chunk, 1)

	nbRanges := 4 * workers
	span := max(1, (nbWires+nbRanges-1)/nbRanges)
	nbRanges = (nbWires + span - 1) / span

	// visit calls f for each nonzero term of chunk k's R1Cs, its rows
	// numbered from row, and returns the rows it saw
	visit := func(k int, row uint32, f func(m, r int, t term)) (uint32, error) {
		var c constraint.R1C
		for _, inst := range insts[k*chunk : min((k+1)*chunk, len(insts))] {
			if int(inst.BlueprintID) >= len(isR1C) || !isR1C[inst.BlueprintID] {
				continue
			}
			sys.Blueprints[inst.BlueprintID].(constraint.BlueprintR1C).DecompressR1C(&c, inst.Unpack(sys))
			for m, le := range [3]constraint.LinearExpression{c.L, c.R, c.O} {
				for _, tm := range le {
					if tm.CID == constraint.CoeffIdZero {
						continue
					}
					if tm.CID > coeffMask {
						return row, fmt.Errorf("constraint %d: coefficient ID %d, more than the %d a term can name", row, tm.CID, coeffMask)
					}
					w := int(tm.VID)
					if w >= nbWires {
						return row, fmt.Errorf("constraint %d names wire %d of %d", row, w, nbWires)
					}
					f(m, w/span, term{wire: tm.VID, row: row, coeff: uint32(m)<<matrixShift | tm.CID})
				}
			}
			row++
		}
		return row, nil
	}

	// each chunk's rows and its buckets' lengths
	rows := make([]int, nbChunks+1) // then: the first row of each chunk
	counts := make([][3][]int, nbChunks)
	errs := make([]error, nbChunks)
	parallelFor(nbChunks, 1, func(start, end int) {
		for k := start; k < end; k++ {
			for m := range counts[k] {
				counts[k][m] = make([]int, nbRanges)
			}
			n, err := visit(k, 0, func(m, r int, _ term) { counts[k][m][r]++ })
			rows[k+1], errs[k] = int(n), err
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	for k := range nbChunks {
		rows[k+1] += rows[k]
	}

	t := &terms{span: span, nbRanges: nbRanges, rows: rows[nbChunks]}
	for m := range t.byChunk {
		t.byChunk[m] = make([][][]term, nbChunks)
	}
	parallelFor(nbChunks, 1, func(start, end int) {
		for k := start; k < end; k++ {
			var buckets [3][][]term
			for m := range buckets {
				buckets[m] = make([][]term, nbRanges)
				for r, n := range counts[k][m] {
					buckets[m][r] = make([]term, 0, n)
				}
			}
			_, errs[k] = visit(k, uint32(rows[k]), func(m, r int, tm term) { buckets[m][r] = append(buckets[m][r], tm) })
			for m := range buckets {
				t.byChunk[m][k] = buckets[m]
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return t, nil
}

// kLayout is where each wire's K scalar goes, in gnark's order of the
// G1 points after Z: vk.G1.K (the public wires, then the commitment
// wires, in wire order), pk.G1.K (the private wires no commitment
// commits to), then each commitment's privately committed wires
// (pedersen's bases). gnark's Setup decides this wire by wire in one
// pass; here the pass only places, and the scalars are computed in
// parallel.
type kLayout struct {
	dest  []uint32 // wire → index into the concatenated K scalars
	gamma []bool   // wire → divided by γ (public or committed), else by δ
	nbVK  int      // public wires + commitments: len(vk.G1.K)
	nbPK  int      // len(pk.G1.K)
	ck    []int    // each commitment's privately committed wires
}

func newKLayout(nbWires, nbPublicVars int, commitments constraint.Groth16Commitments) (*kLayout, error) {
	commitmentWires := commitments.CommitmentIndexes()
	privateCommitted := commitments.GetPrivateCommitted()
	nbPrivateCommitted := 0
	for _, p := range privateCommitted {
		nbPrivateCommitted += len(p)
	}
	l := &kLayout{
		dest:  make([]uint32, nbWires),
		gamma: make([]bool, nbWires),
		nbVK:  nbPublicVars + len(commitments),
		ck:    make([]int, len(commitments)),
	}
	l.nbPK = nbWires - l.nbVK - nbPrivateCommitted
	if l.nbPK < 0 || nbWires >= 1<<32 {
		return nil, fmt.Errorf("%d wires, %d public, %d commitments, %d privately committed: not a consistent R1CS", nbWires, nbPublicVars, len(commitments), nbPrivateCommitted)
	}
	// a wire committed privately: the commitment whose sorted list holds
	// it next (gnark's MergeIterator)
	next := make([]int, len(privateCommitted))
	committedBy := func(w int) int {
		for j, p := range privateCommitted {
			if next[j] < len(p) && p[next[j]] == w {
				next[j]++
				return j
			}
		}
		return -1
	}
	ckStart := make([]int, len(commitments))
	off := l.nbVK + l.nbPK
	for j, p := range privateCommitted {
		ckStart[j] = off
		off += len(p)
	}
	vI, pI, seenCommitments := 0, 0, 0
	for w := range nbWires {
		j := committedBy(w)
		isPublic := w < nbPublicVars
		isCommitment := false
		if !isPublic && seenCommitments < len(commitmentWires) && commitmentWires[seenCommitments] == w {
			isCommitment = true
			seenCommitments++
		}
		switch {
		case isPublic || isCommitment:
			l.gamma[w] = true
			l.dest[w] = uint32(vI)
			vI++
		case j != -1:
			l.gamma[w] = true
			l.dest[w] = uint32(ckStart[j] + l.ck[j])
			l.ck[j]++
		default:
			l.dest[w] = uint32(l.nbVK + pI)
			pI++
		}
	}
	if vI != l.nbVK || pI != l.nbPK {
		return nil, fmt.Errorf("placed %d public and %d private K scalars, want %d and %d: the commitment wires are not in wire order", vI, pI, l.nbVK, l.nbPK)
	}
	for j, p := range privateCommitted {
		if l.ck[j] != len(p) {
			return nil, fmt.Errorf("commitment %d commits privately to %d wires, %d found in wire order", j, len(p), l.ck[j])
		}
	}
	return l, nil
}

// wires is the inverse of dest: the wire of each K scalar, in the
// concatenated order (vk.G1.K, pk.G1.K, the commitments').
func (l *kLayout) wires() []uint32 {
	w := make([]uint32, len(l.dest))
	for j, d := range l.dest {
		w[d] = uint32(j)
	}
	return w
}
