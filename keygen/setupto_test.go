package keygen_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"weak"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/constraint"
	blscs "github.com/consensys/gnark/constraint/bls12-381"
	bncs "github.com/consensys/gnark/constraint/bn254"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/keygen"
	"go.uber.org/goleak"
)

// From one toxic waste, SetupTo streams the bytes WriteRawProvingKey
// writes of Setup's key (so gnark's WriteRawTo's:
// TestWriteRawProvingKeyIsGnarks), and the same verifying key, on both
// curves, for every kind of circuit (commitment keys included: their G2
// point comes from the seeded source too), whether a slice is one chunk
// or many (chunks of 1000 bytes: 15 G1 points, 7 G2 points, a partial
// chunk last); the key read back with gnark's reader proves and verifies.
func TestSetupToStreamsSetupsKey(t *testing.T) {
	for _, id := range bothCurves {
		for _, c := range keygen.Cases(t, id) {
			t.Run(fmt.Sprintf("%s/%s", id, c.Name), func(t *testing.T) {
				seed := [32]byte{49, byte(len(c.Name))}
				restore := keygen.SetToxicWaste(rand.NewChaCha8(seed))
				pk, vk, err := keygen.Setup(c.CCS, keygen.WithoutDomainTables())
				restore()
				if err != nil {
					t.Fatal(err)
				}
				var want, wantVK bytes.Buffer
				if _, err := keygen.WriteRawProvingKey(&want, pk); err != nil {
					t.Fatal(err)
				}
				if _, err := vk.WriteRawTo(&wantVK); err != nil {
					t.Fatal(err)
				}
				for _, chunk := range []int{32 << 20, 1000} {
					restore := keygen.SetToxicWaste(rand.NewChaCha8(seed))
					restoreChunk := keygen.SetChunkBytes(chunk)
					var got, gotVK bytes.Buffer
					vk2, n, err := keygen.SetupTo(&got, c.CCS)
					restoreChunk()
					restore()
					if err != nil {
						t.Fatal(err)
					}
					if _, err := vk2.WriteRawTo(&gotVK); err != nil {
						t.Fatal(err)
					}
					if n != int64(got.Len()) || !bytes.Equal(got.Bytes(), want.Bytes()) {
						t.Fatalf("chunks of %d bytes: streamed %d bytes (said %d), Setup's key is %d; equal: %v",
							chunk, got.Len(), n, want.Len(), bytes.Equal(got.Bytes(), want.Bytes()))
					}
					if !bytes.Equal(gotVK.Bytes(), wantVK.Bytes()) {
						t.Fatalf("chunks of %d bytes: the verifying keys differ", chunk)
					}
				}
				back := groth16.NewProvingKey(id.ECC())
				if _, err := back.UnsafeReadFrom(bytes.NewReader(want.Bytes())); err != nil {
					t.Fatal(err)
				}
				proveWithGnark(t, c, back, vk)
			})
		}
	}
}

// SetupTo holds no key: the live heap above the circuit's own, sampled
// (after a collection) at every write and every batch of products, stays
// under half the key it writes (a third at 2^16 on BN254, less on
// BLS12-381 and at larger sizes: the terms, L_i(τ) and one query's
// scalars are some 120 B a wire where the key is 350–530), where Setup's in-memory key takes
// more than the key's size by its end (the same sampling, which so can
// see a held key). The products are a stand-in's (every one the
// generator): the memory is the test, not the points
// (TestSetupToStreamsSetupsKey checks those).
func TestSetupToHoldsNoKey(t *testing.T) {
	for _, id := range bothCurves {
		b, err := circuits.Lookup("bits")
		if err != nil {
			t.Fatal(err)
		}
		ccs, err := b.CompileOn(id, 1<<16)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(id.String(), func(t *testing.T) {
			restore := keygen.SetChunkBytes(256 << 10)
			defer restore()
			s := &heapSampler{}
			s.start()
			vk, n, err := keygen.SetupTo(&sampledWriter{io.Discard, s}, ccs, keygen.WithFixedBase(generatorProducts{s: s}))
			if err != nil {
				t.Fatal(err)
			}
			if vk == nil || n < 1<<20 {
				t.Fatalf("wrote a key of %d bytes", n)
			}
			streamed := s.peakAbove()
			if streamed > n/2 {
				t.Errorf("SetupTo's live heap rose %d bytes over the circuit's, writing a %d-byte key", streamed, n)
			}

			s = &heapSampler{}
			s.start()
			pk, _, err := keygen.Setup(ccs, keygen.WithFixedBase(generatorProducts{s: s}), keygen.WithoutDomainTables())
			if err != nil {
				t.Fatal(err)
			}
			s.sample()
			held := s.peakAbove()
			runtime.KeepAlive(pk)
			if held < n {
				t.Errorf("Setup's live heap rose only %d bytes over the circuit's for a %d-byte key: the sampling misses what is held", held, n)
			}
			t.Logf("%s bits 2^16: key %d bytes; live heap over the circuit's: SetupTo %d, Setup %d", id, n, streamed, held)
		})
	}
}

