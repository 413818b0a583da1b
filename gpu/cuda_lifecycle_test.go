package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/proofdata"
)

// These tests open backends of their own; those that need the host
// stand-in's controls (failures on request, device byte counts) skip on the
// real library.

func cudaLib(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("ZKPIPE_CUDA_LIB"); p != "" {
		return p
	}
	p, _ := filepath.Abs("cuda/libzkpipe_cuda.so")
	return p
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func openOwn(t *testing.T, opts ...gpu.CUDAOption) *gpu.CUDA {
	t.Helper()
	c, err := gpu.OpenCUDA(cudaLib(t), append([]gpu.CUDAOption{gpu.WithPinnedBytes(1 << 20), gpu.WithTransferLanes(2)}, opts...)...)
	if err != nil {
		t.Skipf("no CUDA backend: %v", err)
	}
	return c
}

func standIn(t *testing.T, c *gpu.CUDA) *gpu.HostStandIn {
	t.Helper()
	h := c.HostStandIn()
	if h == nil {
		c.Close()
		t.Skip("needs the host stand-in (gpu/cuda/hostlib.cpp)")
	}
	return h
}

// prove runs every device operation of one proof on f.
func prove(ctx context.Context, c *gpu.CUDA, res proofdata.Resident, f fixture) error {
	s, err := c.Transfer(ctx, res, f.vecs())
	if err != nil {
		return err
	}
	defer c.Free(s)
	if _, err := c.BatchAddG1(ctx, s); err != nil {
		return err
	}
	if _, err := c.TailMSMG1(ctx, s); err != nil {
		return err
	}
	if _, err := c.BatchAddG2(ctx, s); err != nil {
		return err
	}
	if _, err := c.MSMG2(ctx, s); err != nil {
		return err
	}
	_, err = c.MSMH(ctx, s)
	return err
}

func TestFindCUDALibraryNeverTheWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{gpu.CUDALibraryName, filepath.Join("gpu", "cuda", gpu.CUDALibraryName)} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), []byte("planted"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	// Beside the executable when it is there (the test binary's directory,
	// when a device run carries the library next to it), else the first
	// system directory holding it, else none: never the planted copies,
	// never a bare name for the loader's search.
	want := ""
	for _, dir := range append([]string{exeDir(t)}, gpu.CUDASystemDirs...) {
		if p := filepath.Join(dir, gpu.CUDALibraryName); fileExists(p) {
			want = p
			break
		}
	}
	p, err := gpu.FindCUDALibrary("")
	switch {
	case want == "" && !errors.Is(err, gpu.ErrNoCUDA):
		t.Fatalf("FindCUDALibrary(\"\") = %q, %v: want ErrNoCUDA, no library being anywhere zkpipe looks", p, err)
	case want != "" && (err != nil || p != want):
		t.Fatalf("FindCUDALibrary(\"\") = %q, %v, want %q", p, err, want)
	case p != "" && !filepath.IsAbs(p):
		t.Fatalf("FindCUDALibrary(\"\") = %q: not an absolute path", p)
	}
	// an explicit flag is taken, made absolute
	p, err = gpu.FindCUDALibrary(gpu.CUDALibraryName)
	if err != nil || p != filepath.Join(dir, gpu.CUDALibraryName) {
		t.Fatalf("FindCUDALibrary(flag) = %q, %v", p, err)
	}
	if _, err := gpu.FindCUDALibrary(filepath.Join(dir, "nope.so")); !errors.Is(err, gpu.ErrNoCUDA) {
		t.Fatalf("missing --cuda-lib: %v, want ErrNoCUDA", err)
	}
}

