package hostilewasm

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// mul.wasm is circom2's witness calculator for source/circomsrc/testdata.
func mulWasm(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../../source/circomsrc/testdata/mul.wasm")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// instantiate compiles code on wazero with circom's four imports as no-ops
// and a memory limit of limit pages.
func instantiate(t *testing.T, code []byte, limit uint32) api.Module {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(true).WithMemoryLimitPages(limit))
	t.Cleanup(func() { rt.Close(ctx) })
	_, err := rt.NewHostModuleBuilder("runtime").
		NewFunctionBuilder().WithFunc(func(uint32) { panic("exception") }).Export("exceptionHandler").
		NewFunctionBuilder().WithFunc(func() {}).Export("printErrorMessage").
		NewFunctionBuilder().WithFunc(func() {}).Export("writeBufferMessage").
		NewFunctionBuilder().WithFunc(func() {}).Export("showSharedRWMemory").
		Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := rt.Instantiate(ctx, code)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func call(m api.Module, d time.Duration, name string, args ...uint64) ([]uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return m.ExportedFunction(name).Call(ctx, args...)
}

func TestLoop(t *testing.T) {
	code, err := Loop(mulWasm(t), "getWitnessSize")
	if err != nil {
		t.Fatal(err)
	}
	m := instantiate(t, code, 65536)
	if _, err := call(m, time.Minute, "getFieldNumLen32"); err != nil {
		t.Fatalf("an untouched export fails: %v", err)
	}
	_, err = call(m, 50*time.Millisecond, "getWitnessSize")
	var exit *sys.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != sys.ExitCodeDeadlineExceeded {
		t.Fatalf("getWitnessSize: %v, want the deadline", err)
	}
}

func TestLoopOnSignal(t *testing.T) {
	code, err := LoopOnSignal(mulWasm(t), "poison")
	if err != nil {
		t.Fatal(err)
	}
	m := instantiate(t, code, 65536)
	if _, err := call(m, time.Minute, "init", 0); err != nil {
		t.Fatal(err)
	}
	h := fnv64("a")
	if r, err := call(m, time.Minute, "getInputSignalSize", h>>32, h&0xffffffff); err != nil || r[0] != 1 {
		t.Fatalf("signal a: %v %v, want size 1", r, err)
	}
	h = fnv64("poison")
	if _, err := call(m, 50*time.Millisecond, "getInputSignalSize", h>>32, h&0xffffffff); err == nil {
		t.Fatal("signal poison returned")
	}
}

func TestGrow(t *testing.T) {
	code, err := Grow(mulWasm(t), "init", 65536)
	if err != nil {
		t.Fatal(err)
	}
	m := instantiate(t, code, 64) // 4 MiB
	_, err = call(m, time.Minute, "init", 0)
	if err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("init: %v, want a trap once the memory is at its limit", err)
	}
	if got := m.Memory().Size(); got != 64<<16 {
		t.Fatalf("memory %d bytes, want the 4 MiB limit", got)
	}

	code, err = Grow(mulWasm(t), "init", 8)
	if err != nil {
		t.Fatal(err)
	}
	m = instantiate(t, code, 64)
	before := m.Memory().Size()
	if _, err := call(m, time.Minute, "init", 0); err != nil {
		t.Fatal(err)
	}
	if got := m.Memory().Size(); got != before+8<<16 {
		t.Fatalf("memory %d bytes after init, want %d", got, before+8<<16)
	}
	if b, _ := m.Memory().ReadByte(before + 5); b != 0xa5 {
		t.Fatalf("a grown page holds %#x, want it filled", b)
	}
}

func TestInitialMemory(t *testing.T) {
	code, err := InitialMemory(mulWasm(t), 65536)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithMemoryLimitPages(1024))
	defer rt.Close(ctx)
	if _, err := rt.CompileModule(ctx, code); err == nil || !strings.Contains(err.Error(), "min 65536 pages") {
		t.Fatalf("compile: %v, want the minimum refused", err)
	}
}
