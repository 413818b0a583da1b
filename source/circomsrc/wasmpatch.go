package circomsrc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/zkpipe/zkpipe/internal/wasmbin"
)

// A witness read a wire a call costs a wazero call per wire: with
// WithCloseOnContextDone each call starts a goroutine to watch the context
// (about a microsecond), 65 536 of them for a 2¹⁶ circuit, 60% of a chain
// witness. addWitnessReader gives the module one more export that loops
// over the wires in wasm instead:
//
//	zkpipeReadWitness(dst, from, to i32):
//	    src := getSharedRWMemoryStart()
//	    for i := from; i < to; i++ {
//	        getWitness(i)                  // wire i, normal form, into the shared memory
//	        copy(mem[dst:dst+32], mem[src:src+32]); dst += 32
//	    }
//
// so a witness is a call and a read of the module's memory per chunk of
// wires (readChunk, into pages the instance adds to its memory). The
// function is appended (types, functions, exports and code each get one
// more entry); nothing of circom's is changed. A module without
// getWitness (i32) → () or getSharedRWMemoryStart () → i32 (circom before
// 2.1) is left as it is, and read a wire a call.

// readWitnessExport is the name of the added export.
const readWitnessExport = "zkpipeReadWitness"

// wasm section ids (WebAssembly core spec, 5.5).
const (
	secType     = 1
	secImport   = 2
	secFunction = 3
	secExport   = 7
	secCode     = 10
)

type wasmSection struct {
	id      byte
	payload []byte
}

