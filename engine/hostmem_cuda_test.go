package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/zkpipe/zkpipe/internal/keysink"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// cudaLib is the CUDA library the tests run on (the host stand-in in CI),
// or a skip.
func cudaLib(t *testing.T) string {
	t.Helper()
	lib := os.Getenv("ZKPIPE_CUDA_LIB")
	if lib == "" {
		t.Skip("SKIPPED: ZKPIPE_CUDA_LIB names no CUDA library (scripts/test runs this over the host stand-in)")
	}
	return lib
}

func cudaOptions(lib, bg2, out string) Options {
	return Options{Device: "cuda", BG2Device: bg2, CUDA: CUDAOptions{Lib: lib, PinnedMiB: 16},
		Out: out, Log: io.Discard, Memory: MemoryOptions{Budget: "off"}}
}

// runVerified runs n generated jobs on e and checks every proof with
// gnark's verifier.
func runVerified(t *testing.T, e *Engine, c *stages.Circuit, prefix string, n int) []stream.Result {
	t.Helper()
	var lines []stream.Result
	if err := e.Run(context.Background(), generated(prefix, n), func(r stream.Result) error {
		lines = append(lines, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(lines) != n {
		t.Fatalf("%d result lines for %d jobs", len(lines), n)
	}
	vk := c.Source.(*gnarksrc.Source).VerifyingKey()
	for _, r := range lines {
		if r.Error != "" {
			t.Fatalf("job %s: %s", r.ID, r.Error)
		}
		if err := gnarksrc.VerifyFiles(vk, r.Proof, r.Public); err != nil {
			t.Fatalf("job %s: gnark rejects the proof: %v", r.ID, err)
		}
	}
	return lines
}

// Once a key is resident on the GPU, the host keeps none of its bases nor
// its domain's tables (neither the circuit's key nor gnark's ProvingKey,
// which aliased them), but for B₂ when B_G2 runs on the CPU; the
// governor counts the key at what the host still holds; and the proofs,
// on both B_G2 devices, verify with gnark. On the CPU backend the key
// stays whole.
func TestCUDAKeyLeavesNoHostCopy(t *testing.T) {
	lib := cudaLib(t)
	for _, bg2 := range []string{"cuda", "cpu"} {
		t.Run("bg2="+bg2, func(t *testing.T) {
			c := loadChain(t)
			whole := c.Key.HostBytes()
			e, err := New(context.Background(), cudaOptions(lib, bg2, t.TempDir()), c)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			want := proofdata.AllParts
			if bg2 == "cpu" {
				want &^= proofdata.PartB2
			}
			if got := c.Key.Dropped(); got != want {
				t.Errorf("dropped parts %06b, want %06b", got, want)
			}
			pk := c.Source.(*gnarksrc.Source).ProvingKey().(*groth16bn254.ProvingKey)
			if pk.G1.A != nil || pk.G1.B != nil || pk.G1.K != nil || pk.G1.Z != nil {
				t.Errorf("gnark's ProvingKey still holds its G1 bases (%d A, %d B, %d K, %d Z)", len(pk.G1.A), len(pk.G1.B), len(pk.G1.K), len(pk.G1.Z))
			}
			if keepB2 := bg2 == "cpu"; (pk.G2.B != nil) != keepB2 {
				t.Errorf("gnark's ProvingKey holds %d B₂ bases; with B_G2 on %s it should keep them: %v", len(pk.G2.B), bg2, keepB2)
			}
			if _, err := pk.Domain.CosetTable(); err == nil {
				t.Errorf("gnark's ProvingKey's domain still holds its tables")
			}
			// what the governor counts for it
			sel := int64(len(c.Sel.A)+len(c.Sel.B)+len(c.Sel.K)) * 4
			wantBytes := sel
			if bg2 == "cpu" {
				wantBytes += int64(c.Key.Size.B2) * int64(c.Key.Curve.Params().G2AffineBytes)
			}
			if got := keyBytes(c); got != wantBytes {
				t.Errorf("the governor counts %d bytes for the resident key, want %d (whole: %d)", got, wantBytes, whole+sel)
			}
			runVerified(t, e, c, "j", 4)
			// a circuit added later is charged at its host size too
			c2 := loadChain(t)
			c2.Name = "chain2"
			before := e.gov.Stats().Charged
			if err := e.AddCircuit(c2); err != nil {
				t.Fatal(err)
			}
			// and its R1CS beside it (stages.Source.HostBytes)
			if got, want := e.gov.Stats().Charged-before, wantBytes+c2.Source.HostBytes(); got != want || want == wantBytes {
				t.Errorf("AddCircuit charged %d bytes, want %d: the key's %d and the R1CS's %d (whole key: %d)", got, want, wantBytes, want-wantBytes, whole+sel)
			}
		})
	}
	t.Run("cpu", func(t *testing.T) {
		c := loadChain(t)
		e, err := New(context.Background(), cpuOptions(t.TempDir()), c)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		if got := c.Key.Dropped(); got != 0 {
			t.Errorf("the CPU backend dropped parts %06b of the key it reads", got)
		}
		runVerified(t, e, c, "j", 2)
	})
}

// KeepHostKeys keeps the key whole: a second engine on the CPU proves with
// the same circuit after the GPU's.
func TestCUDAKeepHostKeys(t *testing.T) {
	lib := cudaLib(t)
	c := loadChain(t)
	o := cudaOptions(lib, "", t.TempDir())
	o.Memory.KeepHostKeys = true
	e, err := New(context.Background(), o, c)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Key.Dropped(); got != 0 {
		t.Errorf("KeepHostKeys: dropped parts %06b", got)
	}
	runVerified(t, e, c, "g", 2)
	e.Close()
	// without it, the same circuit on the CPU is refused clearly
	c2 := loadChain(t)
	e2, err := New(context.Background(), cudaOptions(lib, "", t.TempDir()), c2)
	if err != nil {
		t.Fatal(err)
	}
	e2.Close()
	c2.Resident = nil
	if _, err := New(context.Background(), cpuOptions(t.TempDir()), c2); err == nil {
		t.Fatal("a circuit whose host bases were dropped loaded on the CPU backend")
	} else if !containsAll(err.Error(), "released", "A, B1, K, Z, B2, domain") {
		t.Errorf("unclear refusal: %v", err)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}

// bigChainDir is a mulchain of 2^13 constraints: large enough that a
// job's buffers stand out of the Go heap's noise, small enough for the
// stand-in.
var bigChainDir = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "zkpipe-engine-test-")
	if err != nil {
		return "", err
	}
	dir = filepath.Join(dir, "chain13")
	_, err = gnarksrc.Setup("mulchain", 1<<13, dir)
	return dir, err
})

// jobState bounds what a small job holds outside its footprint (see
// TestCUDAFootprintIsTheHostsShare). At 2^13 a job alone, with no budget
// and after two warm-up proofs, held 1.31 MiB at its peak against a
// footprint of 1.27 MiB; but under a budget that admits one job at a
// time the Go heap held about 1 MiB more than one footprint, not traced
// yet (a job waiting for admission holds only its parse's state). A fixed
// size, which 2^24's GiBs make nothing, but here as large as a job.
const jobState = 1 << 20

// liveHeap samples the Go heap's live bytes after a collection, less what
// the pools keep idle (the governor counts those as reusable, promised to
// no job), every 2 ms, and keeps the largest: what the jobs hold on the
// host (the stand-in's device memory is C memory, outside it).
type liveHeap struct {
	peak atomic.Int64
	stop chan struct{}
	done chan struct{}
}

// heapObjects is the Go heap's objects and goroutine stacks (where
// gnark-crypto's MSMs keep their buckets).
func heapObjects() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64() + s[1].Value.Uint64())
}

