package gpu

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/zkpipe/zkpipe/proofdata"
)

// CUDALibraryName is the file name of the CUDA backend's library
// (gpu/cuda/build.sh builds it).
const CUDALibraryName = "libzkpipe_cuda.so"

// The C ABI this package is built for: gpu/cuda/zkpipe.h. A library whose
// zk_abi_version returns another version, or other struct sizes, is refused.
const (
	cudaABIVersion = 15  // 15: zk_abi's sizes a curve (gpu/cuda/curves.h); 14: zk_config.msm_piece_log; 13: zk_config.wait_poll_us; 12: zk_msm_table_layout by group; 11: zk_fixed_base
	zkErrBytes     = 512 // ZK_ERR_BYTES: each call's error buffer
	maxWindows     = 64  // ZK_MAX_WINDOWS: window sums an MSM returns at most
	MaxMSMBatch    = 64  // ZK_MAX_BATCH: scalar vectors one batched MSM takes at most
)

// zkCurveABI mirrors zk_curve_abi (zkpipe.h): one curve's sizes.
type zkCurveABI struct {
	FrBytes, G1AffineBytes, G2AffineBytes, G1XYZZBytes, G2XYZZBytes uint32
}

// zkABI mirrors zk_abi (zkpipe.h): the sizes both sides share, and each
// curve's (curvetable.go: zkCurves, in the library's order).
type zkABI struct {
	ABIBytes, ErrBytes, MaxWindows, PointerBytes, CountBytes uint32
	ConfigBytes, MSMArgsBytes                                uint32
	CurveCount                                               uint32
	Curves                                                   [zkCurves]zkCurveABI
}

// wantABI is zkABI as this package lays the shared types out.
var wantABI = zkABI{
	ABIBytes:     uint32(unsafe.Sizeof(zkABI{})),
	ErrBytes:     zkErrBytes,
	MaxWindows:   maxWindows,
	PointerBytes: uint32(unsafe.Sizeof(uintptr(0))),
	CountBytes:   8,
	ConfigBytes:  uint32(unsafe.Sizeof(zkConfig{})),
	MSMArgsBytes: uint32(unsafe.Sizeof(zkMSMArgs{})),
	CurveCount:   zkCurves,
	Curves:       wantCurveABI,
}

// zkConfig mirrors zk_config (zkpipe.h): CUDAConfig as the library takes it
// at zk_init.
type zkConfig struct {
	ConfigBytes                     uint32
	MSMWindow, MSMChunk, MSMSegment int32
	Spin                            int32
	WaitPollMicros                  int32 // wait_poll_us (ABI 13)
	MSMPieceLog                     int32 // msm_piece_log (ABI 14)
}

// zkMSMArgs mirrors zk_msm_args (zkpipe.h): one zk_msm call, k vectors of
// scalars over one set of bases or their table. Scalars, Idx and N point
// at host arrays of K entries (device pointers, and counts).
type zkMSMArgs struct {
	ArgsBytes uint32
	G2        int32
	Bases     uintptr
	NBase     uint64
	Table     int32
	K         uint32
	Scalars   unsafe.Pointer
	Idx       unsafe.Pointer
	N         unsafe.Pointer
	Curve     int32 // ZK_CURVE_* (ABI 10)
	_         uint32
}

// ErrNoCUDA wraps every reason OpenCUDA cannot give a backend.
var ErrNoCUDA = errors.New("cuda unavailable")

// FindCUDALibrary says where OpenCUDA loads the library from: always an
// absolute path that zkpipe chose, in this order:
//
//  1. flag (--cuda-lib, $ZKPIPE_CUDA_LIB) when not empty: that file, which
//     must exist (a relative path is made absolute here, once);
//  2. CUDALibraryName beside the running executable (symlinks resolved);
//  3. CUDALibraryName in the first of CUDASystemDirs that holds it.
//
// Never a bare name through the dynamic loader's search: the loader takes
// an empty element of LD_LIBRARY_PATH (":/opt/cuda/lib64", what
// LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/x gives when it was unset) or "." for
// the working directory, so a library planted in the directory zkpipe runs
// from would run its constructors in the prover before any check. None
// found is an error wrapping ErrNoCUDA that lists where zkpipe looked.
func FindCUDALibrary(flag string) (string, error) {
	if flag != "" {
		p, err := filepath.Abs(flag)
		if err != nil {
			return "", fmt.Errorf("%w: engine.Options.CUDA.Lib %s: %v", ErrNoCUDA, flag, err)
		}
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: engine.Options.CUDA.Lib: %v", ErrNoCUDA, err)
		}
		return p, nil
	}
	var looked []string
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			looked = append(looked, filepath.Dir(exe))
		}
	}
	looked = append(looked, CUDASystemDirs...)
	for _, dir := range looked {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, CUDALibraryName)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: no %s beside the executable or in %s; give its path (engine.Options.CUDA.Lib)", ErrNoCUDA, CUDALibraryName, strings.Join(CUDASystemDirs, ", "))
}