// addWitnessReader returns code with zkpipeReadWitness added, or an error
// saying why it cannot be (the caller then reads a wire a call).
func addWitnessReader(code []byte) ([]byte, error) {
	if len(code) < 8 || !bytes.Equal(code[:4], []byte("\x00asm")) || binary.LittleEndian.Uint32(code[4:8]) != 1 {
		return nil, errors.New("not a version 1 wasm module")
	}
	var secs []wasmSection
	for r := code[8:]; len(r) > 0; {
		id := r[0]
		size, n, err := wasmbin.Uleb(r[1:])
		if err != nil || uint64(len(r)-1-n) < size {
			return nil, fmt.Errorf("section %d: truncated", id)
		}
		secs = append(secs, wasmSection{id: id, payload: r[1+n : 1+n+int(size)]})
		r = r[1+n+int(size):]
	}
	find := func(id byte) *wasmSection {
		for i := range secs {
			if secs[i].id == id {
				return &secs[i]
			}
		}
		return nil
	}
	types, funcs, exports, codes := find(secType), find(secFunction), find(secExport), find(secCode)
	if types == nil || funcs == nil || exports == nil || codes == nil {
		return nil, errors.New("no type, function, export or code section")
	}

	// Types: each a func type 0x60, its params and results.
	var sigs []string // "params>results", value types as bytes
	nTypes, p, err := vecCount(types.payload)
	if err != nil {
		return nil, fmt.Errorf("type section: %w", err)
	}
	for t := uint64(0); t < nTypes; t++ {
		if p >= len(types.payload) || types.payload[p] != 0x60 {
			return nil, errors.New("type section: not a function type")
		}
		p++
		var sig []byte
		for k := 0; k < 2; k++ {
			cnt, n, err := wasmbin.Uleb(types.payload[p:])
			if err != nil || uint64(len(types.payload)-p-n) < cnt {
				return nil, errors.New("type section: truncated")
			}
			p += n
			sig = append(sig, types.payload[p:p+int(cnt)]...)
			if k == 0 {
				sig = append(sig, '>')
			}
			p += int(cnt)
		}
		sigs = append(sigs, string(sig))
	}

	// Function index space: imported functions first, then the module's own.
	var funcType []uint64
	if imports := find(secImport); imports != nil {
		cnt, p, err := vecCount(imports.payload)
		if err != nil {
			return nil, fmt.Errorf("import section: %w", err)
		}
		for k := uint64(0); k < cnt; k++ {
			if p > len(imports.payload) {
				return nil, errors.New("import section: truncated")
			}
			for s := 0; s < 2; s++ { // module and field names
				l, n, err := wasmbin.Uleb(imports.payload[p:])
				if err != nil || uint64(len(imports.payload)-p-n) < l {
					return nil, errors.New("import section: truncated")
				}
				p += n + int(l)
			}
			if p >= len(imports.payload) {
				return nil, errors.New("import section: truncated")
			}
			kind := imports.payload[p]
			p++
			switch kind {
			case 0: // function: its type index
				t, n, err := wasmbin.Uleb(imports.payload[p:])
				if err != nil {
					return nil, errors.New("import section: truncated")
				}
				funcType = append(funcType, t)
				p += n
			case 1: // table: reftype, limits
				if p >= len(imports.payload) {
					return nil, errors.New("import section: truncated")
				}
				n, err := wasmbin.SkipLimits(imports.payload[p+1:])
				if err != nil {
					return nil, fmt.Errorf("import section: %w", err)
				}
				p += 1 + n
			case 2: // memory: limits
				n, err := wasmbin.SkipLimits(imports.payload[p:])
				if err != nil {
					return nil, fmt.Errorf("import section: %w", err)
				}
				p += n
			case 3: // global: value type, mutability
				p += 2
			default:
				return nil, fmt.Errorf("import section: import kind %d", kind)
			}
		}
	}
	nFuncs, p, err := vecCount(funcs.payload)
	if err != nil {
		return nil, fmt.Errorf("function section: %w", err)
	}
	for k := uint64(0); k < nFuncs; k++ {
		t, n, err := wasmbin.Uleb(funcs.payload[p:])
		if err != nil {
			return nil, errors.New("function section: truncated")
		}
		funcType = append(funcType, t)
		p += n
	}

	// Exports: the two functions the reader calls.
	exported := map[string]uint64{}
	nExports, p, err := vecCount(exports.payload)
	if err != nil {
		return nil, fmt.Errorf("export section: %w", err)
	}
	for k := uint64(0); k < nExports; k++ {
		l, n, err := wasmbin.Uleb(exports.payload[p:])
		if err != nil || uint64(len(exports.payload)-p-n) < l+1 {
			return nil, errors.New("export section: truncated")
		}
		name := string(exports.payload[p+n : p+n+int(l)])
		p += n + int(l)
		kind := exports.payload[p]
		idx, n, err := wasmbin.Uleb(exports.payload[p+1:])
		if err != nil {
			return nil, errors.New("export section: truncated")
		}
		p += 1 + n
		if kind == 0 {
			exported[name] = idx
		}
	}
	const i32 = 0x7f
	sigOf := func(name string) (uint64, string, bool) {
		f, ok := exported[name]
		if !ok || f >= uint64(len(funcType)) || funcType[f] >= uint64(len(sigs)) {
			return 0, "", false
		}
		return f, sigs[funcType[f]], true
	}
	if _, ok := exported[readWitnessExport]; ok {
		return nil, fmt.Errorf("the module already exports %s", readWitnessExport)
	}
	getWitness, sig, ok := sigOf("getWitness")
	if !ok || sig != string([]byte{i32, '>'}) {
		return nil, errors.New("no getWitness (i32) → ()")
	}
	sharedStart, sig, ok := sigOf("getSharedRWMemoryStart")
	if !ok || sig != string([]byte{'>', i32}) {
		return nil, errors.New("no getSharedRWMemoryStart () → i32")
	}

	// The new function: type (i32 i32 i32) → (), params dst (0), from (1)
	// and to (2), locals i (3) and src (4).
	newType := uint64(len(sigs))
	newFunc := uint64(len(funcType))
	var body []byte
	body = append(body, 0x01, 0x02, i32) // one local group: 2 × i32
	body = append(body, 0x10)            // call getSharedRWMemoryStart
	body = wasmbin.AppendUleb(body, sharedStart)
	body = append(body, 0x21, 0x04, // local.set src
		0x20, 0x01, 0x21, 0x03, // i = from
		0x02, 0x40, // block
		0x03, 0x40, // loop
		0x20, 0x03, 0x20, 0x02, 0x4f, 0x0d, 0x01, // br_if 1 (i >= to, unsigned)
		0x20, 0x03, 0x10) // getWitness(i)
	body = wasmbin.AppendUleb(body, getWitness)
	for k := byte(0); k < 4; k++ { // 32 bytes: four i64 load/store pairs
		body = append(body, 0x20, 0x00, 0x20, 0x04, 0x29, 0x03, 8*k, 0x37, 0x03, 8*k)
	}
	body = append(body,
		0x20, 0x00, 0x41, 0x20, 0x6a, 0x21, 0x00, // dst += 32
		0x20, 0x03, 0x41, 0x01, 0x6a, 0x21, 0x03, // i++
		0x0c, 0x00, // br 0 (the loop)
		0x0b, 0x0b, 0x0b) // end loop, block, function

	types.payload = wasmbin.AppendVec(types.payload, nTypes, []byte{0x60, 0x03, i32, i32, i32, 0x00})
	funcs.payload = wasmbin.AppendVec(funcs.payload, nFuncs, wasmbin.AppendUleb(nil, newType))
	exp := wasmbin.AppendUleb(nil, uint64(len(readWitnessExport)))
	exp = append(exp, readWitnessExport...)
	exp = wasmbin.AppendUleb(append(exp, 0x00), newFunc)
	exports.payload = wasmbin.AppendVec(exports.payload, nExports, exp)
	nCodes, _, err := vecCount(codes.payload)
	if err != nil || nCodes != nFuncs {
		return nil, errors.New("code section: not one body per function")
	}
	codes.payload = wasmbin.AppendVec(codes.payload, nCodes, append(wasmbin.AppendUleb(nil, uint64(len(body))), body...))

	out := append([]byte(nil), code[:8]...)
	for _, s := range secs {
		out = append(out, s.id)
		out = wasmbin.AppendUleb(out, uint64(len(s.payload)))
		out = append(out, s.payload...)
	}
	return out, nil
}

