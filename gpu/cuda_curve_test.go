package gpu_test

import (
	"errors"
	"strings"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/proofdata"
)

// The CUDA library proves on BN254 only: Load of a BLS12-381 key is
// errors.ErrUnsupported naming the curve, on one GPU and through
// gpu.Multi, and the CPU backend loads the same key.
func TestCUDALoadRefusesBLS12381(t *testing.T) {
	_, _, g1, g2 := bls12381.Generators()
	b := &proofdata.Bases[bls12381.G1Affine, bls12381.G2Affine, fft.Domain]{Domain: fft.NewDomain(4),
		A: []bls12381.G1Affine{g1}, B1: []bls12381.G1Affine{g1}, K: []bls12381.G1Affine{g1}, Z: []bls12381.G1Affine{g1, g1, g1},
		B2: []bls12381.G2Affine{g2}}
	k := proofdata.NewKey(curve.BLS12_381, proofdata.HDivideByZ, 4, b)
	if r, err := gpu.NewCPU(1, 1).Load(k); err != nil {
		t.Fatalf("the CPU backend refuses a BLS12-381 key: %v", err)
	} else {
		r.Close()
	}
	dev0 := openOwn(t)
	defer dev0.Close()
	dev1 := openOwn(t)
	defer dev1.Close()
	m, err := gpu.NewMulti([]gpu.Device{dev0, dev1}, []string{"cuda:0", "cuda:1"})
	if err != nil {
		t.Fatal(err)
	}
	for name, be := range map[string]interface {
		Load(*proofdata.Key) (proofdata.Resident, error)
	}{"cuda": dev0, "multi": m} {
		r, err := be.Load(k)
		if err == nil {
			r.Close()
			t.Errorf("%s loaded a BLS12-381 key", name)
			continue
		}
		if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "bls12-381") {
			t.Errorf("%s: %v, want errors.ErrUnsupported naming bls12-381", name, err)
		}
	}
}
