package engine

import (
	"fmt"

	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/stages"
)

// openBackends resolves Device and BG2Device into the G1 backend and
// B_G2's; the GPUs it opens are the engine's to close (e.cudas).
func (e *Engine) openBackends() (stages.Backend, stages.G2Backend, error) {
	o := &e.opts
	cpu := gpu.NewCPU(o.MSMTasks, o.FFTTasks)
	if o.CPUHeavyOps > 0 {
		cpu.LimitHeavy(o.CPUHeavyOps)
	}
	if o.ShareCores {
		cpu.ShareCores(o.Cores)
	}
	var dev stages.Backend = cpu
	var g2 stages.G2Backend = cpu
	var cudaG2 stages.G2Backend
	switch d := o.Device; d {
	case "cpu":
	case "", "auto", "cuda":
		b, err := e.openGPUs()
		if err != nil {
			if d == "cuda" {
				return nil, nil, fmt.Errorf("engine.Options.Device cuda: %w", err)
			}
			fmt.Fprintf(e.log, "zkpipe: no CUDA device (%v); proving on the CPU\n", err)
			break
		}
		dev, cudaG2 = b, b
	default:
		return nil, nil, fmt.Errorf("engine.Options.Device %q: want auto, cpu or cuda", d)
	}
	switch d := o.BG2Device; d {
	case "", "auto":
		// where the G1 stages run: a GPU's G2 MSM (14 ms at 2^20 on an
		// H200) is far faster than the CPU's, and leaves the cores to the
		// solver (notes/cuda.md)
		if cudaG2 != nil {
			g2 = cudaG2
		}
	case "cpu":
	case "cuda":
		if cudaG2 == nil {
			return nil, nil, fmt.Errorf("engine.Options.BG2Device cuda needs the CUDA backend with G2 support (engine.Options.Device cuda)")
		}
		g2 = cudaG2
	default:
		return nil, nil, fmt.Errorf("engine.Options.BG2Device %q: want auto, cpu or cuda", d)
	}
	return dev, g2, nil
}

// gpuBackend is a GPU backend for the G1 stages and B_G2: one gpu.CUDA, or a
// gpu.Multi over several.
type gpuBackend interface {
	stages.Backend
	stages.G2Backend
}

// openGPUs opens every GPU CUDA.Devices names (all of them for
// AllDevices): one is the backend itself, several are spread over by a
// gpu.Multi, each with its own transfer lanes and pinned buffers.
func (e *Engine) openGPUs() (gpuBackend, error) {
	o := e.opts.CUDA
	devices := o.Devices
	if o.AllDevices {
		n, err := gpu.CUDADevices(o.Lib, gpu.WithConfig(o.Config))
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, fmt.Errorf("%w: the library sees no GPU", gpu.ErrNoCUDA)
		}
		devices = nil
		for i := range n {
			devices = append(devices, i)
		}
	}
	if len(devices) == 0 {
		devices = []int{o.Device}
	}
	var labels []string
	var devs []gpu.Device
	closeAll := func() {
		for _, c := range e.cudas {
			c.Close()
		}
		e.cudas = nil
	}
	if o.MSMTableMiB == 0 { // auto
		o.MSMTableMiB = int(gpu.DefaultMSMTableBytes >> 20)
		if e.opts.Memory.Device != "" {
			o.MSMTableMiB = -1
		}
	}
	for _, i := range devices {
		o.Device = i
		c, path, err := openCUDA(o)
		if err != nil {
			closeAll() // with --device auto the run goes on on the CPU: hold no GPU
			return nil, fmt.Errorf("GPU %d: %w", i, err)
		}
		e.cudas = append(e.cudas, c)
		labels = append(labels, fmt.Sprintf("cuda:%d", i))
		devs = append(devs, c)
		fmt.Fprintf(e.log, "zkpipe: CUDA backend on GPU %d, %s, %d compute streams (%s)\n", i, c.Device(), c.ComputeStreams(), path)
	}
	if len(devs) == 1 {
		return e.cudas[0], nil
	}
	m, err := gpu.NewMulti(devs, labels)
	if err != nil {
		closeAll()
		return nil, err
	}
	e.multi = m
	return m, nil
}

func openCUDA(o CUDAOptions) (*gpu.CUDA, string, error) {
	mib, lanes := o.PinnedMiB, o.Lanes
	if mib == 0 {
		mib = 32
	}
	if lanes == 0 {
		lanes = 4
	}
	opts := []gpu.CUDAOption{gpu.WithConfig(o.Config), gpu.WithCUDADevice(o.Device), gpu.WithPinnedBytes(mib << 20), gpu.WithTransferLanes(lanes),
		gpu.WithMSMTables(max(int64(o.MSMTableMiB), 0) << 20), // openGPUs resolved auto (0)
		gpu.WithClassifyWorkers(o.ClassifyWorkers)}
	if o.ComputeStreams > 0 {
		opts = append(opts, gpu.WithComputeStreams(o.ComputeStreams))
	}
	opts = append(opts, gpu.WithBases(o.Bases))
	if o.StreamPiece > 0 {
		opts = append(opts, gpu.WithStreamPiece(o.StreamPiece))
	}
	c, err := gpu.OpenCUDA(o.Lib, opts...)
	if err != nil {
		return nil, "", err
	}
	return c, c.Library(), nil
}