// SetupTo lets the circuit go once it has its terms: given the only
// reference to it, the circuit is collected (a weak pointer to it empties,
// checked after a collection at each write) before the first half of the
// key is written, on both curves. Its instructions and calldata are 100–
// 130 B a constraint, a third of a BLS12-381 porep key's size.
func TestSetupToLetsTheCircuitGo(t *testing.T) {
	for _, id := range bothCurves {
		ccs, collected := compiledBits(t, id)
		w := &collectingWriter{collected: collected, collectedAt: -1}
		_, n, err := keygen.SetupTo(w, ccs) // the last use of ccs
		if err != nil {
			t.Fatal(err)
		}
		if w.collectedAt < 0 || w.collectedAt > n/2 {
			t.Fatalf("%s: the circuit was collected at byte %d of the %d-byte key (-1: never while writing)", id, w.collectedAt, n)
		}
	}
}

// compiledBits is bits at 2^12 on id, and whether it has been collected
// (a weak pointer to it): the caller holds the only strong reference.
func compiledBits(t *testing.T, id curve.ID) (constraint.ConstraintSystem, func() bool) {
	t.Helper()
	b, err := circuits.Lookup("bits")
	if err != nil {
		t.Fatal(err)
	}
	ccs, err := b.CompileOn(id, 1<<12)
	if err != nil {
		t.Fatal(err)
	}
	switch c := ccs.(type) {
	case *bncs.R1CS:
		p := weak.Make(c)
		return ccs, func() bool { return p.Value() == nil }
	case *blscs.R1CS:
		p := weak.Make(c)
		return ccs, func() bool { return p.Value() == nil }
	}
	t.Fatalf("a %T", ccs)
	return nil, nil
}

// collectingWriter collects garbage at each write and notes the bytes
// written when circuit is first found collected.
type collectingWriter struct {
	collected   func() bool
	n           int64
	collectedAt int64
}

func (w *collectingWriter) Write(p []byte) (int, error) {
	if w.collectedAt < 0 {
		runtime.GC()
		if w.collected() {
			w.collectedAt = w.n
		}
	}
	w.n += int64(len(p))
	return len(p), nil
}

// heapSampler records the largest live heap (runtime.MemStats.HeapAlloc
// after a collection) it samples, and the one it started from.
type heapSampler struct {
	mu         sync.Mutex
	base, peak uint64
}

func (s *heapSampler) start() {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	s.base, s.peak = m.HeapAlloc, m.HeapAlloc
}

func (s *heapSampler) sample() {
	s.mu.Lock()
	defer s.mu.Unlock()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	s.peak = max(s.peak, m.HeapAlloc)
}

func (s *heapSampler) peakAbove() int64 { return int64(s.peak) - int64(s.base) }

// sampledWriter samples the heap at each write.
type sampledWriter struct {
	w io.Writer
	s *heapSampler
}

func (w *sampledWriter) Write(p []byte) (int, error) {
	w.s.sample()
	return w.w.Write(p)
}

// generatorProducts is a FixedBase whose every product is the base, the
// heap sampled at each batch.
type generatorProducts struct {
	keygen.FixedBase // nil: a curve this test does not set up has no products here
	s                *heapSampler
}

func fill[P any](s *heapSampler, out []P, base *P) error {
	s.sample()
	for i := range out {
		out[i] = *base
	}
	return nil
}

func (g generatorProducts) FixedBaseG1BN254(out []bn254.G1Affine, base *bn254.G1Affine, _ []fr.Element) error {
	return fill(g.s, out, base)
}
func (g generatorProducts) FixedBaseG2BN254(out []bn254.G2Affine, base *bn254.G2Affine, _ []fr.Element) error {
	return fill(g.s, out, base)
}
func (g generatorProducts) FixedBaseG1BLS12381(out []bls12381.G1Affine, base *bls12381.G1Affine, _ []blsfr.Element) error {
	return fill(g.s, out, base)
}
func (g generatorProducts) FixedBaseG2BLS12381(out []bls12381.G2Affine, base *bls12381.G2Affine, _ []blsfr.Element) error {
	return fill(g.s, out, base)
}

// A write that fails ends SetupTo with its error, whatever the slice it
// falls in (the domain, a chunk of A, the last of G2's B, the commitment
// keys), and nothing is left running; so does a refused constraint system.
func TestSetupToFailsWithItsWriter(t *testing.T) {
	c := keygen.Cases(t, curve.BN254)[2] // commit: every part of a key
	var full bytes.Buffer
	if _, _, err := keygen.SetupTo(&full, c.CCS); err != nil {
		t.Fatal(err)
	}
	restore := keygen.SetChunkBytes(1000)
	defer restore()
	boom := errors.New("disk full")
	for _, at := range []int{0, 100, full.Len() / 3, full.Len() - 2000, full.Len() - 1} {
		ignore := goleak.IgnoreCurrent()
		_, n, err := keygen.SetupTo(&failingWriter{left: at, err: boom}, c.CCS)
		if !errors.Is(err, boom) {
			t.Fatalf("failing at byte %d of %d: %v, want %v", at, full.Len(), err, boom)
		}
		if n > int64(at) {
			t.Fatalf("failing at byte %d: said %d bytes written", at, n)
		}
		if err := goleak.Find(ignore); err != nil {
			t.Fatalf("failing at byte %d: %v", at, err)
		}
	}
	if _, _, err := keygen.SetupTo(io.Discard, nil); err == nil {
		t.Fatal("set up no constraint system")
	}
}

// failingWriter takes left bytes, then fails with err.
type failingWriter struct {
	left int
	err  error
}

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.left {
		n := w.left
		w.left = 0
		return n, w.err
	}
	w.left -= len(p)
	return len(p), nil
}
