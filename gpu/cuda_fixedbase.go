package gpu

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"
)

// The fixed-base products of a Groth16 setup (keygen.FixedBase): out[i] =
// scalars[i]·base for one base, on the GPU (zk_fixed_base, ABI 11: a table
// of the base's signed window multiples built on the device, one thread a
// scalar, affine results made by batch inversion on the device). The
// slices are the caller's host memory, read and written in place: the
// library copies them in chunks of 2^22, so device memory stays bounded.
// Each curve's FixedBaseG1<Curve> and FixedBaseG2<Curve> are its
// cuda_<curve>.go's.

// Emulated reports whether the library is the host stand-in (hostlib.cpp:
// the GPU's code run on the CPU, for tests), not a GPU: a setup's
// --device auto does not choose it.
func (c *CUDA) Emulated() bool { return strings.HasPrefix(c.device, "host stand-in") }

// fixedBase runs zk_fixed_base over one group: P is the group's affine
// point (the library's layout is gnark's), S the curve's Fr.
func fixedBase[P, S any](c *CUDA, cid int32, g2 bool, out []P, base *P, scalars []S) error {
	if len(out) != len(scalars) {
		return fmt.Errorf("cuda fixed base: %d outputs for %d scalars", len(out), len(scalars))
	}
	if base == nil {
		return fmt.Errorf("cuda fixed base: no base point")
	}
	if len(out) == 0 {
		return nil
	}
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	err := c.onCompute(func(s uintptr) error {
		var e cerr
		return e.err("fixed base", c.fn.fixedBase(cid, g2Flag(g2), c.fixedBaseWindow, unsafe.Pointer(base),
			unsafe.Pointer(&scalars[0]), uint64(len(scalars)), unsafe.Pointer(&out[0]), s, e.p()))
	})
	runtime.KeepAlive(out)
	runtime.KeepAlive(base)
	runtime.KeepAlive(scalars)
	return err
}
