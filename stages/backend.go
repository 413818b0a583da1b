package stages

import (
	"context"

	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/proofdata"
)

// Backend is what the stages and the engine need from a compute device,
// for circuits of any curve: the points it returns are the key's curve's
// own types (proofdata.Point), and a backend that cannot prove on a key's
// curve says so at Load (errors.ErrUnsupported, naming the curve).
// gpu.CPU is the reference implementation; gpu.CUDA and gpu.Multi satisfy
// it too, in full: a capability a backend lacks is a method that says so
// (false, zero, errors.ErrUnsupported), never a missing method. Every
// method is safe for concurrent use by several stage workers.
type Backend interface {
	G2Backend // B_G2 on the G1 device, the default (--bg2-device)

	// ─── keys and vectors ────────────────────────────────────────────────

	// Load makes a circuit's bases resident on the device, once per circuit.
	Load(k *proofdata.Key) (proofdata.Resident, error)
	// Transfer stages one proof's classified vectors on the device
	// (pin/transfer).
	Transfer(ctx context.Context, r proofdata.Resident, v *proofdata.Vectors) (*proofdata.Staged, error)
	// ClassifiesOnTransfer tells whether TransferClassify does the work.
	ClassifiesOnTransfer() bool
	// TransferClassify is Transfer for vectors whose queries are not
	// classified yet: the backend classifies them itself, straight into
	// the pinned buffers its upload reads (gpu.CUDA; gpu.Multi), with no
	// pageable copy of them. With hostB, B's query comes classified in
	// v.QB instead (a B_G2 on another device reads it there). W must stay
	// unchanged until it returns. A backend that does not classify
	// (gpu.CPU: ClassifiesOnTransfer is false) returns
	// errors.ErrUnsupported; the stage classifies on the host and calls
	// Transfer.
	TransferClassify(ctx context.Context, r proofdata.Resident, v *proofdata.Vectors, w []proofdata.Scalar, selA, selB, selK []uint32, hostB bool) (*proofdata.Staged, error)
	// On names the GPU a staged job went to, where its later device
	// stages run ("cuda:1": gpu.Multi's pick, or gpu.CUDA's own device);
	// "" for the CPU.
	On(s *proofdata.Staged) string
	// Free releases what Transfer staged; s is not used after.
	Free(s *proofdata.Staged)

	// ─── G1 ──────────────────────────────────────────────────────────────

	// MSMH computes h from a, b, c by the key's convention and returns its MSM
	// against the H query (NTT+MSM_H).
	MSMH(ctx context.Context, s *proofdata.Staged) (proofdata.Point, error)
	// BatchAddG1 sums the bases whose scalar is one, per G1 query.
	BatchAddG1(ctx context.Context, s *proofdata.Staged) (proofdata.G1Sums, error)
	// TailMSMG1 runs the MSMs of the significant scalars, per G1 query.
	TailMSMG1(ctx context.Context, s *proofdata.Staged) (proofdata.G1Sums, error)
	// TailMSMG1Batch runs several jobs' tail MSMs at once
	// (--tail-msm-batch): out[i] and errs[i] are ss[i]'s, and a job's error
	// is its own where the backend can tell. A backend that does not batch
	// runs them in turn (gpu.CPU).
	TailMSMG1Batch(ctx context.Context, ss []*proofdata.Staged) (out []proofdata.G1Sums, errs []error)

	// ─── memory the engine budgets ───────────────────────────────────────

	// HostKey is what the G1 stages read of k's host copy once Load has
	// returned (gpu.CPU: every part; gpu.CUDA: none, its bases and domain
	// tables live on the device; gpu.Multi: what its devices read
	// together). The engine drops the rest (proofdata.Key.Drop), keeping
	// also what B_G2 reads (G2Backend.HostKeyG2).
	HostKey(k *proofdata.Key) proofdata.KeyParts
	// StagesOnDevice tells whether pin/transfer copies a, b, c and every
	// query it classifies to the device, where the G1 stages read them:
	// then a job holds none of them on the host past pin/transfer (a, b, c
	// go back to the engine's pool as TransferClassify returns), nor
	// padded NTT copies or MSM scratch; only B's query when B_G2 runs on
	// another backend (Circuit.Host, the footprint). gpu.CUDA; gpu.Multi
	// when every device does; false for gpu.CPU, which reads them all in
	// place.
	StagesOnDevice() bool

	// ResidentBytes is what Load keeps on the device for k, and JobBytes
	// the most one job of k holds there when each of its queries has at
	// most tail significant scalars (proofdata.Vectors.Tail; tail ≤ 0:
	// its length): the engine charges them to the governor's device
	// budget (a circuit whose key does not fit is refused; a job waits
	// for room at pin/transfer, or is refused, naming the sizes, where it
	// could never fit). 0 for a backend with no memory of its own
	// (gpu.CPU): nothing is charged.
	ResidentBytes(k *proofdata.Key) int64
	JobBytes(k *proofdata.Key, tail int) int64
	// PinnedKeyBytes is the page-locked host memory Load keeps for k: the
	// bases of a key the backend streams to its device piece by piece
	// because they do not fit there (gpu.CUDA's BasesOnHost, cuzk's way
	// on a small card); 0 for one it holds on its device or in ordinary
	// host memory. The engine charges it to the pinned budget.
	PinnedKeyBytes(k *proofdata.Key) int64
	// DeviceMemory is the device memory free now and the device's total
	// (mem.DeviceMemory): the governor's device budget. total 0: the
	// backend has no device memory (gpu.CPU), and no device budget is kept.
	DeviceMemory() (free, total int64)
	// PinnedBytes is the pinned host memory the backend took for itself
	// when it opened (gpu.CUDA's bounce buffers), charged to the budgets;
	// 0 if none.
	PinnedBytes() int
	// PinnedSlots is the size of one pinned staging buffer and how many
	// the backend can use at once, for a backend that stages through
	// buffers the engine lends it (a mem.PinnedPool allocated with
	// PinnedAlloc and touched once at start-up, within the pinned budget);
	// 0, 0 for one that does not (gpu.CPU, gpu.CUDA, gpu.Multi today).
	PinnedSlots() (slot, slots int)
	// PinnedAlloc allocates page-locked host memory (cudaHostAlloc) and
	// returns the function that frees it (cudaFreeHost);
	// errors.ErrUnsupported where PinnedSlots is 0, 0.
	PinnedAlloc(bytes int) (buf []byte, free func() error, err error)
	// UsePinned hands the pool over before the first Transfer. The backend
	// takes buffers with Get and gives each back with Put once its copy is
	// done; every one must be back when the stream ends. Called only where
	// PinnedSlots gave some.
	UsePinned(p *mem.PinnedPool)
}

// G2Backend does the B query's G2 work: batch-addition of its ones and the
// MSM of its significant scalars. --bg2-device picks it independently of
// the G1 backend (the CPU's G2 MSM reads the host copy in s.Host); every
// Backend is one.
type G2Backend interface {
	Name() string
	// HostKeyG2 is what B_G2 reads of a key's host copy (gpu.CPU: B₂; a
	// GPU: none).
	HostKeyG2(k *proofdata.Key) proofdata.KeyParts
	BatchAddG2(ctx context.Context, s *proofdata.Staged) (proofdata.Point, error)
	MSMG2(ctx context.Context, s *proofdata.Staged) (proofdata.Point, error)
}
