// Package keygen computes Groth16 proving and verifying keys, in memory
// (Setup) or with the proving key streamed to a writer as it is computed
// (SetupTo: a setup's memory is then not its key's), in gnark's own
// types, the same keys gnark's groth16.Setup makes (every query in its
// order and length, the infinity flags, the BSB22 commitment keys) but
// over all cores and without gnark's per-point doublings:
//
//  1. The QAP at τ: L_i(τ) = ωⁱ(τⁿ − 1)/(n(τ − ωⁱ)) for every row, one
//     batch inversion a chunk of rows, no FFT; A_j(τ), B_j(τ), C_j(τ)
//     summed over the R1CS's coefficients, the terms bucketed by wire so
//     that each core owns a range of wires (terms.go).
//  2. Every scalar of a query folded with what multiplies it (1/δ, 1/γ,
//     Z(τ) = τⁿ − 1, the Pedersen σ), so each query is one batch of
//     fixed-base products.
//  3. The fixed-base products by a comb: for each 16-bit window w and
//     signed digit d a table entry d·2^(16w)·g, so a product is 16 mixed
//     additions and no doublings (gnark-crypto's BatchScalarMultiplication
//     doubles 256 times a point: the bulk of gnark's 9 min 20 s at 2^24).
//
// Zkey and ZkeyFromPtau (circom.go) compute a circom circuit's key in
// snarkjs's layout from the same QAP evaluation and fixed-base products,
// or from a ceremony's powers of tau.
//
// The toxic waste (τ, α, β, γ, δ, σ) comes from crypto/rand and is zeroed
// when Setup returns, as are the scalar buffers derived from it; it is
// never logged or stored. Go may have copied a value on the stack, so the
// zeroing is best effort: keys from Setup are for tests and benchmarks,
// and a production key comes from a ceremony.
package keygen

import (
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/constraint"
	"github.com/zkpipe/zkpipe/curve"
)

// curveSetup is one curve's Setup and SetupTo: ok is false when ccs is not
// that curve's R1CS.
type curveSetup struct {
	inMemory func(ccs constraint.ConstraintSystem, clock *phaseClock, o *options) (pk groth16.ProvingKey, vk groth16.VerifyingKey, ok bool, err error)
	to       func(w io.Writer, ccs constraint.ConstraintSystem, clock *phaseClock, o *options) (vk groth16.VerifyingKey, n int64, ok bool, err error)
}

// Setup returns fresh Groth16 keys for ccs, an R1CS of a curve of package
// curve (BN254 or BLS12-381), as gnark's typed keys of that curve
// (*groth16bn254.ProvingKey, …): gnark's groth16.Prove and Verify accept
// them, and WriteRawTo/WriteTo write gnark's files. It uses every core
// (GOMAXPROCS); its peak memory, with the compile and files of zkpipe
// setup, is modelled by circuits.SetupMemoryOn. WithPhaseLog says where
// its time goes.
func Setup(ccs constraint.ConstraintSystem, opts ...Option) (groth16.ProvingKey, groth16.VerifyingKey, error) {
	if ccs == nil {
		return nil, nil, fmt.Errorf("keygen: no constraint system")
	}
	o, clock := resolve(opts)
	for _, s := range setups {
		pk, vk, ok, err := s.inMemory(ccs, clock, o)
		if ok {
			if err != nil {
				return nil, nil, fmt.Errorf("keygen: %w", err)
			}
			return pk, vk, nil
		}
	}
	return nil, nil, notR1CS(ccs)
}

// SetupTo is Setup for a key written, not kept: it writes the proving key
// to w in gnark's raw encoding (WriteRawProvingKey's bytes, gnark's
// WriteRawTo's) as its points are computed, and returns the verifying key
// and the bytes written. Its memory is not the key's (a 2^27 BLS12-381
// key is some 45–70 GiB): its terms and L_i(τ) (12 B a coefficient, 32 B
// a constraint), one query's scalars at a time (32 B a wire, K's 40), and
// two chunks of points (32 MiB each; 256 MiB with a FixedBase device).
// ccs is not kept past the collection of its terms: a caller that passes
// the only reference to it (compiled for the setup and dropped) lets its
// instructions and calldata go for the rest of the setup (100–130 B a
// constraint). From one toxic waste its bytes are Setup's key's through
// WriteRawProvingKey. With WithoutDomainTables or not, the file is the
// one gnark's Setup writes (its domain's tables flag set: they are
// computed when the key is read).
func SetupTo(w io.Writer, ccs constraint.ConstraintSystem, opts ...Option) (groth16.VerifyingKey, int64, error) {
	if ccs == nil {
		return nil, 0, fmt.Errorf("keygen: no constraint system")
	}
	// the curve's setup chosen before the call, and nothing of ccs used
	// after it, so that this frame does not hold ccs while it runs
	notR1CSErr := notR1CS(ccs)
	var s curveSetup
	for _, id := range curve.All {
		if ccs.Field().Cmp(id.ECC().ScalarField()) == 0 {
			s = setups[id]
		}
	}
	if s.to == nil {
		return nil, 0, notR1CSErr
	}
	o, clock := resolve(opts)
	vk, n, ok, err := s.to(w, ccs, clock, o)
	switch {
	case !ok:
		return nil, 0, notR1CSErr
	case err != nil:
		return nil, n, fmt.Errorf("keygen: %w", err)
	}
	return vk, n, nil
}

