package stages

import (
	"context"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/zkpipe/zkpipe/proofdata"
)

// Backend is what the stages need from a compute device (gpu.CPU, gpu.CUDA).
// Every method is safe for concurrent use by several stage workers.
type Backend interface {
	Name() string
	// Load makes a circuit's bases resident on the device, once per circuit.
	Load(k *proofdata.Key) (proofdata.Resident, error)
	// Transfer stages one proof's vectors on the device (pin/transfer).
	Transfer(ctx context.Context, r proofdata.Resident, v *proofdata.Vectors) (*proofdata.Staged, error)
	// MSMH computes h from a, b, c by the key's convention and returns its MSM
	// against the H query (NTT+MSM_H).
	MSMH(ctx context.Context, s *proofdata.Staged) (bn254.G1Jac, error)
	// BatchAddG1 sums the bases whose scalar is one, per G1 query.
	BatchAddG1(ctx context.Context, s *proofdata.Staged) (proofdata.G1Sums, error)
	// TailMSMG1 runs the MSMs of the significant scalars, per G1 query.
	TailMSMG1(ctx context.Context, s *proofdata.Staged) (proofdata.G1Sums, error)
	// Free releases what Transfer staged; s is not used after.
	Free(s *proofdata.Staged)
}

// TailBatcher is a backend that runs several jobs' tail MSMs at once
// (gpu.CUDA, gpu.Multi, gpu.CPU): out[i] and errs[i] are ss[i]'s, and a
// job's error is its own where the backend can tell (--tail-msm-batch).
type TailBatcher interface {
	TailMSMG1Batch(ctx context.Context, ss []*proofdata.Staged) (out []proofdata.G1Sums, errs []error)
}

// G2Backend does the B query's G2 work: batch-addition of its ones and the
// MSM of its significant scalars. --bg2-device picks it independently of the
// G1 backend (the CPU's G2 MSM reads the host copy in s.Host).
type G2Backend interface {
	BatchAddG2(ctx context.Context, s *proofdata.Staged) (bn254.G2Jac, error)
	MSMG2(ctx context.Context, s *proofdata.Staged) (bn254.G2Jac, error)
}