// vecCount reads a vector's element count at the start of a section's
// payload and returns it and where the elements start.
func vecCount(payload []byte) (uint64, int, error) {
	n, k, err := wasmbin.Uleb(payload)
	if err != nil {
		return 0, 0, errors.New("truncated")
	}
	return n, k, nil
}

// declaredMemory is the initial memory, in bytes, that code's memory
// section declares (0 without one), read before the module is compiled so
// that the runtime's memory limit can be chosen from it.
func declaredMemory(code []byte) (int64, error) {
	if len(code) < 8 || !bytes.Equal(code[:4], []byte("\x00asm")) || binary.LittleEndian.Uint32(code[4:8]) != 1 {
		return 0, errors.New("not a version 1 wasm module")
	}
	const secMemory = 5
	for r := code[8:]; len(r) > 0; {
		id := r[0]
		size, n, err := wasmbin.Uleb(r[1:])
		if err != nil || uint64(len(r)-1-n) < size {
			return 0, fmt.Errorf("section %d: truncated", id)
		}
		payload := r[1+n : 1+n+int(size)]
		r = r[1+n+int(size):]
		if id != secMemory {
			continue
		}
		cnt, k, err := vecCount(payload)
		if err != nil || cnt == 0 {
			return 0, nil
		}
		if k >= len(payload) {
			return 0, errors.New("memory section: truncated")
		}
		pages, _, err := wasmbin.Uleb(payload[k+1:]) // after the limits' flag
		if err != nil {
			return 0, errors.New("memory section: bad limits")
		}
		return int64(min(pages, 1<<17)) * 65536, nil
	}
	return 0, nil
}