// TestCUDAABIRefusesStaleLibraries builds three impostors with g++ (skipped
// without it): one from before the handshake, one of another ABI version, one
// whose struct sizes differ. Each is refused with a message, before any
// other entry point runs.
func TestCUDAABIRefusesStaleLibraries(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++")
	}
	dir := t.TempDir()
	for _, c := range []struct{ name, src, want string }{
		{"old", `extern "C" int zk_init(){return 0;}`, "no zk_abi_version"},
		{"v1", `#include <stdint.h>
extern "C" uint32_t zk_abi_version(uint32_t *o){ return 1; }`, fmt.Sprintf("ABI version 1, this zkpipe needs %d", gpu.CUDAABIVersion)},
		{"sizes", fmt.Sprintf(`#include <stdint.h>
extern "C" uint32_t zk_abi_version(uint32_t *o){ uint32_t v[10]={40,32,64,128,96,256,512,64,8,8}; for(int i=0;i<10;i++)o[i]=v[i]; return %d; }`, gpu.CUDAABIVersion), "other struct sizes"},
	} {
		src := filepath.Join(dir, c.name+".cpp")
		lib := filepath.Join(dir, "lib"+c.name+".so")
		os.WriteFile(src, []byte(c.src), 0o644)
		if out, err := exec.Command(gxx, "-shared", "-fPIC", src, "-o", lib).CombinedOutput(); err != nil {
			t.Fatalf("g++: %v\n%s", err, out)
		}
		_, err := gpu.OpenCUDA(lib)
		if err == nil || !errors.Is(err, gpu.ErrNoCUDA) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: OpenCUDA = %v, want ErrNoCUDA with %q", c.name, err, c.want)
		}
	}
}

// TestCUDAOpenUseCloseManyTimes opens a backend, loads a circuit, proves and
// closes, 20 times: device memory returns to where it was after each Close,
// and host memory stays flat.
func TestCUDAOpenUseCloseManyTimes(t *testing.T) {
	c0 := openOwn(t)
	h := standIn(t, c0)
	c0.Close()
	base, baseBytes := h.Live(), h.Allocated()
	ctx := context.Background()
	f := newFixture(rand.New(rand.NewPCG(9, 9)), 300, mixed, proofdata.HDivideByZ, true)
	var heap5, rss5 int64
	for i := range 20 {
		c := openOwn(t)
		res, err := c.Load(f.key)
		if err != nil {
			t.Fatal(err)
		}
		if err := prove(ctx, c, res, f); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 { // odd rounds leave the resident for Close to free
			if err := res.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if live, b := h.Live(), h.Allocated(); live != base || b != baseBytes {
			t.Fatalf("round %d: %d device allocations (%d bytes) live after Close, want %d (%d)", i, live, b, base, baseBytes)
		}
		if i == 4 || i == 19 {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			heap, rss := int64(ms.HeapAlloc), mem.ReadUsage().RSS
			if i == 4 {
				heap5, rss5 = heap, rss
				continue
			}
			// 15 more rounds of 2 × 2 MiB of pinned buffers, key and vectors:
			// a leak of any of them would show many MiB.
			if heap-heap5 > 2<<20 || rss-rss5 > 16<<20 {
				t.Fatalf("host memory grew over 15 rounds: heap %s → %s, RSS %s → %s",
					mem.FormatBytes(heap5), mem.FormatBytes(heap), mem.FormatBytes(rss5), mem.FormatBytes(rss))
			}
		}
	}
}

// TestCUDACloseWaitsForWork closes a backend while uploads and kernels are in
// flight (run it under -race): Close waits for them, takes the lanes back,
// and everything after fails with ErrClosed.
func TestCUDACloseWaitsForWork(t *testing.T) {
	c := openOwn(t, gpu.WithTransferLanes(1))
	h := c.HostStandIn()
	var base int64
	if h != nil {
		base = h.Live()
	}
	ctx := context.Background()
	f := newFixture(rand.New(rand.NewPCG(9, 10)), 1000, mixed, proofdata.HDivideByZ, false)
	res, err := c.Load(f.key)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	started := make(chan struct{}, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started <- struct{}{}
			for {
				if err := prove(ctx, c, res, f); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range 8 {
		<-started
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, gpu.ErrClosed) {
			t.Errorf("an operation racing Close failed with %v, want ErrClosed", err)
		}
	}
	if _, err := c.Transfer(ctx, res, f.vecs()); !errors.Is(err, gpu.ErrClosed) {
		t.Errorf("Transfer after Close: %v, want ErrClosed", err)
	}
	if h != nil && h.Live() != base {
		t.Errorf("%d device allocations live after Close, want %d", h.Live(), base)
	}
}

// TestCUDAFailuresFreeEverything makes the stand-in fail the nth device
// allocation, kernel or copy of a load-and-prove, for every n until one
// runs clean: each failure reaches Go with the library's own message, and
// nothing stays allocated on the device.
func TestCUDAFailuresFreeEverything(t *testing.T) {
	c := openOwn(t)
	defer c.Close()
	h := standIn(t, c)
	ctx := context.Background()
	f := newFixture(rand.New(rand.NewPCG(9, 11)), 100, mixed, proofdata.HDivideByZ, true)
	base := h.Live()
	for _, what := range []string{"cudaMalloc", "kernel", "copy"} {
		failed := 0
		for nth := int64(1); ; nth++ {
			if h.Fail(what, nth) != 0 {
				t.Fatalf("zk_host_fail(%s) refused", what)
			}
			res, err := c.Load(f.key)
			if err == nil {
				err = prove(ctx, c, res, f)
				if cerr := res.Close(); cerr != nil {
					t.Fatal(cerr)
				}
			}
			h.Fail(what, 0)
			if live := h.Live(); live != base {
				t.Fatalf("%s #%d failed (%v): %d device allocations left, want %d", what, nth, err, live, base)
			}
			if err == nil {
				break
			}
			if !strings.Contains(err.Error(), what+": injected failure") {
				t.Fatalf("%s #%d: error %q does not carry the library's message", what, nth, err)
			}
			failed++
		}
		if failed == 0 {
			t.Errorf("%s: no failure was injected", what)
		}
		t.Logf("%s: %d failure points, each cleaned up", what, failed)
	}
}

// TestCUDAConcurrentFailuresKeepTheirMessages fails allocations in several
// goroutines at once: each error carries a message of its own call (a
// single buffer would leave some empty or mixed).
func TestCUDAConcurrentFailuresKeepTheirMessages(t *testing.T) {
	c := openOwn(t)
	defer c.Close()
	h := standIn(t, c)
	h.SetMemory(1 << 20) // 1 MiB of "device": the keys below do not fit
	defer h.SetMemory(0)
	f := newFixture(rand.New(rand.NewPCG(9, 12)), 3000, mixed, proofdata.HDivideByZ, false)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.Load(f.key)
			if err == nil {
				res.Close()
				t.Error("a load larger than the device succeeded")
				return
			}
			if !strings.Contains(err.Error(), "out of memory") {
				t.Errorf("error without its own message: %v", err)
			}
		}()
	}
	wg.Wait()
}

