package gnarksrc

import (
	"io"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/zkpipe/zkpipe/curve"
)

// ReadProvingKey is readProvingKey, for BenchmarkKeyLoad: pk (a fresh key
// of curve id) decoded from r, the point slices over all cores.
func ReadProvingKey(id curve.ID, pk groth16.ProvingKey, r io.Reader) (int64, error) {
	return readProvingKey(id, pk, nil, false)(r)
}
