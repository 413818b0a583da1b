package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/stages"
)

// CUDALibName is the CUDA backend's shared library (built by gpu/cuda/build.sh).
const CUDALibName = "libzkpipe_cuda.so"

// backends resolves Device and BG2Device. It returns the G1 backend, B_G2's
// and, when it opened one, the CUDA backend the engine must close.
func (e *Engine) openBackends() (stages.Backend, stages.G2Backend, error) {
	o := &e.opts
	cpu := gpu.NewCPU(o.MSMTasks, o.FFTTasks)
	var dev stages.Backend = cpu
	var g2 stages.G2Backend = cpu
	var cudaG2 stages.G2Backend
	switch d := o.Device; d {
	case "cpu":
	case "", "auto", "cuda":
		c, path, err := openCUDA(o.CUDA)
		if err != nil {
			if d == "cuda" {
				return nil, nil, fmt.Errorf("--device cuda: %w", err)
			}
			if !errors.Is(err, errNoLibrary) {
				fmt.Fprintf(e.log, "zkpipe: no CUDA device (%v); proving on the CPU\n", err)
			}
			break
		}
		fmt.Fprintf(e.log, "zkpipe: CUDA backend on %s (%s)\n", c.Device(), path)
		e.cuda = c
		dev, cudaG2 = c, c
	default:
		return nil, nil, fmt.Errorf("--device %q: want auto, cpu or cuda", d)
	}
	switch d := o.BG2Device; d {
	case "", "cpu":
	case "cuda":
		if cudaG2 == nil {
			return nil, nil, fmt.Errorf("--bg2-device cuda needs the CUDA backend with G2 support (--device cuda)")
		}
		g2 = cudaG2
	default:
		return nil, nil, fmt.Errorf("--bg2-device %q: want cpu or cuda", d)
	}
	return dev, g2, nil
}

// errNoLibrary: no CUDA library was found where one is looked for. With
// --device auto that is the quiet case: a CPU machine.
var errNoLibrary = errors.New("no CUDA library")

func openCUDA(o CUDAOptions) (*gpu.CUDA, string, error) {
	path, err := cudaLibPath(o.Lib)
	if err != nil {
		return nil, "", err
	}
	mib, lanes := o.PinnedMiB, o.Lanes
	if mib == 0 {
		mib = 32
	}
	if lanes == 0 {
		lanes = 4
	}
	c, err := gpu.OpenCUDA(path, gpu.WithCUDADevice(o.Device), gpu.WithPinnedBytes(mib<<20), gpu.WithTransferLanes(lanes))
	return c, path, err
}

// cudaLibPath is the library to load: lib when given, else
// $ZKPIPE_CUDA_LIB, else the one beside the executable. Never a path
// relative to the working directory: a library planted there would run its
// code inside zkpipe.
func cudaLibPath(lib string) (string, error) {
	if lib == "" {
		lib = os.Getenv("ZKPIPE_CUDA_LIB")
	}
	if lib != "" {
		if !filepath.IsAbs(lib) {
			abs, err := filepath.Abs(lib) // given by the user: theirs to name
			if err != nil {
				return "", err
			}
			lib = abs
		}
		return lib, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("%w: %v", errNoLibrary, err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return "", fmt.Errorf("%w: %v", errNoLibrary, err)
	}
	p := filepath.Join(filepath.Dir(exe), CUDALibName)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%w: none beside the executable (%s); give --cuda-lib or ZKPIPE_CUDA_LIB", errNoLibrary, p)
	}
	return p, nil
}
