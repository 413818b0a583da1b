package adapt

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// gpuHost is a 16-core GPU host's window with synthesize the bottleneck:
// its six workers all busy and jobs waiting, parse waiting to hand jobs
// over (a full queue but idle workers), the device stages fed.
func gpuHost() Window {
	return Window{Cores: 16, Rate: 6, Stages: []Stage{
		{Name: "parse", Workers: 2, Max: 16, Busy: 0.3, Queued: 2, Cores: 1},
		{Name: "synthesize", Workers: 6, Max: 16, Busy: 5.9, Queued: 1.5, Cores: 1},
		{Name: "transfer", Workers: 3, Max: 16, Busy: 0.8, Queued: 0.1, Cores: 0.8},
		{Name: "msm-h", Workers: 1, Max: 16, Busy: 0.6, Queued: 0.2, Cores: 0.1},
		{Name: "assemble", Workers: 2, Max: 16, Busy: 0.1, Queued: 0, Cores: 0.5},
	}}
}

func stage(w Window, name string) *Stage {
	for i := range w.Stages {
		if w.Stages[i].Name == name {
			return &w.Stages[i]
		}
	}
	panic(name)
}

func TestTheBottleneckGrowsWhenCoresAreFree(t *testing.T) {
	m, ch := decide(Memory{}, gpuHost())
	if len(ch) != 1 || ch[0].Stage != "synthesize" || ch[0].From != 6 || ch[0].To != 7 || !strings.Contains(ch[0].Why, "bottleneck") {
		t.Fatalf("changes %v, want synthesize 6 → 7 as the bottleneck", ch)
	}
	if m.trial == nil || m.before != 6 {
		t.Errorf("the growth is not on trial: %+v", m)
	}
}

func TestNoChangeWithoutASaturatedStageWithAQueue(t *testing.T) {
	w := gpuHost()
	stage(w, "synthesize").Queued = 0.2 // busy but nothing waits: the source is the limit
	if _, ch := decide(Memory{}, w); len(ch) != 0 {
		t.Errorf("changes %v with no backlog anywhere", ch)
	}
	w = gpuHost()
	stage(w, "synthesize").Busy = 4 // a queue but workers idle: blocked downstream or on memory
	if _, ch := decide(Memory{}, w); len(ch) != 0 {
		t.Errorf("changes %v with no saturated stage", ch)
	}
}

func TestTheBusiestSaturatedStageIsTheBottleneck(t *testing.T) {
	w := gpuHost()
	*stage(w, "msm-h") = Stage{Name: "msm-h", Workers: 1, Max: 16, Busy: 1, Queued: 2, Cores: 0.1}
	if _, ch := decide(Memory{}, w); len(ch) != 1 || ch[0].Stage != "msm-h" {
		t.Errorf("changes %v, want msm-h (100%% busy) before synthesize (98%%)", ch)
	}
}

func TestUserShapesMaxAndMemoryStopGrowth(t *testing.T) {
	for name, f := range map[string]func(*Stage){
		"fixed":       func(s *Stage) { s.Fixed = true },
		"at max":      func(s *Stage) { s.Max = 6 },
		"memory full": func(s *Stage) { s.MemoryFull = true },
	} {
		w := gpuHost()
		stage(w, "synthesize").Cores = 3 // it would need donors too: none may shrink either
		f(stage(w, "synthesize"))
		if _, ch := decide(Memory{}, w); len(ch) != 0 {
			t.Errorf("%s: changes %v, want none", name, ch)
		}
	}
}

func TestIdleWorkersMakeRoomWhenCoresAreFull(t *testing.T) {
	w := gpuHost()
	w.Cores = 11 // demand: 2 + 6 + 2.4 + 0.1 + 1 = 11.5, and growth adds 1
	m, ch := decide(Memory{}, w)
	// idle cores: transfer (3-0.8)×0.8 = 1.76, parse (2-0.3)×1 = 1.7,
	// assemble (2-0.1)×0.5 = 0.95; the first two free 1.8 cores: 10.7 ≤ 11
	want := []string{"transfer 3 → 2", "parse 2 → 1", "synthesize 6 → 7"}
	check := func(ch []Change, want []string) {
		t.Helper()
		if len(ch) != len(want) {
			t.Fatalf("changes %v, want %v", ch, want)
		}
		for i, c := range ch {
			if !strings.HasPrefix(c.String(), want[i]) {
				t.Errorf("change %d: %v, want %s", i, c, want[i])
			}
		}
	}
	check(ch, want)
	if m.trial == nil || m.trial.Stage != "synthesize" {
		t.Errorf("trial %+v", m.trial)
	}
	// A fixed stage gives nothing: transfer set by the user.
	stage(w, "transfer").Fixed = true
	_, ch = decide(Memory{}, w)
	check(ch, []string{"parse 2 → 1", "assemble 2 → 1", "synthesize 6 → 7"})
	// Half a core fewer: even every idle worker is not enough, and nothing
	// shrinks for a growth that cannot happen.
	w.Cores = 10
	if _, ch := decide(Memory{}, w); len(ch) != 0 {
		t.Errorf("changes %v when the cores cannot be found", ch)
	}
}

