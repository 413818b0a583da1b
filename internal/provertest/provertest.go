// Package provertest sets up small built-in circuits and runs streams
// through the engine, for the tests of several packages. Setups are cached
// per process. The keys come from keygen.Setup (gnark's keys, 8–19× faster
// than gnark's groth16.Setup), so every proof test of these packages also
// proves that zkpipe's engine takes keygen's keys.
package provertest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/constraint"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/internal/runtest"
	"github.com/zkpipe/zkpipe/keygen"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// Keys are a set-up built-in circuit.
type Keys struct {
	Builtin circuits.Builtin
	Curve   curve.ID
	N       int
	CCS     constraint.ConstraintSystem
	PK      groth16.ProvingKey
	VK      groth16.VerifyingKey
}

var (
	mu    sync.Mutex
	cache = map[string]*Keys{}
)

// Setup compiles and sets up builtin over BN254 at about n constraints
// (cached).
func Setup(t testing.TB, builtin string, n int) *Keys {
	t.Helper()
	return SetupOn(t, curve.BN254, builtin, n)
}

// SetupOn is Setup over curve id.
func SetupOn(t testing.TB, id curve.ID, builtin string, n int) *Keys {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	key := fmt.Sprintf("%s/%s/%d", id, builtin, n)
	if k, ok := cache[key]; ok {
		return k
	}
	b, err := circuits.Lookup(builtin)
	if err != nil {
		t.Fatal(err)
	}
	ccs, err := b.CompileOn(id, n)
	if err != nil {
		t.Fatal(err)
	}
	pk, vk, err := keygen.Setup(ccs)
	if err != nil {
		t.Fatal(err)
	}
	k := &Keys{Builtin: b, Curve: id, N: n, CCS: ccs, PK: pk, VK: vk}
	cache[key] = k
	return k
}

// Circuit returns a fresh stages.Circuit over k, named name, able to generate
// witnesses.
func (k *Keys) Circuit(t testing.TB, name string) *stages.Circuit {
	t.Helper()
	// k.PK is cached for every test: a GPU backend's engine must not take
	// its points from the others (gnarksrc.Options.KeepProvingKey)
	c, err := gnarksrc.NewWith(name, k.CCS, k.PK, k.VK, &gnarksrc.Meta{Builtin: k.Builtin.Name, Constraints: k.N}, gnarksrc.Options{KeepProvingKey: true})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Config is runtest.Config: a small engine configuration on the CPU
// backend.
func Config(dir string, workers, queue int) engine.CoreConfig {
	return runtest.Config(dir, workers, queue)
}

// Run is runtest.Run: jobs proven through the engine, the result lines in
// the order they finished.
func Run(t testing.TB, cfg engine.CoreConfig, circuits []*stages.Circuit, jobs []*stages.Job, timeout time.Duration) []stream.Result {
	t.Helper()
	return runtest.Run(t, cfg, circuits, jobs, timeout)
}
