package mem_test

import (
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/internal/racedetect"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// verify checks a result's proof with gnark's own groth16.Verify.
func verify(vk groth16.VerifyingKey, r stream.Result) error {
	return gnarksrc.VerifyFiles(vk, r.Proof, r.Public)
}

func jobs(circuit string, ids ...string) []*stages.Job {
	var out []*stages.Job
	for i, id := range ids {
		out = append(out, &stages.Job{Request: stream.Request{ID: id, Circuit: circuit, Generate: &stream.Generate{Seed: int64(i + 1)}}})
	}
	return out
}

// noRSS turns the measured test off, so that only the promised one decides:
// the test binary's own RSS is far above a budget of a few small jobs.
func noRSS() mem.Usage { return mem.Usage{} }

func TestBudgetOfOneJobAdmitsOneAtATime(t *testing.T) {
	keys := provertest.Setup(t, "mulchain", 300)
	circ := keys.Circuit(t, "mulchain")
	foot := circ.Footprint()
	g := mem.NewGovernor(mem.Config{Budget: foot * 3 / 2, Measure: noRSS})
	cfg := provertest.Config(t.TempDir(), 3, 2) // three workers a stage: room for three jobs without the governor
	cfg.Governor = g
	js := jobs("mulchain", "a", "b", "c", "d", "e", "f")
	res := provertest.Run(t, cfg, []*stages.Circuit{circ}, js, 2*time.Minute)

	if len(res) != len(js) {
		t.Fatalf("%d results for %d jobs", len(res), len(js))
	}
	for _, r := range res {
		if r.Error != "" {
			t.Fatalf("job %s: %s", r.ID, r.Error)
		}
		if err := verify(keys.VK, r); err != nil {
			t.Fatalf("job %s: gnark rejects the proof: %v", r.ID, err)
		}
		if r.ReservedBytes != foot {
			t.Errorf("job %s: reserved %d, footprint %d", r.ID, r.ReservedBytes, foot)
		}
	}
	s := g.Stats()
	t.Logf("footprint %s, budget %s: %+v", mem.FormatBytes(foot), mem.FormatBytes(g.Budget()), s)
	if s.PeakAdmitted != 1 || s.PeakReserved > g.Budget() {
		t.Fatalf("%d jobs past admission at once (%s reserved) under a budget for one", s.PeakAdmitted, mem.FormatBytes(s.PeakReserved))
	}
	if s.Granted != int64(len(js)) || s.Admitted != 0 || s.Reserved != 0 || s.Forced != 0 {
		t.Fatalf("after the stream: %+v", s)
	}
	for _, j := range js {
		if j.Reservation.PeakRSS() != 0 || j.Reservation.MinorFaults() != 0 {
			t.Errorf("job %s: fake usage gave rss %d, faults %d", j.ID, j.Reservation.PeakRSS(), j.Reservation.MinorFaults())
		}
	}
}

// With the process's real RSS measured and its present size charged as
// resident, a budget for about two jobs more still admits at most two, every
// proof is valid, and each job gets its measured figures.
func TestMeasuredBudgetStream(t *testing.T) {
	keys := provertest.Setup(t, "mulchain", 300)
	circ := keys.Circuit(t, "mulchain")
	foot := circ.Footprint()
	base := mem.ReadUsage()
	// The Go limit follows the budget, as the zkpipe command has it.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	g := mem.NewGovernor(mem.Config{Budget: base.RSS + 2*foot + foot/2, GoLimit: func(l int64) { debug.SetMemoryLimit(l) }})
	resident := g.Charge(base.RSS)
	defer resident.Close()
	cfg := provertest.Config(t.TempDir(), 3, 2)
	cfg.Governor = g
	js := jobs("mulchain", "a", "b", "c", "d", "e", "f")
	faults0 := mem.ReadUsage().MinorFaults
	res := provertest.Run(t, cfg, []*stages.Circuit{circ}, js, 2*time.Minute)
	faults := mem.ReadUsage().MinorFaults - faults0
	for _, r := range res {
		if r.Error != "" {
			t.Fatalf("job %s: %s", r.ID, r.Error)
		}
		if err := verify(keys.VK, r); err != nil {
			t.Fatalf("job %s: gnark rejects the proof: %v", r.ID, err)
		}
	}
	s := g.Stats()
	t.Logf("%+v", s)
	if len(res) != len(js) || s.PeakAdmitted > 2 || s.Granted != int64(len(js)) {
		t.Fatalf("%d results, stats %+v", len(res), s)
	}
	// Each job's faults are its share of the process's while it was in
	// flight: the shares add up to no more than the process's faults over
	// the stream (each rounded, so give each half a fault).
	var sum int64
	for _, j := range js {
		if j.Reservation.PeakRSS() <= 0 || j.Reservation.PeakRSS() > s.PeakRSS {
			t.Errorf("job %s: peak RSS %d outside (0, the governor's peak %d]", j.ID, j.Reservation.PeakRSS(), s.PeakRSS)
		}
		sum += j.Reservation.MinorFaults()
	}
	if sum > faults+int64(len(js)) {
		t.Errorf("jobs' faults add up to %d, more than the process's %d over the stream", sum, faults)
	}
	t.Logf("faults: jobs %d, process %d", sum, faults)
}

func TestJobLargerThanBudgetFailsFast(t *testing.T) {
	small := provertest.Setup(t, "mulchain", 300).Circuit(t, "small")
	bigKeys := provertest.Setup(t, "mulchain", 1500)
	big := bigKeys.Circuit(t, "big")
	smallKeys := provertest.Setup(t, "mulchain", 300)
	budget := small.Footprint() * 3 / 2
	if big.Footprint() <= budget {
		t.Fatalf("big's footprint %d fits the budget %d", big.Footprint(), budget)
	}
	g := mem.NewGovernor(mem.Config{Budget: budget, Measure: noRSS})
	cfg := provertest.Config(t.TempDir(), 2, 1)
	cfg.Governor = g
	js := jobs("small", "s1", "big1", "s2", "s3")
	js[1].Request.Circuit = "big"
	start := time.Now()
	res := provertest.Run(t, cfg, []*stages.Circuit{small, big}, js, 2*time.Minute)
	if len(res) != len(js) {
		t.Fatalf("%d results for %d jobs", len(res), len(js))
	}
	for _, r := range res {
		if r.ID == "big1" {
			want := []string{"admission", mem.FormatBytes(big.Footprint()), mem.FormatBytes(budget), "raise mem.Config.Budget"}
			for _, w := range want {
				if !strings.Contains(r.Error, w) {
					t.Errorf("big1's error %q does not say %q", r.Error, w)
				}
			}
			if r.FailedStage != stages.Synthesize {
				t.Errorf("big1 failed in %q", r.FailedStage)
			}
			i := slices.IndexFunc(r.Stages, func(s stream.StageTime) bool { return s.Stage == stages.Synthesize })
			if i < 0 || r.Stages[i].RunMS != 0 {
				t.Errorf("big1 ran synthesize: %+v", r.Stages)
			}
			continue
		}
		if r.Error != "" {
			t.Fatalf("job %s: %s", r.ID, r.Error)
		}
		if err := verify(smallKeys.VK, r); err != nil {
			t.Fatalf("job %s: gnark rejects the proof: %v", r.ID, err)
		}
	}
	if s := g.Stats(); s.Rejected != 1 || s.Granted != 3 {
		t.Fatalf("stats %+v", s)
	}
	t.Logf("stream of 4 with one rejection: %v", time.Since(start))
}

// BenchmarkFaultsPerProof proves a stream of 2^12-constraint jobs one at a
// time (a budget for one job) and reports the minor faults of the first proof
// and the median of the others. In a test binary that has just run gnark's
// setup the first proof finds a warm heap, so the drop shows best in a fresh
// zkpipe process (notes/mem.md); run with -benchtime=8x or more.
func BenchmarkFaultsPerProof(b *testing.B) {
	keys := provertest.Setup(b, "mulchain", 1<<12)
	circ := keys.Circuit(b, "mulchain")
	base := mem.ReadUsage()
	gov := mem.NewGovernor(mem.Config{Budget: base.RSS + circ.Footprint()*3/2})
	resident := gov.Charge(base.RSS) // what the test binary holds: room for one job beside it
	defer resident.Close()
	cfg := provertest.Config(b.TempDir(), 1, 0)
	cfg.Governor = gov
	var ids []string
	for i := range max(b.N, 2) {
		ids = append(ids, fmt.Sprintf("j%d", i))
	}
	js := jobs("mulchain", ids...)
	b.ResetTimer()
	res := provertest.Run(b, cfg, []*stages.Circuit{circ}, js, 10*time.Minute)
	b.StopTimer()
	var rest []int64
	for i, j := range js {
		if res[i].Error != "" {
			b.Fatalf("job %s: %s", res[i].ID, res[i].Error)
		}
		if i > 0 {
			rest = append(rest, j.Reservation.MinorFaults())
		}
	}
	slices.Sort(rest)
	b.ReportMetric(float64(js[0].Reservation.MinorFaults()), "faults-first")
	b.ReportMetric(float64(rest[len(rest)/2]), "faults-median")
	b.ReportMetric(float64(gov.Stats().PeakRSS)/(1<<20), "peak-rss-MiB")
}

// The governor's footprint estimate against what one job really takes: the
// highest RSS sampled while it runs alone (every millisecond) less the RSS
// before it, with free heap pages returned to the OS first so that the job
// has to fault in what it uses. Tolerance: the growth is between a third of
// the estimate and the estimate plus a half (Go's collector lets garbage
// reach about as much again as the live heap before it collects, and the
// estimate counts pooled buffers at their power-of-two capacity).
func TestFootprintMatchesMeasuredMemory(t *testing.T) {
	if racedetect.Enabled {
		t.Skip("memory under the race detector is not the program's")
	}
	keys := provertest.Setup(t, "mulchain", 1<<12)
	circ := keys.Circuit(t, "mulchain")
	foot := circ.Footprint()
	g := mem.NewGovernor(mem.Config{Budget: mem.Unlimited, Sample: time.Millisecond})
	cfg := provertest.Config(t.TempDir(), 1, 0)
	cfg.Governor = g
	js := jobs("mulchain", "one")
	debug.FreeOSMemory()
	base := mem.ReadUsage().RSS
	res := provertest.Run(t, cfg, []*stages.Circuit{circ}, js, 2*time.Minute)
	if len(res) != 1 || res[0].Error != "" {
		t.Fatalf("results %+v", res)
	}
	growth := js[0].Reservation.PeakRSS() - base
	t.Logf("footprint %s, measured growth %s (%.2f×)", mem.FormatBytes(foot), mem.FormatBytes(growth), float64(growth)/float64(foot))
	if growth < foot/3 || growth > foot*3/2 {
		t.Errorf("one job grew RSS by %s; the footprint estimate is %s: outside [⅓, 1½]×", mem.FormatBytes(growth), mem.FormatBytes(foot))
	}
}
