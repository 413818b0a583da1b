package proofdata

import (
	"fmt"
	"strings"
	"sync"

	"github.com/zkpipe/zkpipe/curve"
)

// Key is the part of a Groth16 proving key the prover needs, curve-erased:
// its curve, H convention and sizes for every curve-neutral reader (the
// stages, the governor, the backends' budgets), and the points themselves
// in the curve's own types behind Bases, read only by that curve's code
// (BasesOf).
type Key struct {
	Curve       curve.ID
	HConvention HConvention
	Size        KeySize
	// Bases is a *Bases[G1, G2, D] of the curve's gnark-crypto types
	// (G1Affine, G2Affine, fft.Domain); see NewKey.
	Bases any
	// OnDrop, when set, is told which parts Drop released, so that the
	// key's source lets go of its own references to them too (gnarksrc's
	// gnark ProvingKey aliases the same slices).
	OnDrop func(dropped KeyParts)

	// Deferred, when set, holds parts its source has not read yet: a key
	// file's bases read when a backend loads them, straight to where they
	// live (a GPU's memory), never whole on the host (SetDeferred).
	deferred *DeferredParts

	dropped KeyParts
}

// DeferredParts is how a key's source reads the parts it left unread.
type DeferredParts struct {
	// Parts are those not read yet: bases (PartA … PartB2) and the
	// domain's tables.
	Parts KeyParts
	// Fetch reads parts (a subset of Parts) into the key's host copy, as
	// if they had been read at first.
	Fetch func(parts KeyParts) error
	// Stream hands the points of the base parts in parts (a subset of
	// Parts, no PartDomain) to sink, chunk by chunk, without a host copy
	// of any whole part. It may call sink from several goroutines at once.
	Stream func(parts KeyParts, sink BaseSink) error

	mu sync.Mutex // Fetch and the Parts it clears
}

// BaseSink takes a deferred part's points as DeferredParts.Stream reads
// them: points is the memory of count consecutive points from index at, in
// the curve's gnark-crypto affine type (G1Affine, G2Affine for PartB2),
// as the host copy's slices would hold them. points is reused once Write
// returns.
type BaseSink interface {
	Write(part KeyParts, at, count int, points []byte) error
}

// SetDeferred records that d.Parts of k are not read yet.
func (k *Key) SetDeferred(d *DeferredParts) { k.deferred = d }

// Deferred is the parts of k not read yet (none for a key read whole).
func (k *Key) Deferred() KeyParts {
	if k.deferred == nil {
		return 0
	}
	k.deferred.mu.Lock()
	defer k.deferred.mu.Unlock()
	return k.deferred.Parts &^ k.dropped
}

// Stream hands the deferred base parts in parts to sink (DeferredParts.Stream);
// an error for a part not deferred.
func (k *Key) Stream(parts KeyParts, sink BaseSink) error {
	if parts&^k.Deferred() != 0 || parts&PartDomain != 0 {
		return fmt.Errorf("stream of key parts %b: only deferred bases stream (deferred: %b)", parts, k.Deferred())
	}
	if parts == 0 {
		return nil
	}
	return k.deferred.Stream(parts, sink)
}

// KeyParts names parts of a key's host copy: its bases by query, and the
// evaluation domain's precomputed tables. The fixed points assemble adds
// ([α]₁, [β]₁, [δ]₁, [β]₂, [δ]₂) are always kept.
type KeyParts uint8

const (
	PartA      KeyParts = 1 << iota // [A_j(τ)]₁
	PartB1                          // [B_j(τ)]₁
	PartK                           // the private wires' K query
	PartZ                           // the H query
	PartB2                          // [B_j(τ)]₂
	PartDomain                      // the domain's twiddles and coset tables (the CPU's FFTs)

	AllParts = PartA | PartB1 | PartK | PartZ | PartB2 | PartDomain
)

// Drop releases every part of k's host copy not in keep (a backend that
// holds them on its device reads them no more), tells OnDrop, and returns
// what it released now. A part once dropped stays dropped: a backend that
// reads it (Load on the CPU, say) gets nil slices, so the engine loads a
// circuit once per key and drops only after every Load it needs.
func (k *Key) Drop(keep KeyParts) KeyParts {
	drop := AllParts &^ keep &^ k.dropped
	if drop == 0 {
		return 0
	}
	if b, ok := k.Bases.(interface{ dropParts(KeyParts) }); ok {
		b.dropParts(drop)
	}
	k.dropped |= drop // a deferred part dropped stays unread
	if k.OnDrop != nil {
		k.OnDrop(drop)
	}
	return drop
}