// TestCUDADeviceMemory: the backend reports the device's free memory, and
// its estimate of a job's device footprint bounds what a job really takes.
func TestCUDADeviceMemory(t *testing.T) {
	c := openOwn(t)
	defer c.Close()
	h := standIn(t, c)
	h.SetMemory(1 << 30)
	defer h.SetMemory(0)
	free0, total := c.DeviceMemory()
	if total != 1<<30 || free0 > total {
		t.Fatalf("DeviceMemory = %d, %d", free0, total)
	}
	f := newFixture(rand.New(rand.NewPCG(9, 13)), 3000, dense, proofdata.HDivideByZ, false)
	res, err := c.Load(f.key)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	free1, _ := c.DeviceMemory()
	if got, want := free0-free1, c.ResidentBytes(f.key); got != want {
		t.Errorf("Load took %d device bytes, ResidentBytes says %d", got, want)
	}
	// A whole job (vectors and every operation's scratch) at its peak,
	// against JobBytes, which the governor reserves: never more, and not
	// wastefully less (at least half of the estimate is used).
	for _, size := range []int{100, 3000, 20000} {
		f := newFixture(rand.New(rand.NewPCG(9, uint64(size))), size, dense, proofdata.HDivideByZ, false)
		res, err := c.Load(f.key)
		if err != nil {
			t.Fatal(err)
		}
		h.Peak(1) // a new period from the bytes held now (it returns the last period's peak)
		held := h.Allocated()
		if err := prove(context.Background(), c, res, f); err != nil {
			t.Fatal(err)
		}
		peak, job := int64(h.Peak(0)-held), c.JobBytes(f.key, 0)
		t.Logf("n=%d: a job's device peak %s, JobBytes %s (%.2f×)", size, mem.FormatBytes(peak), mem.FormatBytes(job), float64(peak)/float64(job))
		if peak > job || peak < job/2 {
			t.Errorf("n=%d: a job took %d device bytes at its peak; JobBytes %d is not within [peak, 2·peak]", size, peak, job)
		}
		res.Close()
	}
}
