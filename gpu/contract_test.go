package gpu_test

import (
	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/stages"
)

// Each backend satisfies the stages' whole contract, and a Multi can drive
// any of them as a device.
var (
	_ stages.Backend = (*gpu.CPU)(nil)
	_ stages.Backend = (*gpu.CUDA)(nil)
	_ stages.Backend = (*gpu.Multi)(nil)

	_ gpu.Device = (*gpu.CPU)(nil)
	_ gpu.Device = (*gpu.CUDA)(nil)
	_ gpu.Device = (stages.Backend)(nil)
)
