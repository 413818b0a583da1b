package keygen_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/constraint"
	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/keygen"
	"github.com/zkpipe/zkpipe/source/circomsrc"
)

// These tests run keygen's fixed-base products on the CUDA backend: the
// library $ZKPIPE_CUDA_LIB names (a GPU's, or the host stand-in that
// scripts/test builds), else the one FindCUDALibrary finds; none, they skip.

var (
	cudaOnce sync.Once
	cudaDev  *gpu.CUDA
	cudaErr  error
)

func openCUDA(t *testing.T) *gpu.CUDA {
	t.Helper()
	cudaOnce.Do(func() { cudaDev, cudaErr = gpu.OpenCUDA(os.Getenv("ZKPIPE_CUDA_LIB"), gpu.WithMSMTables(0)) })
	if cudaErr != nil {
		t.Skipf("no CUDA backend, skipping: %v", cudaErr)
	}
	return cudaDev
}

// Keys whose products the GPU computed prove with gnark's groth16.Prove and
// verify with its groth16.Verify, on both curves, with one public input
// (mulchain) and with two BSB22 commitments (pubcommit: the Pedersen bases
// are products too); the proof does not verify against another witness's
// public inputs.
func TestCUDASetupProvesAndVerifiesWithGnark(t *testing.T) {
	fb := openCUDA(t)
	for _, id := range bothCurves {
		for _, c := range keygen.Cases(t, id) {
			if c.Name != "mulchain" && c.Name != "pubcommit" {
				continue
			}
			t.Run(fmt.Sprintf("%s/%s", id, c.Name), func(t *testing.T) {
				pk, vk, err := keygen.Setup(c.CCS, keygen.WithFixedBase(fb))
				if err != nil {
					t.Fatal(err)
				}
				proveWithGnark(t, c, pk, vk)
			})
		}
	}
}

// From one toxic waste (keygen.SetToxicWaste, the tests' seeded source),
// the keys with the GPU's products are the CPU comb's, byte for byte in
// gnark's raw encoding: proving key, verifying key, every query; and so is
// the key SetupTo streams with the GPU's products, a chunk a call.
func TestCUDASetupEqualsCPU(t *testing.T) {
	fb := openCUDA(t)
	for _, id := range bothCurves {
		for _, c := range keygen.Cases(t, id) {
			if c.Name != "mulchain" && c.Name != "bits" { // no commitments: their G2 point is crypto/rand's
				continue
			}
			t.Run(fmt.Sprintf("%s/%s", id, c.Name), func(t *testing.T) {
				cpuPK, cpuVK := seededSetup(t, c.CCS, nil)
				gpuPK, gpuVK := seededSetup(t, c.CCS, fb)
				if !bytes.Equal(cpuPK, gpuPK) {
					t.Errorf("proving keys differ (%d and %d bytes)", len(cpuPK), len(gpuPK))
				}
				if !bytes.Equal(cpuVK, gpuVK) {
					t.Errorf("verifying keys differ (%d and %d bytes)", len(cpuVK), len(gpuVK))
				}
				streamedPK, streamedVK := seededSetupTo(t, c.CCS, fb)
				if !bytes.Equal(cpuPK, streamedPK) || !bytes.Equal(cpuVK, streamedVK) {
					t.Errorf("SetupTo on the device: proving key equal %v (%d and %d bytes), verifying key equal %v",
						bytes.Equal(cpuPK, streamedPK), len(cpuPK), len(streamedPK), bytes.Equal(cpuVK, streamedVK))
				}
			})
		}
	}
}