// CUDASystemDirs are the system directories FindCUDALibrary looks in, in
// order, after the executable's own: where `install` puts a library, and
// the distributions' library directories (Debian's multiarch one first).
var CUDASystemDirs = []string{
	"/usr/local/lib",
	"/usr/local/lib64",
	"/usr/lib/" + multiarch(),
	"/usr/lib64",
	"/usr/lib",
}

// multiarch is Debian's multiarch triplet for this architecture.
func multiarch() string {
	switch runtime.GOARCH {
	case "arm64":
		return "aarch64-linux-gnu"
	case "ppc64le":
		return "powerpc64le-linux-gnu"
	}
	return "x86_64-linux-gnu"
}

// preloadDeps loads, by absolute path, the libraries lib needs (its ELF
// DT_NEEDED entries, theirs before them) and the CUDA driver that the
// static CUDA runtime inside opens at its first call (libcuda.so.1), so
// that the dynamic loader, finding each already loaded by its name, never
// searches for one: its search would take an empty or relative
// LD_LIBRARY_PATH element for the working directory, where a planted
// libstdc++.so.6 would run its constructors in the prover. Each is looked
// for in LD_LIBRARY_PATH's absolute elements, then depDirs. One found
// nowhere is left to the loader, unless LD_LIBRARY_PATH has an element the
// loader would take relative to the working directory: then the library is
// refused, naming the dependency and the element.
func preloadDeps(lib, ldPath string, done map[string]bool, top bool) error {
	f, err := elf.Open(lib)
	if err != nil {
		return fmt.Errorf("%s: %v", lib, err)
	}
	needed, err := f.ImportedLibraries()
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %v", lib, err)
	}
	if top {
		needed = append(needed, "libcuda.so.1") // opened by name inside cudaInit; optional
	}
	dirs, unsafeElem := libraryPath(ldPath)
	for _, name := range needed {
		if done[name] {
			continue
		}
		done[name] = true
		p := findIn(name, dirs)
		if p == "" {
			if name == "libcuda.so.1" {
				continue // no driver here: zk_init says so
			}
			if unsafeElem != "" {
				return fmt.Errorf("%s needs %s, which is in none of %s; LD_LIBRARY_PATH's element %q would have the loader look in the working directory, so it is not left to the loader",
					lib, name, strings.Join(dirs, ", "), unsafeElem)
			}
			continue
		}
		if err := preloadDeps(p, ldPath, done, false); err != nil {
			return err
		}
		if _, err := purego.Dlopen(p, purego.RTLD_NOW|purego.RTLD_GLOBAL); err != nil {
			return fmt.Errorf("%s needs %s: load %s: %v", lib, name, p, err)
		}
	}
	return nil
}

// depDirs are where preloadDeps looks for a dependency after
// LD_LIBRARY_PATH's absolute elements: CUDASystemDirs, the base system's
// library directories and CUDA's.
var depDirs = append(append([]string(nil), CUDASystemDirs...),
	"/lib/"+multiarch(), "/lib64", "/lib", "/usr/local/cuda/lib64")

// libraryPath returns the absolute elements of v, the process's
// LD_LIBRARY_PATH (CUDAConfig.LibraryPath), followed by depDirs, and the
// first element the loader would resolve against the working directory
// (empty, "." or relative), if any.
func libraryPath(v string) (dirs []string, unsafeElem string) {
	// glibc ignores an empty LD_LIBRARY_PATH, and splits others at ':' and
	// ';', an empty element meaning the working directory
	if v != "" {
		for _, e := range strings.Split(strings.ReplaceAll(v, ";", ":"), ":") {
			switch {
			case filepath.IsAbs(e):
				dirs = append(dirs, e)
			case unsafeElem == "" && e == "":
				unsafeElem = "(empty)"
			case unsafeElem == "":
				unsafeElem = e
			}
		}
	}
	return append(dirs, depDirs...), unsafeElem
}

