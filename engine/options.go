package engine

import (
	"fmt"
	"io"
	"time"

	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
	"github.com/zkpipe/zkpipe/tracing"
)

// Options configure an Engine. The zero value proves on the CPU if no GPU
// backend is found, one worker and a queue of one at every stage, under the
// default memory budgets, into the directory "out". A message about an
// option names it by its Go name (engine.Options.Memory.Budget, say); the
// zkpipe command prints the flag that sets it instead.
type Options struct {
	// Device is the compute backend of the G1 stages: "auto" (CUDA when a
	// library and a GPU are found, else the CPU; the default), "cpu" or "cuda".
	Device string
	// BG2Device runs the B_G2 stage: "auto" (the default, "" too: on the
	// GPU when the G1 stages are), "cpu" or "cuda".
	BG2Device string
	// MSMTasks and FFTTasks bound the goroutines of one CPU MSM (or batch
	// addition) and one CPU NTT; 0 means one per core.
	MSMTasks, FFTTasks int
	// ShareCores has each CPU MSM and NTT start with the cores divided
	// among those running then (gpu.CPU.ShareCores) instead of all of
	// them: several stage workers' MSMs split the cores instead of
	// oversubscribing them. It sizes the tasks itself, so MSMTasks and
	// FFTTasks must be 0.
	ShareCores bool
	// CPUHeavyOps bounds the CPU MSMs and NTTs (H's three counting as one)
	// that run at once, all stages' together; the others wait
	// (gpu.CPU.LimitHeavy). 0: gpu.DefaultHeavyOps, no bound.
	CPUHeavyOps int
	CUDA        CUDAOptions

	// Shapes sets workers and queue depth per stage (stages.Names); a stage
	// left out gets a shape zkpipe chooses from the cores and where the
	// stages run (see autoShape), and adapts while it runs.
	Shapes map[string]stages.Shape
	// TailMSMBatch is the most jobs a tail-msm worker runs at once: it
	// takes a job and up to TailMSMBatch−1 more already waiting in its
	// queue (never waiting for more), and runs the tail MSMs of each
	// circuit's jobs among them in one device pass over their shared
	// bases. 0 or 1: one job at a time. An automatic tail-msm queue is
	// made deep enough to hold a batch.
	TailMSMBatch int
	// FixedShape keeps the chosen shape for the whole run. Otherwise every
	// window (AdaptEvery; 0: 2 s) the bottleneck among the stages zkpipe
	// chose gets one more worker while the cores allow, idle ones giving
	// theirs back (package adapt); a stage in Shapes never changes.
	FixedShape bool
	AdaptEvery time.Duration
	// Cores is how many cores the stages may use; 0 means runtime.NumCPU.
	Cores int

	Memory MemoryOptions

	// Tracing exports each job's spans over OTLP; with no endpoint
	// (Endpoint, or EndpointFromEnv) tracing is off.
	Tracing tracing.Config

	// Out is the directory proofs are written to. The engine creates it,
	// holds a lock on it for its life (a second engine on the same directory
	// is refused) and removes the temporary files a killed run left there.
	Out string
	// Output, when set, takes every job's outputs (named blobs: ID.proof,
	// ID.public, …) instead of a directory: the engine then opens no
	// directory and writes nothing to disk (Out must be empty, and SkipDone
	// off: it reads a directory). A failed write fails its job alone; Run
	// goes on, unlike with a directory (see Run). A job of Run's whose
	// stream.Line has its own Out writes there instead, either way.
	Output stages.Output
	// MaxPartitions is the most partitions a request of partitions
	// (stream.Request.Partitions) may have; 0: stream.DefaultMaxPartitions
	// (64), at most MaxPartitionsLimit.
	MaxPartitions int
	// SkipDone answers a job whose output files already exist and verify
	// from those files (its result line says "resumed") instead of proving
	// it again.
	SkipDone bool

	// Writes are the files the run writes outside Out (the results file):
	// a job whose witness is one of them (os.SameFile), or a file the
	// engine writes in Out, fails, naming the clash (ErrInputClash).
	Writes []Output

	// Log receives the status line and warnings; nil means os.Stderr.
	Log io.Writer
}

