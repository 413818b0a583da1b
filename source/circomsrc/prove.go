package circomsrc

import (
	"context"
	"errors"
	"fmt"

	bls12381fr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/zkpipe/zkpipe/stages"
)

// Prover is what ProveWtns proves on: an engine (*engine.Engine's
// ProveInput), declared here, where it is used, so that the engine knows
// no source. ProveInput proves one job of the named circuit of kind from a
// witness in hand and returns what its source's Emit reported.
type Prover interface {
	ProveInput(ctx context.Context, circuit, kind, entry string, w any) (stages.Emitted, error)
}

// ProveWtns is engine.Engine.Prove for a circom circuit: wtns is the full
// witness, every wire (ParseWtns reads a .wtns into it), and the proof comes
// back with its public inputs in decimal; proof.JSON() and public are what
// snarkjs's groth16 prove writes to proof.json and public.json. The proof
// has passed the check against the zkey's verifying key, as a stream's do;
// the rest is as for Prove (p's pipeline, governor and backend; safe from
// many goroutines). p is an *engine.Engine.
func ProveWtns(ctx context.Context, p Prover, circuit string, wtns []fr.Element) (proof *Proof, public []string, err error) {
	return ProveWtnsOf(ctx, p, circuit, wtns)
}

// Wire is one value of a circom witness in the Fr of either curve, in
// Montgomery form (as gnark-crypto keeps it).
type Wire interface {
	fr.Element | bls12381fr.Element
}

// ProveWtnsOf is ProveWtns for a circom circuit of either curve: wtns is its
// full witness in that curve's Fr (ParseWtnsOf reads a .wtns of any curve;
// proofdata.Elements turns its values into the curve's elements). A
// witness of the other curve's Fr is refused, naming both. (A function,
// since Go's methods take no type parameters.)
func ProveWtnsOf[W Wire](ctx context.Context, p Prover, circuit string, wtns []W) (proof *Proof, public []string, err error) {
	if wtns == nil {
		return nil, nil, errors.New("engine: ProveWtns: no witness")
	}
	em, err := p.ProveInput(ctx, circuit, "circom", "ProveWtns", wtns)
	if err != nil {
		return nil, nil, err
	}
	proof, ok := em.Value.(*Proof)
	if !ok {
		return nil, nil, fmt.Errorf("engine: ProveWtns: circuit %s's source gave a %T, not a circom proof", circuit, em.Value)
	}
	return proof, em.PublicInputs, nil
}