// findIn returns dir/name for the first dir holding name as a file.
func findIn(name string, dirs []string) string {
	if strings.ContainsRune(name, '/') {
		return "" // a path in DT_NEEDED is the loader's to take as it is
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

// cudaFns are the C entry points of zkpipe.h. Every one but abiVersion takes
// its caller's error buffer last (zkErrBytes).
type cudaFns struct {
	abiVersion    func(out *zkABI) uint32
	defaultConfig func(out *zkConfig)
	init          func(dev int32, cfg *zkConfig, ctx *uintptr, name *byte, n int32, mem *uint64, e *byte) int32
	fini          func(ctx uintptr, e *byte) int32
	deviceCount   func(n *int32, e *byte) int32
	memInfo       func(dev int32, free, total *uint64, e *byte) int32
	hostAlloc     func(p *unsafe.Pointer, bytes uint64, e *byte) int32
	hostFree      func(p unsafe.Pointer, e *byte) int32
	streamCreate  func(ctx uintptr, s *uintptr, e *byte) int32
	streamDstr    func(s uintptr, e *byte) int32
	streamSync    func(s uintptr, e *byte) int32
	devAlloc      func(p *uintptr, bytes uint64, s uintptr, e *byte) int32
	devFree       func(p uintptr, s uintptr, e *byte) int32
	memset        func(p uintptr, bytes uint64, s uintptr, e *byte) int32
	upload        func(dst uintptr, src unsafe.Pointer, bytes uint64, pin0, pin1 unsafe.Pointer, pinBytes uint64, s uintptr, e *byte) int32
	download      func(dst unsafe.Pointer, src uintptr, bytes uint64, s uintptr, e *byte) int32
	h2dAsync      func(dst uintptr, src unsafe.Pointer, bytes uint64, s uintptr, e *byte) int32
	domainTables  func(curve int32, tw, twinv, gn, ginvn uintptr, logn int32, consts *proofdata.Scalar, s uintptr, e *byte) int32
	computeH      func(curve int32, a, b, c uintptr, logn int32, tw, twinv, gn, ginvn uintptr, conv int32, zinv *proofdata.Scalar, s, side0, side1 uintptr, e *byte) int32
	benchNTT      func(curve int32, x uintptr, logn int32, tw uintptr, reps int32, ms *float32, s uintptr, e *byte) int32
	msm           func(a *zkMSMArgs, out unsafe.Pointer, c, nw *int32, s uintptr, e *byte) int32
	onesG1        onesFn
	onesG2        onesFn

	msmTableLayout func(ctx uintptr, curve int32, nbase uint64, g2 int32, c, nw *int32, e *byte) int32
	msmScratch     func(ctx uintptr, curve int32, n uint64, g2 int32, out *uint64, e *byte) int32
	precomputeG1   precomputeFn
	precomputeG2   precomputeFn

	fixedBase func(curve, g2, c int32, base, scalars unsafe.Pointer, n uint64, out unsafe.Pointer, s uintptr, e *byte) int32 // ABI 11
}

type onesFn func(curve int32, bases, bitmap uintptr, n uint64, out unsafe.Pointer, s uintptr, e *byte) int32

// cudaLib is one loaded library. The loader keeps a library mapped once
// loaded (zkpipe never unloads it: the CUDA runtime inside does not expect
// to be torn down and set up again), so a process that opens and closes the
// backend many times loads and checks each library once.
type cudaLib struct {
	path string
	fn   cudaFns
	sym  func(name string) (uintptr, error) // for the stand-in's test controls
}

var (
	libsMu sync.Mutex
	libs   = map[string]*cudaLib{}
)

// loadCUDALibrary loads path once per process and checks its ABI; ldPath
// is the process's LD_LIBRARY_PATH (preloadDeps), as the first load of a
// path gives it.
func loadCUDALibrary(path, ldPath string) (*cudaLib, error) {
	libsMu.Lock()
	defer libsMu.Unlock()
	if l, ok := libs[path]; ok {
		return l, nil
	}
	if err := preloadDeps(path, ldPath, map[string]bool{}, true); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoCUDA, err)
	}
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("%w: load %s: %v", ErrNoCUDA, path, err)
	}
	l := &cudaLib{path: path, sym: func(name string) (uintptr, error) { return purego.Dlsym(h, name) }}
	if err := checkABI(l); err != nil {
		return nil, err // the handle stays open: dlclose would run the stale library's destructors
	}
	f := &l.fn
	for _, s := range []struct {
		name string
		ptr  any
	}{
		{"zk_default_config", &f.defaultConfig}, {"zk_init", &f.init}, {"zk_fini", &f.fini},
		{"zk_device_count", &f.deviceCount}, {"zk_mem_info", &f.memInfo},
		{"zk_host_alloc", &f.hostAlloc}, {"zk_host_free", &f.hostFree},
		{"zk_stream_create", &f.streamCreate}, {"zk_stream_destroy", &f.streamDstr}, {"zk_stream_sync", &f.streamSync},
		{"zk_dev_alloc", &f.devAlloc}, {"zk_dev_free", &f.devFree}, {"zk_memset", &f.memset},
		{"zk_upload", &f.upload}, {"zk_download", &f.download}, {"zk_h2d_async", &f.h2dAsync},
		{"zk_domain_tables", &f.domainTables}, {"zk_compute_h", &f.computeH}, {"zk_bench_ntt", &f.benchNTT},
		{"zk_msm", &f.msm}, {"zk_ones_g1", &f.onesG1}, {"zk_ones_g2", &f.onesG2},
		{"zk_msm_table_layout", &f.msmTableLayout}, {"zk_msm_scratch_bytes", &f.msmScratch},
		{"zk_precompute_g1", &f.precomputeG1}, {"zk_precompute_g2", &f.precomputeG2},
		{"zk_fixed_base", &f.fixedBase},
	} {
		sym, err := l.sym(s.name)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: ABI version %d but no %s: %v", ErrNoCUDA, path, cudaABIVersion, s.name, err)
		}
		purego.RegisterFunc(s.ptr, sym)
	}
	libs[path] = l
	return l, nil
}

