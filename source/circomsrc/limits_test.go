package circomsrc

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/internal/hostilewasm"
)

func hostileCalc(t *testing.T, make func([]byte) ([]byte, error), lim Limits) *Calculator {
	t.Helper()
	code, err := os.ReadFile("testdata/mul.wasm")
	if err != nil {
		t.Fatal(err)
	}
	if code, err = make(code); err != nil {
		t.Fatal(err)
	}
	c, err := NewCalculatorWith(context.Background(), code, lim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

const (
	goodInput   = `{"a":"3","b":"11"}`
	poisonInput = `{"a":"3","b":"11","poison":"1"}`
)

// made is how many instances c has instantiated.
func (c *Calculator) instancesMade() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.made
}

// TestCalculatorDeadlineAndCancellation: a calculation that never ends
// stops at the calculator's deadline, or when the caller's context ends
// first, each saying which; its instance is dropped, and the next input
// computes on a fresh one.
func TestCalculatorDeadlineAndCancellation(t *testing.T) {
	c := hostileCalc(t, func(b []byte) ([]byte, error) { return hostilewasm.LoopOnSignal(b, "poison") }, Limits{Timeout: time.Second, Memory: 8 << 20})
	if _, err := c.Calculate(context.Background(), json.RawMessage(goodInput)); err != nil {
		t.Fatal(err)
	}
	made := c.instancesMade()
	_, err := c.Calculate(context.Background(), json.RawMessage(poisonInput))
	if err == nil || !strings.Contains(err.Error(), "ran past its deadline of 1s") {
		t.Fatalf("a looping calculation: %v, want its deadline", err)
	}
	if _, err := c.Calculate(context.Background(), json.RawMessage(goodInput)); err != nil {
		t.Fatalf("after a stopped calculation: %v", err)
	}
	if got := c.instancesMade(); got != made+1 {
		t.Errorf("%d instances made after the stopped one, want %d: a stopped instance is dropped, not pooled", got, made+1)
	}

	long := hostileCalc(t, func(b []byte) ([]byte, error) { return hostilewasm.LoopOnSignal(b, "poison") }, Limits{Timeout: time.Hour})
	// The caller's context ends first (a stream aborted): the call stops
	// then, not at the calculator's own deadline an hour away.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := long.Calculate(ctx, json.RawMessage(poisonInput)); err == nil || !strings.Contains(err.Error(), "stopped: context deadline exceeded") {
		t.Fatalf("a calculation whose caller gave up: %v, want it stopped by the caller's context", err)
	}
}

// TestCalculatorMemoryLimit: a calculation that grows its memory past the
// limit fails naming it; one that grows within it computes the right
// witness, and its grown instance is dropped so that idle instances keep
// only their initial memory.
func TestCalculatorMemoryLimit(t *testing.T) {
	c := hostileCalc(t, func(b []byte) ([]byte, error) { return hostilewasm.GrowOnSignal(b, "poison", 65536) }, Limits{Memory: 8 << 20})
	if c.MemoryLimit() != 8<<20 || c.JobBytes() != 8<<20 {
		t.Fatalf("limit %d, job bytes %d", c.MemoryLimit(), c.JobBytes())
	}
	_, err := c.Calculate(context.Background(), json.RawMessage(poisonInput))
	if err == nil || !strings.Contains(err.Error(), "memory limit of 8MiB (circomsrc.Limits.Memory)") {
		t.Fatalf("growing past the limit: %v", err)
	}

	within := hostileCalc(t, func(b []byte) ([]byte, error) { return hostilewasm.GrowOnSignal(b, "poison", 16) }, Limits{Memory: 8 << 20})
	want, err := within.Calculate(context.Background(), json.RawMessage(goodInput))
	if err != nil {
		t.Fatal(err)
	}
	made := within.instancesMade()
	// the poison key is not a signal of mul: the module grows, then circom
	// answers that it has no such signal
	if _, err := within.Calculate(context.Background(), json.RawMessage(poisonInput)); err == nil || !strings.Contains(err.Error(), "signal poison not found") {
		t.Fatalf("growing within the limit: %v", err)
	}
	got, err := within.Calculate(context.Background(), json.RawMessage(goodInput))
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("wire %d differs after a grown instance", i)
		}
	}
	if n := within.instancesMade(); n != made+1 {
		t.Errorf("%d instances made, want %d", n, made+1)
	}
}

// TestLimitsRefused: negative limits and a memory beyond wasm32 are
// refused, as is a module declaring more memory than its limit.
func TestLimitsRefused(t *testing.T) {
	code, err := os.ReadFile("testdata/mul.wasm")
	if err != nil {
		t.Fatal(err)
	}
	for _, lim := range []Limits{{Timeout: -time.Second}, {Memory: -1}, {Memory: 1<<32 + 1}, {Memory: 64 << 10}} {
		if c, err := NewCalculatorWith(context.Background(), code, lim); err == nil {
			c.Close(context.Background())
			t.Errorf("%+v accepted", lim)
		}
	}
}

// TestEveryJobExportIsBounded: wherever in a job's calls the module loops
// (init, the signal lookup, setting a value, reading the witness back in
// bulk or a wire a call), the calculation stops at its deadline.
func TestEveryJobExportIsBounded(t *testing.T) {
	for _, export := range []string{"init", "getInputSignalSize", "setInputSignal", "getWitness"} {
		for _, wireByWire := range []bool{false, true} {
			c := hostileCalc(t, func(b []byte) ([]byte, error) { return hostilewasm.Loop(b, export) }, Limits{Timeout: time.Second, Memory: 8 << 20})
			c.wireByWire = wireByWire
			_, err := c.Calculate(context.Background(), json.RawMessage(goodInput))
			if err == nil || !strings.Contains(err.Error(), "ran past its deadline of 1s") {
				t.Errorf("a loop in %s (wire by wire %v): %v, want the deadline", export, wireByWire, err)
			}
		}
	}
}
