package circomsrc

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/zkpipe/zkpipe/internal/wasmbin"
	"github.com/zkpipe/zkpipe/proofdata"
)

// TestAddWitnessReader: the committed circom module takes the reader, the
// result compiles and reads mul's witness as the wire-by-wire calls do; a
// module already patched, a non-module and every truncation are refused
// with an error, never a panic.
func TestAddWitnessReader(t *testing.T) {
	ctx := context.Background()
	code := testdata(t, "mul.wasm")
	patched, err := addWitnessReader(code)
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	if _, err := rt.CompileModule(ctx, patched); err != nil {
		t.Fatalf("the patched module does not compile: %v", err)
	}
	if _, err := addWitnessReader(patched); err == nil || !strings.Contains(err.Error(), "already exports") {
		t.Fatalf("patching twice: %v", err)
	}
	if _, err := addWitnessReader([]byte("not a wasm module")); err == nil {
		t.Fatal("a non-module was patched")
	}
	for n := 0; n < len(code); n += max(1, len(code)/500) {
		if _, err := addWitnessReader(code[:n]); err == nil && n < 100 {
			t.Fatalf("a module cut at %d bytes was patched", n)
		}
	}

	calc, err := NewCalculator(ctx, code)
	if err != nil {
		t.Fatal(err)
	}
	defer calc.Close(ctx)
	if !calc.bulk {
		t.Fatalf("no bulk reader: %v", calc.noBulk)
	}
	in := json.RawMessage(`{"a":"3","b":11}`)
	bulk, err := calc.Calculate(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	calc.wireByWire = true
	wire, err := calc.Calculate(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(bulk) != len(wire) {
		t.Fatalf("%d wires in bulk, %d a wire a call", len(bulk), len(wire))
	}
	for i := range bulk {
		if bulk[i] != wire[i] {
			t.Fatalf("wire %d: %v in bulk, %v a wire a call", i, bulk[i], wire[i])
		}
	}
}

// FuzzAddWitnessReader: any bytes give a patched module or an error, never
// a panic; a patched module patches no second time.
func FuzzAddWitnessReader(f *testing.F) {
	code := testdata(f, "mul.wasm")
	f.Add(code)
	f.Add(code[:len(code)/2])
	f.Add(bytes.Repeat([]byte{0xff}, 64))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := addWitnessReader(b)
		if err != nil {
			return
		}
		if _, err := addWitnessReader(out); err == nil {
			t.Fatal("a patched module patched again")
		}
	})
}

// TestWitnessReaderWithoutRoom: a module whose memory may not grow (its
// maximum is its size) cannot take the reader's buffer; its instances read
// a wire a call, and the witness is the same.
func TestWitnessReaderWithoutRoom(t *testing.T) {
	ctx := context.Background()
	code := testdata(t, "mul.wasm")
	capped := capMemory(t, code)
	in := json.RawMessage(`{"a":"3","b":11}`)
	var ws [2][]proofdata.Scalar
	for k, c := range [][]byte{code, capped} {
		calc, err := NewCalculator(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if ws[k], err = calc.Calculate(ctx, in); err != nil {
			t.Fatal(err)
		}
		calc.mu.Lock()
		chunked := calc.free[0].chunkOK
		calc.mu.Unlock()
		if chunked != (k == 0) {
			t.Fatalf("module %d: the instance has the reader's buffer: %v", k, chunked)
		}
		calc.Close(ctx)
	}
	if len(ws[0]) != len(ws[1]) {
		t.Fatalf("%d wires, %d with the memory capped", len(ws[0]), len(ws[1]))
	}
	for i := range ws[0] {
		if ws[0][i] != ws[1][i] {
			t.Fatalf("wire %d: %v, %v with the memory capped", i, ws[0][i], ws[1][i])
		}
	}
}

// capMemory returns code with its one memory's maximum set to its minimum.
func capMemory(t *testing.T, code []byte) []byte {
	t.Helper()
	out := append([]byte(nil), code[:8]...)
	found := false
	for r := code[8:]; len(r) > 0; {
		size, n, err := wasmbin.Uleb(r[1:])
		if err != nil {
			t.Fatal(err)
		}
		id, payload := r[0], r[1+n:1+n+int(size)]
		r = r[1+n+int(size):]
		if id == 5 { // memory: one limits
			if payload[0] != 1 || payload[1] != 0 {
				t.Fatalf("memory section %x: want one memory without a maximum", payload)
			}
			pages, _, err := wasmbin.Uleb(payload[2:])
			if err != nil {
				t.Fatal(err)
			}
			payload = wasmbin.AppendUleb(wasmbin.AppendUleb([]byte{1, 1}, pages), pages)
			found = true
		}
		out = wasmbin.AppendUleb(append(out, id), uint64(len(payload)))
		out = append(out, payload...)
	}
	if !found {
		t.Fatal("no memory section")
	}
	return out
}