// Need is an error naming the parts of need that Drop has released, for a
// reader that would find them gone; nil when all are there.
//
// Parts of need still deferred are read into the host copy first
// (DeferredParts.Fetch): a backend that reads the host copy gets it, and
// one that streams them asks only for what it does not stream.
func (k *Key) Need(need KeyParts) error {
	gone := need & k.dropped
	if gone == 0 {
		return k.fetch(need)
	}
	var names []string
	for i, name := range []string{"A", "B1", "K", "Z", "B2", "domain"} {
		if gone&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	return fmt.Errorf("the key's host %s released once resident on a device (load the circuit afresh for this backend)", strings.Join(names, ", "))
}

// CheckDeferred reads every deferred base and keeps none: the check a
// whole read makes of them (a bad point fails, naming it) without their
// memory.
func (k *Key) CheckDeferred() error {
	return k.Stream(k.Deferred()&^PartDomain, discard{})
}

type discard struct{}

func (discard) Write(KeyParts, int, int, []byte) error { return nil }

// fetch reads the parts of need still deferred into the host copy.
func (k *Key) fetch(need KeyParts) error {
	d := k.deferred
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if need &= d.Parts; need == 0 {
		return nil
	}
	if err := d.Fetch(need); err != nil {
		return err
	}
	d.Parts &^= need
	return nil
}

// Dropped is what Drop has released of k so far.
func (k *Key) Dropped() KeyParts { return k.dropped }

// HostBytes is the host memory k's parts take now: the bases not dropped
// nor deferred
// (G1 and G2 affine points at the curve's sizes) and, unless dropped, the
// domain's tables (twiddles and coset tables, about 4n scalars).
func (k *Key) HostBytes() int64 {
	p := k.Curve.Params()
	g1, g2 := int64(p.G1AffineBytes), int64(p.G2AffineBytes)
	var n int64
	absent := k.dropped | k.Deferred()
	for _, q := range []struct {
		part  KeyParts
		count int
		size  int64
	}{{PartA, k.Size.A, g1}, {PartB1, k.Size.B, g1}, {PartK, k.Size.K, g1}, {PartZ, k.Size.Z, g1}, {PartB2, k.Size.B2, g2}, {PartDomain, 4 * k.Size.N, ScalarBytes}} {
		if absent&q.part == 0 {
			n += int64(q.count) * q.size
		}
	}
	return n
}

// KeySize is how many points each query of a Key has: the domain's size n,
// the A, B₁, B₂ and K queries, and Z, the H query. B₁ and B₂ are of the
// same wires (stages.Circuit.Check refuses a key where they differ).
type KeySize struct {
	N, A, B, B2, K, Z int
}

// N is the evaluation domain's size.
func (k *Key) N() int { return k.Size.N }

// HLen is how many terms of h meet the H query in its MSM.
func (k *Key) HLen() int { return k.Size.Z }

// Bases are a key's points, each query already filtered to the scalars it
// will be paired with (points at infinity dropped, as gnark's
// pk.InfinityA/B do), and the fixed points assemble adds. G1 and G2 are
// the curve's affine point types, D its fft.Domain.
type Bases[G1, G2, D any] struct {
	Domain *D // size n; for HOddCoset its coset shift is ω₂ₙ

	A  []G1 // [A_j(τ)]₁
	B1 []G1 // [B_j(τ)]₁
	K  []G1 // [(βA_j+αB_j+C_j)(τ)/δ]₁, private wires only
	Z  []G1 // the H query: [τ^i Z(τ)/δ]₁ (gnark) or odd Lagrange bases (snarkjs)
	B2 []G2 // [B_j(τ)]₂, same wires as B1

	// [α]₁, [β]₁, [δ]₁, [β]₂, [δ]₂
	Alpha1, Beta1, Delta1 G1
	Beta2, Delta2         G2
}

// dropParts releases the parts named (Key.Drop).
func (b *Bases[G1, G2, D]) dropParts(drop KeyParts) {
	for _, q := range []struct {
		part KeyParts
		s    *[]G1
	}{{PartA, &b.A}, {PartB1, &b.B1}, {PartK, &b.K}, {PartZ, &b.Z}} {
		if drop&q.part != 0 {
			*q.s = nil
		}
	}
	if drop&PartB2 != 0 {
		b.B2 = nil
	}
	if drop&PartDomain != 0 {
		b.Domain = nil
	}
}

// NewKey wraps b, of curve id, as a Key of domain size n.
func NewKey[G1, G2, D any](id curve.ID, conv HConvention, n int, b *Bases[G1, G2, D]) *Key {
	return &Key{Curve: id, HConvention: conv, Bases: b,
		Size: KeySize{N: n, A: len(b.A), B: len(b.B1), B2: len(b.B2), K: len(b.K), Z: len(b.Z)}}
}

// BasesOf is k's points as the curve's code reads them: an error when k is
// of another curve than id (or its Bases of other types), naming both.
func BasesOf[G1, G2, D any](id curve.ID, k *Key) (*Bases[G1, G2, D], error) {
	if k.Curve != id {
		return nil, fmt.Errorf("a %s key where %s's code reads it", k.Curve, id)
	}
	b, ok := k.Bases.(*Bases[G1, G2, D])
	if !ok || b == nil {
		return nil, fmt.Errorf("%s key holds %T, not its curve's bases", id, k.Bases)
	}
	return b, nil
}
