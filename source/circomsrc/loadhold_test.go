package circomsrc

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestLoadInstanceIsHeld: with Limits.Hold, the instance NewCalculatorWith
// makes at load is reserved (its memory limit, which wazero allocates
// whole) before it is made, released once it is dropped, and not kept
// for the first job, whose own reservation counts the instance it makes;
// a hold refused refuses the load, naming the instance and its size.
// Before (issue 45, row 2), the load's instance was made outside every
// reservation and kept.
func TestLoadInstanceIsHeld(t *testing.T) {
	code, err := os.ReadFile("testdata/mul.wasm")
	if err != nil {
		t.Fatal(err)
	}
	var held, holds, releases int64
	lim := Limits{Memory: 8 << 20, Hold: func(_ context.Context, bytes int64) (func(), error) {
		holds++
		held += bytes
		return func() { held -= bytes; releases++ }, nil
	}}
	c, err := NewCalculatorWith(context.Background(), code, lim)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	made := c.instancesMade()
	if holds != 1 || releases != 1 || held != 0 || made != 1 {
		t.Fatalf("load: %d holds, %d releases, %d bytes still held, %d instances made; want 1, 1, 0, 1", holds, releases, held, made)
	}
	c.mu.Lock()
	pooled := len(c.free)
	c.mu.Unlock()
	if pooled != 0 {
		t.Errorf("%d instances kept after the load, want 0: nothing outlives its hold", pooled)
	}
	if _, err := c.Calculate(context.Background(), json.RawMessage(goodInput)); err != nil {
		t.Fatal(err)
	}
	if got := c.instancesMade(); got != 2 {
		t.Errorf("the first job made %d instances in all, want 2 (its own)", got)
	}

	// the hold sized as the instance: its memory limit
	var asked int64
	lim.Hold = func(_ context.Context, bytes int64) (func(), error) {
		asked = bytes
		return nil, errors.New("needs more than the 1 MiB memory budget")
	}
	_, err = NewCalculatorWith(context.Background(), code, lim)
	if err == nil || !strings.Contains(err.Error(), "the witness calculator's instance at load (8MiB") || !strings.Contains(err.Error(), "memory budget") || asked != 8<<20 {
		t.Errorf("a hold refused: %v (asked %d bytes), want the load refused naming the instance", err, asked)
	}
}