// CUDAOptions configure the CUDA backend (Device "auto" or "cuda").
type CUDAOptions struct {
	// Lib is the path of libzkpipe_cuda.so; empty: beside the executable,
	// then the system's library directories (gpu.FindCUDALibrary). The
	// zkpipe command fills it from --cuda-lib or $ZKPIPE_CUDA_LIB.
	Lib string
	// Config is the CUDA library's tuning, the same for every GPU the
	// engine opens (gpu.CUDAConfig; the zero value is the defaults). The
	// zkpipe command fills it from the environment (commands/cudaenv.go).
	Config gpu.CUDAConfig
	// Device is the GPU's index, when Devices is empty.
	Device int
	// Devices are the GPUs to spread the stream over (each job's device
	// stages all run on one, the least loaded); AllDevices takes every GPU
	// the library sees.
	Devices    []int
	AllDevices bool
	// PinnedMiB is the size of each pinned bounce buffer (two per lane);
	// 0 means 32.
	PinnedMiB int
	// Lanes is how many uploads run at once; 0 means 4.
	Lanes int
	// ClassifyWorkers bounds the goroutines that classify one job's
	// queries on transfer (gpu.WithClassifyWorkers); 0 means GOMAXPROCS,
	// 1 one goroutine a query.
	ClassifyWorkers int
	// MSMTableMiB is the device memory one circuit's precomputed MSM tables
	// may take (gpu.WithMSMTables); negative turns them off; 0 means auto:
	// gpu.DefaultMSMTableBytes, or off under a device budget (Memory.Device),
	// which the tables would mostly fill.
	MSMTableMiB int
	// ComputeStreams is how many device operations (MSMs, batch-additions,
	// H) run at once on each GPU, each on a stream of its own; 0 means 2,
	// 1 serialises them.
	ComputeStreams int
	// Bases says where each circuit's bases live between proofs
	// (gpu.WithBases): on the GPU, in pinned host memory streamed to it in
	// pieces for every proof (a key larger than the card), or auto, the
	// zero value: on the GPU where the key and one job fit.
	Bases gpu.BasesPlace
	// StreamPiece is the points of one streamed piece (gpu.WithStreamPiece);
	// 0 means gpu.DefaultStreamPiece.
	StreamPiece int
}

// MemoryOptions are the memory governor's budgets.
type MemoryOptions struct {
	// Budget is the resident memory zkpipe may use: a size ("16GiB"), a share
	// of the machine's memory lowered to its cgroup limit ("75%", the
	// default), or "off".
	Budget string
	// Pinned is the page-locked memory a GPU backend may hold for staging: a
	// size, or a share of Budget ("25%", the default).
	Pinned string
	// Device is the GPU memory resident keys and jobs in flight may hold,
	// a size ("80GiB"); empty means the GPU's free memory when the engine
	// opens. A job waits at pin/transfer until its device memory fits; a
	// circuit whose keys cannot fit is refused with both sizes.
	Device string
	// Status prints a status line to Log this often (at least a second);
	// 0 means never.
	Status time.Duration
	// KeepHostKeys keeps the circuits' keys whole in host memory once
	// resident on a GPU (CoreConfig.KeepHostKeys): for a caller that
	// proves with the same circuits after, on the CPU or with gnark's own
	// prover. Without it the host keeps only what the stages read there
	// (nothing on a GPU; B₂ with B_G2 on the CPU), and a circuit given to
	// this engine cannot be loaded on a CPU backend again.
	KeepHostKeys bool

	// The Go runtime's memory limit and GOGC are the whole process's, so
	// the engine leaves them to its program unless asked; the zkpipe
	// command asks for both. Close restores what New set. Neither applies
	// when Budget is "off".
	//
	// SetGoLimit has the runtime's soft memory limit (debug.SetMemoryLimit)
	// follow Budget less the resident memory that is not the runtime's (the
	// binary, C libraries, pinned buffers; never below a quarter of Budget)
	// while the engine is open, so that the collector works before RSS
	// passes the budget.
	SetGoLimit bool
	// GCPercent, when positive, is GOGC (debug.SetGCPercent) while the
	// engine is open; 0 leaves it. BudgetGCPercent is the command's.
	GCPercent int
}

// Limits of the settings: past them a flag is a typo, not a wish.
const (
	MaxWorkers = 1024
	MaxQueue   = 1 << 16
	// MaxMSMTasks is the most goroutines gnark-crypto's MultiExp accepts.
	MaxMSMTasks = 1024
)