// seededSetup sets ccs up from the toxic waste of a fixed seed, on fb
// (nil: the CPU comb), and returns the keys' raw encodings.
func seededSetup(t *testing.T, ccs constraint.ConstraintSystem, fb keygen.FixedBase) (pk, vk []byte) {
	t.Helper()
	restore := keygen.SetToxicWaste(rand.NewChaCha8([32]byte{26, 1}))
	defer restore()
	var opts []keygen.Option
	counted := &countingFixedBase{FixedBase: fb}
	if fb != nil {
		opts = append(opts, keygen.WithFixedBase(counted))
	}
	p, v, err := keygen.Setup(ccs, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if fb != nil && (counted.g1 == 0 || counted.g2 == 0) {
		t.Fatalf("setup on the device called it %d times for G1 and %d for G2", counted.g1, counted.g2)
	}
	var pb, vb bytes.Buffer
	if _, err := p.WriteRawTo(&pb); err != nil {
		t.Fatal(err)
	}
	if _, err := v.WriteRawTo(&vb); err != nil {
		t.Fatal(err)
	}
	return pb.Bytes(), vb.Bytes()
}

// seededSetupTo is seededSetup through SetupTo on fb, in chunks of 16000
// bytes (a device call each).
func seededSetupTo(t *testing.T, ccs constraint.ConstraintSystem, fb keygen.FixedBase) (pk, vk []byte) {
	t.Helper()
	restore := keygen.SetToxicWaste(rand.NewChaCha8([32]byte{26, 1}))
	defer restore()
	defer keygen.SetChunkBytes(16000)()
	counted := &countingFixedBase{FixedBase: fb}
	var pb, vb bytes.Buffer
	v, _, err := keygen.SetupTo(&pb, ccs, keygen.WithFixedBase(counted))
	if err != nil {
		t.Fatal(err)
	}
	if counted.g1 < 5 || counted.g2 < 2 {
		t.Fatalf("SetupTo on the device called it %d times for G1 and %d for G2", counted.g1, counted.g2)
	}
	if _, err := v.WriteRawTo(&vb); err != nil {
		t.Fatal(err)
	}
	return pb.Bytes(), vb.Bytes()
}

// countingFixedBase counts the calls of each group, so a test sees the
// device used.
type countingFixedBase struct {
	keygen.FixedBase
	g1, g2 int
}

func (c *countingFixedBase) FixedBaseG1BN254(out []bn254.G1Affine, base *bn254.G1Affine, s []fr.Element) error {
	c.g1++
	return c.FixedBase.FixedBaseG1BN254(out, base, s)
}
func (c *countingFixedBase) FixedBaseG2BN254(out []bn254.G2Affine, base *bn254.G2Affine, s []fr.Element) error {
	c.g2++
	return c.FixedBase.FixedBaseG2BN254(out, base, s)
}
func (c *countingFixedBase) FixedBaseG1BLS12381(out []bls12381.G1Affine, base *bls12381.G1Affine, s []blsfr.Element) error {
	c.g1++
	return c.FixedBase.FixedBaseG1BLS12381(out, base, s)
}
func (c *countingFixedBase) FixedBaseG2BLS12381(out []bls12381.G2Affine, base *bls12381.G2Affine, s []blsfr.Element) error {
	c.g2++
	return c.FixedBase.FixedBaseG2BLS12381(out, base, s)
}

// A circom zkey from one toxic waste is the same file whether the GPU or
// the CPU comb computed its products, on both curves (keygen.Zkey with
// WithFixedBase, as zkpipe setup --r1cs --device cuda runs it).
func TestCUDAZkeyEqualsCPU(t *testing.T) {
	fb := openCUDA(t)
	for _, path := range []string{"../source/circomsrc/testdata/arr.r1cs", "../source/circomsrc/testdata/bls12381/blsmul.r1cs"} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			r, err := circomsrc.ReadR1CSFile(path)
			if err != nil {
				t.Fatal(err)
			}
			zkey := func(fb keygen.FixedBase) []byte {
				restore := keygen.SetToxicWaste(rand.NewChaCha8([32]byte{48, 1}))
				defer restore()
				var opts []keygen.Option
				counted := &countingFixedBase{FixedBase: fb}
				if fb != nil {
					opts = append(opts, keygen.WithFixedBase(counted))
				}
				z, err := keygen.Zkey(r, opts...)
				if err != nil {
					t.Fatal(err)
				}
				if fb != nil && (counted.g1 == 0 || counted.g2 == 0) {
					t.Fatalf("the zkey's products on the device: %d calls for G1, %d for G2", counted.g1, counted.g2)
				}
				var b bytes.Buffer
				if err := circomsrc.WriteZkey(&b, z); err != nil {
					t.Fatal(err)
				}
				return b.Bytes()
			}
			if onCPU, onGPU := zkey(nil), zkey(fb); !bytes.Equal(onCPU, onGPU) {
				t.Errorf("zkeys differ (%d and %d bytes)", len(onCPU), len(onGPU))
			}
		})
	}
}
