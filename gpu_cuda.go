package main

import (
	"fmt"
	"os"
	"sync"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/stages"
)

// The CUDA backend joins --device auto|cuda through cudaBackend (cmd_prove.go)
// and adds its flags to every command that takes the prove hooks. It
// registers during variable initialisation, before the commands' init().
var _ = func() bool {
	cudaBackend = openCUDABackend
	return registerProveHook(proveHook{flags: cudaFlags()})
}()

func cudaFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "cuda-lib", Category: "compute", EnvVars: env("cuda-lib"),
			Usage: "path of " + gpu.CUDALibraryName + " (built by gpu/cuda/build.sh); default: beside the zkpipe executable, then the system library path (never the working directory)"},
		&cli.IntFlag{Name: "cuda-device", Category: "compute", EnvVars: env("cuda-device"), Usage: "GPU index for --device cuda"},
		&cli.IntFlag{Name: "cuda-pinned-mib", Value: 32, Category: "compute", EnvVars: env("cuda-pinned-mib"),
			Usage: "MiB of each pinned bounce buffer of the CUDA backend, two per lane (allocated once, counted against --pinned-budget)"},
		&cli.IntFlag{Name: "cuda-lanes", Value: 4, Category: "compute", EnvVars: env("cuda-lanes"),
			Usage: "uploads to the GPU that run at once (each copies through its own pinned buffers on its own core)"},
	}
}

var (
	cudaOpen sync.Once
	cudaDev  *gpu.CUDA
	cudaErr  error
)

// openCUDABackend opens the CUDA backend once per process; it serves both
// the G1 stages and, with --bg2-device cuda, B_G2.
func openCUDABackend(c *cli.Context) (stages.Backend, stages.G2Backend, error) {
	cudaOpen.Do(func() {
		mib, lanes := c.Int("cuda-pinned-mib"), c.Int("cuda-lanes")
		if mib <= 0 {
			mib = 32
		}
		if lanes <= 0 {
			lanes = 4
		}
		cudaDev, cudaErr = gpu.OpenCUDA(c.String("cuda-lib"), gpu.WithCUDADevice(c.Int("cuda-device")),
			gpu.WithPinnedBytes(mib<<20), gpu.WithTransferLanes(lanes))
		if cudaErr == nil {
			fmt.Fprintf(os.Stderr, "zkpipe: CUDA backend on %s (%s)\n", cudaDev.Device(), cudaDev.Library())
		}
	})
	if cudaErr != nil {
		return nil, nil, cudaErr
	}
	return cudaDev, cudaDev, nil
}