// check refuses settings out of range before anything is opened, naming the
// option (the zkpipe command names its flag instead).
func (o *Options) check() error {
	if o.Output != nil && (o.Out != "" || o.SkipDone) {
		return fmt.Errorf("an output writer (Output) takes the place of the directory Out: give Out (%q) and SkipDone (%v) only without one", o.Out, o.SkipDone)
	}
	for name, s := range o.Shapes {
		if !isStage(name) {
			return fmt.Errorf("unknown stage %q (stages: %v)", name, stages.Names)
		}
		if s.Workers < 1 || s.Workers > MaxWorkers {
			return fmt.Errorf("engine.Options.Shapes[%s].Workers %d: want 1 to %d", name, s.Workers, MaxWorkers)
		}
		if s.Queue < 0 || s.Queue > MaxQueue {
			return fmt.Errorf("engine.Options.Shapes[%s].Queue %d: want 0 to %d", name, s.Queue, MaxQueue)
		}
	}
	if o.MaxPartitions < 0 || o.MaxPartitions > MaxPartitionsLimit {
		return fmt.Errorf("engine.Options.MaxPartitions %d: want 1 to %d (0: %d)", o.MaxPartitions, MaxPartitionsLimit, stream.DefaultMaxPartitions)
	}
	if o.TailMSMBatch < 0 || o.TailMSMBatch > gpu.MaxMSMBatch {
		return fmt.Errorf("engine.Options.TailMSMBatch %d: want 1 to %d (0: 1)", o.TailMSMBatch, gpu.MaxMSMBatch)
	}
	if o.MSMTasks < 0 || o.MSMTasks > MaxMSMTasks {
		return fmt.Errorf("engine.Options.MSMTasks %d: want 0 (one per core) to %d, the most gnark-crypto's MSM accepts", o.MSMTasks, MaxMSMTasks)
	}
	if o.FFTTasks < 0 || o.FFTTasks > MaxMSMTasks {
		return fmt.Errorf("engine.Options.FFTTasks %d: want 0 (one per core) to %d", o.FFTTasks, MaxMSMTasks)
	}
	if o.CPUHeavyOps < 0 || o.CPUHeavyOps > MaxMSMTasks {
		return fmt.Errorf("engine.Options.CPUHeavyOps %d: want 1 to %d (0: no bound)", o.CPUHeavyOps, MaxMSMTasks)
	}
	if o.ShareCores && (o.MSMTasks != 0 || o.FFTTasks != 0) {
		return fmt.Errorf("engine.Options.ShareCores sizes each MSM and NTT itself: leave engine.Options.MSMTasks (%d) and engine.Options.FFTTasks (%d) unset", o.MSMTasks, o.FFTTasks)
	}
	for _, d := range o.CUDA.Devices {
		if d < 0 {
			return fmt.Errorf("engine.Options.CUDA.Devices %d: want a GPU index, a list, or all", d)
		}
	}
	if o.CUDA.PinnedMiB < 0 || o.CUDA.Lanes < 0 || o.CUDA.Device < 0 || o.CUDA.ClassifyWorkers < 0 {
		return fmt.Errorf("engine.Options.CUDA.PinnedMiB %d, engine.Options.CUDA.Lanes %d, engine.Options.CUDA.Device %d, engine.Options.CUDA.ClassifyWorkers %d: none may be negative",
			o.CUDA.PinnedMiB, o.CUDA.Lanes, o.CUDA.Device, o.CUDA.ClassifyWorkers)
	}
	if o.CUDA.ComputeStreams < 0 || o.CUDA.ComputeStreams > gpu.MaxComputeStreams {
		return fmt.Errorf("engine.Options.CUDA.ComputeStreams %d: want 1 to %d (0: the default, 2)", o.CUDA.ComputeStreams, gpu.MaxComputeStreams)
	}
	if o.Tracing.Group < 0 {
		return fmt.Errorf("engine.Options.Tracing.Group %d: want 0 or more", o.Tracing.Group)
	}
	if o.AdaptEvery < 0 {
		return fmt.Errorf("engine.Options.AdaptEvery %s: want 0 (the default) or more", o.AdaptEvery)
	}
	if o.Cores < 0 {
		return fmt.Errorf("engine.Options.Cores %d: want 0 (runtime.NumCPU) or more", o.Cores)
	}
	if o.Memory.GCPercent < 0 {
		return fmt.Errorf("engine.Options.Memory.GCPercent %d: want 0 (leave GOGC) or more", o.Memory.GCPercent)
	}
	if o.Memory.Status < 0 {
		return fmt.Errorf("engine.Options.Memory.Status %s: want 0 (never) or more", o.Memory.Status)
	}
	return nil
}

func isStage(name string) bool {
	for _, n := range stages.Names {
		if n == name {
			return true
		}
	}
	return false
}

// shape is the stage's settings with the defaults filled in.
func (o *Options) shape(name string) stages.Shape {
	if s, ok := o.Shapes[name]; ok {
		return s
	}
	return stages.Shape{Workers: 1, Queue: 1}
}