// resolve is opts in one value, and the clock of its phase log.
func resolve(opts []Option) (*options, *phaseClock) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return &o, &phaseClock{log: o.phaseLog, last: time.Now()}
}

func notR1CS(ccs constraint.ConstraintSystem) error {
	return fmt.Errorf("keygen: a %T is not an R1CS of %s (Groth16 needs an R1CS of a supported curve)", ccs, curve.Names("or"))
}

// testToxicWaste, when not nil, replaces crypto/rand as the source of the
// toxic waste, so that a test can set one circuit up twice with one secret
// (the GPU's products against the CPU's) and compare the keys. Only
// export_test.go sets it: a key from a known secret is no key at all.
var testToxicWaste io.Reader

// Option configures Setup.
type Option func(*options)

type options struct {
	phaseLog       func(phase string, elapsed time.Duration)
	fixedBase      FixedBase
	noDomainTables bool
}

// WithoutDomainTables has Setup leave pk.Domain's FFT tables out (its
// twiddles and coset tables, 4n scalars: 128 B a domain point, 16 GiB at
// 2^27, which gnark's Setup builds): for a key that is written to a file
// and dropped, as zkpipe setup's is. WriteRawProvingKey writes such a key
// with the domain's tables flag set all the same, so the file is gnark's
// Setup's and loads with its tables. The key in memory still proves with
// gnark's groth16.Prove: gnark-crypto's FFT computes its twiddles and
// coset table per call when the domain has none (slower).
func WithoutDomainTables() Option {
	return func(o *options) { o.noDomainTables = true }
}

// WithFixedBase has Setup compute every query's fixed-base products on fb
// (a GPU) instead of the CPU's comb; nil is the comb. The rest of Setup
// (the QAP at τ, the scalars, the verifying key) stays on the CPU.
func WithFixedBase(fb FixedBase) Option {
	return func(o *options) { o.fixedBase = fb }
}

// WithPhaseLog has Setup call log as each of its phases ends (the QAP's
// terms, the Lagrange values, each query's fixed-base products, …) with
// the phase's name and wall time, in order: where a setup's time goes.
// The names are for people, not a stable interface.
func WithPhaseLog(log func(phase string, elapsed time.Duration)) Option {
	return func(o *options) { o.phaseLog = log }
}

// releaseMinBytes is the size of a setup's scalar slices (32 B a wire or
// domain point) from which it returns its dead buffers to the OS between
// phases (releaser): 2^20 wires. Below it a setup's few hundred MB are not
// worth the collections.
const releaseMinBytes = 32 << 20

// releaser returns what a setup whose scalar slices are size bytes calls
// once a large buffer is dead (its scalars, the terms, the G1 table):
// debug.FreeOSMemory, a collection that hands the freed pages back at
// once, so the next large buffer takes them instead of new ones. Without
// it the heap grows to twice what is live (GOGC) before collecting, and
// the setup's peak is its last phase's points plus the garbage of the
// phases before: zkpipe setup's peak RSS at 3.9M constraints fell from
// 2.61 to 1.97 GB (bits) and 3.69 to 3.00 GB (mulchain). Each call
// costs one collection of the live heap (the compiled circuit's
// pointers, mostly), some 10–100 ms.
func releaser(size int64) func() {
	if size < releaseMinBytes {
		return func() {}
	}
	return debug.FreeOSMemory
}

// phaseClock times Setup's phases for WithPhaseLog; with no log it only
// reads the clock.
type phaseClock struct {
	log  func(phase string, elapsed time.Duration)
	last time.Time
}

// done ends the phase named phase, begun when the last one ended.
func (c *phaseClock) done(phase string) {
	if c.log == nil {
		return
	}
	now := time.Now()
	c.log(phase, now.Sub(c.last))
	c.last = now
}