func TestAGrowthWithoutGainIsUndoneAndHeld(t *testing.T) {
	m, ch := decide(Memory{}, gpuHost())
	if len(ch) != 1 {
		t.Fatal(ch)
	}
	afterGrowth := m
	w := gpuHost()
	stage(w, "synthesize").Workers = 7
	stage(w, "synthesize").Busy = 6.9
	w.Rate = 6.1 // < 6 × 1.05
	m, ch = decide(m, w)
	if len(ch) != 1 || ch[0].Stage != "synthesize" || ch[0].From != 7 || ch[0].To != 6 || !strings.Contains(ch[0].Why, "no gain") {
		t.Fatalf("changes %v, want synthesize 7 → 6 for no gain", ch)
	}
	// Decide is pure: the Memory it was given still holds no limit.
	if again, ch := decide(afterGrowth, w); len(ch) != 1 || len(again.cap) != 1 || len(afterGrowth.cap) != 0 {
		t.Errorf("deciding twice from one Memory: %v, %v, then %v", ch, again.cap, afterGrowth.cap)
	}
	// Still the bottleneck, but held at six for HoldWindows windows.
	for i := range HoldWindows {
		if m, ch = decide(m, gpuHost()); len(ch) != 0 {
			t.Fatalf("window %d of the hold: changes %v", i, ch)
		}
	}
	if _, ch = decide(m, gpuHost()); len(ch) != 1 || ch[0].To != 7 {
		t.Errorf("after the hold: changes %v, want synthesize tried at 7 again", ch)
	}
}

func TestAGrowthWithGainStaysAndTheNextMayFollow(t *testing.T) {
	m, _ := decide(Memory{}, gpuHost())
	w := gpuHost()
	stage(w, "synthesize").Workers = 7
	stage(w, "synthesize").Busy = 6.95
	w.Rate = 7
	m, ch := decide(m, w)
	if len(ch) != 1 || ch[0].From != 7 || ch[0].To != 8 {
		t.Fatalf("changes %v, want synthesize 7 → 8 after a gain", ch)
	}
	if m.before != 7 {
		t.Errorf("rate before the new trial %v, want 7", m.before)
	}
}

// Whatever a window says, Decide never touches a fixed stage, never leaves
// [1, Max], grows one stage by one at most, and a growth fits the cores.
func TestDecideKeepsItsBoundsOnRandomWindows(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var m Memory
	grew := 0
	for i := range 20000 {
		w := Window{Cores: 1 + r.IntN(32), Rate: r.Float64() * 10}
		for k := range 1 + r.IntN(8) {
			max := 1 + r.IntN(8)
			workers := 1 + r.IntN(max)
			w.Stages = append(w.Stages, Stage{Name: fmt.Sprint("s", k), Workers: workers, Max: max, Fixed: r.IntN(4) == 0,
				MemoryFull: r.IntN(8) == 0, Busy: r.Float64() * float64(workers) * 1.1, Queued: r.Float64() * 3, Cores: r.Float64() * 2})
		}
		if i%3 == 0 {
			m = Memory{} // also from a fresh start
		}
		var ch []Change
		m, ch = decide(m, w)
		grows, demand := 0, 0.0
		after := map[string]int{}
		for _, s := range w.Stages {
			after[s.Name] = s.Workers
		}
		for _, c := range ch {
			s := stage(w, c.Stage)
			if s.Fixed {
				t.Fatalf("window %d: changed fixed stage %v", i, c)
			}
			if c.From != s.Workers || c.To < 1 || c.To > s.Max || (c.To != c.From+1 && c.To != c.From-1) {
				t.Fatalf("window %d: change %v of %+v", i, c, *s)
			}
			if c.To > c.From {
				grows++
			}
			after[c.Stage] = c.To
		}
		for _, s := range w.Stages {
			demand += float64(after[s.Name]) * s.Cores
		}
		if grows > 1 {
			t.Fatalf("window %d: %d growths in %v", i, grows, ch)
		}
		if grows == 1 && len(ch) > 0 && ch[len(ch)-1].To > ch[len(ch)-1].From && !strings.Contains(ch[0].Why, "no gain") && demand > float64(w.Cores)+1e-9 {
			t.Fatalf("window %d: after %v, demand %.2f over %d cores", i, ch, demand, w.Cores)
		}
		grew += grows
	}
	if grew == 0 {
		t.Error("no window of 20000 grew anything: the test says nothing")
	}
}

// decide is Decide's changes alone.
func decide(m Memory, w Window) (Memory, []Change) {
	m, d := Decide(m, w)
	if len(d.Changes) > 0 && d.Kept != "" {
		panic("a decision that both changes and keeps")
	}
	return m, d.Changes
}

func TestKeptSaysWhyTheBottleneckDidNotGrow(t *testing.T) {
	for why, f := range map[string]func(*Window){
		"its shape is the user's": func(w *Window) { stage(*w, "synthesize").Fixed = true },
		"6 is its most":           func(w *Window) { stage(*w, "synthesize").Max = 6 },
		"jobs wait for memory":    func(w *Window) { stage(*w, "synthesize").MemoryFull = true },
		"the 8 cores are spoken":  func(w *Window) { w.Cores = 8 },
	} {
		w := gpuHost()
		f(&w)
		_, d := Decide(Memory{}, w)
		if len(d.Changes) != 0 || !strings.HasPrefix(d.Kept, "synthesize is the bottleneck (98% of its 6 workers busy") || !strings.Contains(d.Kept, why) {
			t.Errorf("%s: %+v", why, d)
		}
	}
	if _, d := Decide(Memory{}, gpuHost()); d.Kept != "" {
		t.Errorf("a growth is not kept: %+v", d)
	}
}