// checkABI asks the library for its ABI version and shared sizes before any
// other entry point is called: a stale or foreign library is refused here
// rather than left to corrupt memory.
func checkABI(l *cudaLib) error {
	rebuild := "rebuild it with gpu/cuda/build.sh from this zkpipe's source"
	sym, err := l.sym("zk_abi_version")
	if err != nil {
		return fmt.Errorf("%w: %s has no zk_abi_version: built before ABI version %d, or not zkpipe's; %s",
			ErrNoCUDA, l.path, cudaABIVersion, rebuild)
	}
	var abiVersion func(out unsafe.Pointer) uint32
	purego.RegisterFunc(&abiVersion, sym)
	// Room for a larger zk_abi than ours, so that a newer library cannot
	// write past the buffer.
	var buf [64]uint32
	v := abiVersion(unsafe.Pointer(&buf[0]))
	got := *(*zkABI)(unsafe.Pointer(&buf[0]))
	if v != cudaABIVersion {
		return fmt.Errorf("%w: %s has ABI version %d, this zkpipe needs %d; %s", ErrNoCUDA, l.path, v, cudaABIVersion, rebuild)
	}
	if got != wantABI {
		return fmt.Errorf("%w: %s has ABI version %d but other struct sizes (library %+v, zkpipe %+v); %s",
			ErrNoCUDA, l.path, v, got, wantABI, rebuild)
	}
	return nil
}

// cerr is one call's error buffer (ZK_ERR_BYTES).
type cerr [zkErrBytes]byte

func (e *cerr) p() *byte { return &e[0] }

// err turns a C status into an error carrying the call's own message. A
// sticky CUDA error, after which the device's context is unusable, wraps
// ErrDeviceLost.
func (e *cerr) err(op string, rc int32) error {
	if rc == 0 {
		return nil
	}
	if stickyCUDAErrors[rc] {
		return fmt.Errorf("cuda %s: %s (code %d): %w", op, cString(e[:]), rc, ErrDeviceLost)
	}
	return fmt.Errorf("cuda %s: %s (code %d)", op, cString(e[:]), rc)
}

// stickyCUDAErrors are the cudaError_t codes after which a device cannot be
// used again by this process: the lost device and corrupted-context errors
// (CUDA runtime API, enum cudaError).
var stickyCUDAErrors = map[int32]bool{
	46:  true, // cudaErrorDevicesUnavailable
	100: true, // cudaErrorNoDevice
	214: true, // cudaErrorECCUncorrectable
	700: true, // cudaErrorIllegalAddress
	710: true, // cudaErrorAssert
	714: true, // cudaErrorHardwareStackError
	715: true, // cudaErrorIllegalInstruction
	716: true, // cudaErrorMisalignedAddress
	717: true, // cudaErrorInvalidAddressSpace
	718: true, // cudaErrorInvalidPc
	719: true, // cudaErrorLaunchFailure
}

func cString(b []byte) string {
	for i, x := range b {
		if x == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