func liveNow() int64 {
	runtime.GC()
	return heapObjects() - mem.IdleBytes()
}

func sampleLiveHeap() *liveHeap {
	h := &liveHeap{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		for {
			select {
			case <-h.stop:
				return
			default:
			}
			if v := liveNow(); v > h.peak.Load() {
				h.peak.Store(v)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	return h
}

func (h *liveHeap) end() int64 {
	close(h.stop)
	<-h.done
	return h.peak.Load()
}

// On the GPU a job reserves what it holds on the host (W, the flags and
// a, b, c until pin/transfer, B's query with B_G2 on the CPU), less than
// the same circuit's job on the CPU backend; a stream under a budget of a
// few such jobs stays within it, what the governor reserved at its peak
// is at least what the jobs held on the host (the Go heap's live bytes
// beyond the engine's at rest) and not three times more, and every proof
// verifies (with B_G2 on the CPU the reservation's G2 MSM scratch is a
// bound, not checked against the measure).
func TestCUDAFootprintIsTheHostsShare(t *testing.T) {
	lib := cudaLib(t)
	if testing.Short() {
		t.Skip("2^13 constraints on the stand-in: skipped in -short")
	}
	dir, err := bigChainDir()
	if err != nil {
		t.Fatal(err)
	}
	load := func() *stages.Circuit {
		c, err := gnarksrc.LoadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	cpuFoot := load().Footprint() // no backend yet: the CPU's
	for _, bg2 := range []string{"cuda", "cpu"} {
		t.Run("bg2="+bg2, func(t *testing.T) {
			o := cudaOptions(lib, bg2, t.TempDir())
			o.CUDA.PinnedMiB, o.CUDA.Lanes = 1, 2 // 4 MiB: within a quarter of a small budget
			var e *Engine
			var c *stages.Circuit
			for try := 0; ; try++ {
				c = load()
				runtime.GC()
				if e, err = New(context.Background(), o, c); err != nil {
					t.Fatal(err)
				}
				m, fp := e.gov.Stats(), c.Footprint()
				if o.Memory.Budget != "off" {
					if fits := (m.Budget - m.Charged) / fp; fits >= 2 && fits <= 4 {
						break
					}
				}
				// what the engine holds at rest follows the process's RSS:
				// measure it, then open again with room for about 3 jobs
				if e.Close(); try == 10 {
					t.Fatalf("no budget leaves room for 2 to 4 jobs: %+v", m)
				}
				o.Memory.Budget = fmt.Sprint(m.Charged + 3*fp + fp/2)
			}
			defer e.Close()
			fp := c.Footprint()
			if fp >= cpuFoot {
				t.Fatalf("a job reserves %s on CUDA, %s on the CPU backend", mem.FormatBytes(fp), mem.FormatBytes(cpuFoot))
			}
			h := sampleLiveHeap()
			lines := runVerified(t, e, c, "j", 6)
			peak := h.end()
			// at rest after the stream: what it allocated for good (the
			// solver's and the libraries' lazily built state, the pools'
			// idle buffers aside) is the engine's, not a job's
			base := liveNow()
			held := peak - base
			m := e.gov.Stats()
			t.Logf("job footprint %s (CPU backend %s); peak reserved %s by %d jobs at once, the Go heap held %s beyond its %s at rest; budget %s, resident %s, peak RSS %s, %d waited",
				mem.FormatBytes(fp), mem.FormatBytes(cpuFoot), mem.FormatBytes(m.PeakReserved), m.PeakAdmitted, mem.FormatBytes(held), mem.FormatBytes(base),
				mem.FormatBytes(m.Budget), mem.FormatBytes(m.Charged), mem.FormatBytes(m.PeakRSS), m.Waits)
			for _, l := range lines {
				if l.ReservedBytes != fp {
					t.Errorf("job %s reserved %d, footprint %d", l.ID, l.ReservedBytes, fp)
				}
			}
			if m.Charged+m.PeakReserved > m.Budget {
				t.Errorf("admitted %s over resident %s: past the budget %s", mem.FormatBytes(m.PeakReserved), mem.FormatBytes(m.Charged), mem.FormatBytes(m.Budget))
			}
			// What the footprint does not model, every job in flight holds
			// beside it (jobState): its parsed witness, the source's state,
			// the partial results and the proof.
			slack := int64(m.PeakAdmitted+2) * jobState
			if m.PeakReserved+slack < held {
				t.Errorf("peak reserved %s (+%s for %d jobs' own state), but the jobs held %s on the host",
					mem.FormatBytes(m.PeakReserved), mem.FormatBytes(slack), m.PeakAdmitted, mem.FormatBytes(held))
			}
			// With B_G2 on the CPU the reservation holds the bound of its G2
			// MSM's bucket stacks (every window's at once, stages' msmScratch),
			// which two cores never reach: the 3× bound is the GPU's.
			if bg2 == "cuda" && m.PeakReserved > 3*held {
				t.Errorf("peak reserved %s, over 3× the %s the jobs held on the host", mem.FormatBytes(m.PeakReserved), mem.FormatBytes(held))
			}
		})
	}
}

// The CUDA backend's pinned staging buffers are charged to the pinned
// budget when the engine opens (lanes × 2 × their size), and a budget that
// cannot hold them is refused then, naming both sizes.
func TestCUDAPinnedStagingWithinItsBudget(t *testing.T) {
	lib := cudaLib(t)
	o := cudaOptions(lib, "", t.TempDir())
	o.CUDA.PinnedMiB, o.CUDA.Lanes = 1, 4
	o.Memory.Budget, o.Memory.Pinned = "4GiB", "8MiB"
	e, err := New(context.Background(), o, loadChain(t))
	if err != nil {
		t.Fatal(err)
	}
	if got := e.gov.Stats().Pinned; got != 8<<20 {
		t.Errorf("pinned %s charged, want the 8 MiB of 4 lanes' two 1 MiB buffers", mem.FormatBytes(got))
	}
	runVerified(t, e, e.Circuits()[0], "p", 2)
	if got := e.gov.Stats().Pinned; got != 8<<20 {
		t.Errorf("after a stream %s pinned, want 8 MiB: staging is allocated once", mem.FormatBytes(got))
	}
	e.Close()
	o.Memory.Pinned = "7MiB"
	if _, err := New(context.Background(), o, loadChain(t)); err == nil || !containsAll(err.Error(), "8.00 MiB", "7.00 MiB", "pinned budget") {
		t.Errorf("8 MiB of staging under a 7 MiB pinned budget: %v", err)
	}
}

// A key file's bases go from the file to the GPU a chunk at a time
// (Key.Stream): loading a circuit onto the GPU never reads them into the
// host copy (Key.Need's fetch, which the test makes fail), nor the domain's
// tables; and the streamed key proves, every proof verified by gnark.
// (gnarksrc's TestDeferredStreamHoldsNoWholePart measures what a stream
// allocates.)
func TestCUDALoadStreamsTheKeyFile(t *testing.T) {
	lib := cudaLib(t)
	for _, bg2 := range []string{"cuda", "cpu"} {
		t.Run("bg2="+bg2, func(t *testing.T) {
			c := loadChain(t)
			watch := keysink.WatchKey(c.Key)
			e, err := New(context.Background(), cudaOptions(lib, bg2, t.TempDir()), c)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			bases := proofdata.PartA | proofdata.PartB1 | proofdata.PartK | proofdata.PartZ | proofdata.PartB2
			// with B_G2 on the CPU the host reads B₂ (fetched), the GPU the rest
			wantFetched := proofdata.KeyParts(0)
			if bg2 == "cpu" {
				wantFetched = proofdata.PartB2
			}
			if watch.Fetched() != wantFetched || watch.Streamed() != bases&^wantFetched {
				t.Errorf("fetched parts %06b and streamed %06b, want %06b and %06b", watch.Fetched(), watch.Streamed(), wantFetched, bases&^wantFetched)
			}
			runVerified(t, e, c, "s", 2)
		})
	}
}
