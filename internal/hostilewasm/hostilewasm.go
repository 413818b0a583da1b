// Package hostilewasm turns a valid circom witness calculator (the
// circuit_js/circuit.wasm circom writes) into a hostile one, for the tests
// that check zkpipe bounds a user's wasm in time and memory: one that never
// returns, one that grows its memory to the wasm32 limit, one that declares
// more memory than any limit allows.
//
// Each builder appends one function to the module and calls it from the
// start of an export's body (or of getInputSignalSize, only when the input
// names a given signal, so that one circuit serves good and poison jobs);
// nothing of circom's code is changed, so the module computes its witness
// as before whenever the added code lets it.
package hostilewasm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/zkpipe/zkpipe/internal/wasmbin"
)

// Loop returns wasm with an endless loop at the start of export (say
// "getWitnessSize", called at load, or "init", called by every job).
func Loop(wasm []byte, export string) ([]byte, error) {
	return inject(wasm, export, "", loopBody)
}

// LoopOnSignal returns wasm whose getInputSignalSize loops for ever when it
// is asked for the input signal named signal (a name the circuit need not
// have): jobs whose input holds that key never end, the others prove.
func LoopOnSignal(wasm []byte, signal string) ([]byte, error) {
	return inject(wasm, "getInputSignalSize", signal, loopBody)
}

// Grow returns wasm that, at the start of export, grows its memory a page
// (64 KiB) at a time, filling each new page so that it is resident, for up
// to pages pages (65536: the wasm32 limit of 4 GiB); when memory.grow
// fails (a limit) it traps, as an allocator that aborts does. Once grown it
// goes on with circom's code.
func Grow(wasm []byte, export string, pages uint32) ([]byte, error) {
	return inject(wasm, export, "", growBody(pages))
}

// GrowOnSignal is Grow in getInputSignalSize, only when it is asked for
// the input signal named signal.
func GrowOnSignal(wasm []byte, signal string, pages uint32) ([]byte, error) {
	return inject(wasm, "getInputSignalSize", signal, growBody(pages))
}

// InitialMemory returns wasm with its memory's declared minimum set to
// pages (65536: all of wasm32's 4 GiB from instantiation on).
func InitialMemory(wasm []byte, pages uint32) ([]byte, error) {
	m, err := parse(wasm)
	if err != nil {
		return nil, err
	}
	s := m.find(secMemory)
	if s == nil {
		return nil, errors.New("no memory section")
	}
	n, p, err := wasmbin.Uleb(s.payload)
	if err != nil || n != 1 || p >= len(s.payload) {
		return nil, errors.New("memory section: want one memory")
	}
	flag := s.payload[p]
	_, k, err := wasmbin.Uleb(s.payload[p+1:])
	if err != nil {
		return nil, errors.New("memory section: bad limits")
	}
	rest := s.payload[p+1+k:]
	out := append([]byte{1, flag}, wasmbin.AppendUleb(nil, uint64(pages))...)
	s.payload = append(out, rest...)
	return m.bytes(), nil
}

// loopBody is a function () → () that never returns: loop br 0 end.
var loopBody = []byte{0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b}

// growBody is a function () → () with two i32 locals (the page memory.grow
// returned, the count):
//
//	loop
//	    p = memory.grow(1); if p == -1 { unreachable }
//	    memory.fill(p << 16, 0xa5, 65536)
//	    n++; br_if 0 (n < pages)
//	end
func growBody(pages uint32) []byte {
	b := []byte{0x01, 0x02, 0x7f, // locals: 2 × i32
		0x03, 0x40, // loop
		0x41, 0x01, 0x40, 0x00, 0x22, 0x00, // p = memory.grow(1)
		0x41, 0x7f, 0x46, 0x04, 0x40, 0x00, 0x0b, // if p == -1 { unreachable }
		0x20, 0x00, 0x41, 0x10, 0x74, // p << 16
		0x41, 0xa5, 0x01, // 0xa5
		0x41, 0x80, 0x80, 0x04, // 65536
		0xfc, 0x0b, 0x00, // memory.fill
		0x20, 0x01, 0x41, 0x01, 0x6a, 0x22, 0x01, // n++
		0x41}
	b = appendSleb(b, int64(int32(pages)))
	return append(b, 0x49, 0x0d, 0x00, // br_if 0 (n < pages, unsigned)
		0x0b, 0x0b) // end loop, function
}

// wasm section ids (WebAssembly core spec, 5.5).
const (
	secType     = 1
	secImport   = 2
	secFunction = 3
	secMemory   = 5
	secExport   = 7
	secCode     = 10
)

type section struct {
	id      byte
	payload []byte
}

type module struct{ secs []section }

func parse(code []byte) (*module, error) {
	if len(code) < 8 || !bytes.Equal(code[:4], []byte("\x00asm")) || binary.LittleEndian.Uint32(code[4:8]) != 1 {
		return nil, errors.New("not a version 1 wasm module")
	}
	m := &module{}
	for r := code[8:]; len(r) > 0; {
		id := r[0]
		size, n, err := wasmbin.Uleb(r[1:])
		if err != nil || uint64(len(r)-1-n) < size {
			return nil, fmt.Errorf("section %d: truncated", id)
		}
		m.secs = append(m.secs, section{id: id, payload: append([]byte(nil), r[1+n:1+n+int(size)]...)})
		r = r[1+n+int(size):]
	}
	return m, nil
}

func (m *module) find(id byte) *section {
	for i := range m.secs {
		if m.secs[i].id == id {
			return &m.secs[i]
		}
	}
	return nil
}

func (m *module) bytes() []byte {
	out := []byte("\x00asm\x01\x00\x00\x00")
	for _, s := range m.secs {
		out = append(out, s.id)
		out = wasmbin.AppendUleb(out, uint64(len(s.payload)))
		out = append(out, s.payload...)
	}
	return out
}

// importedFuncs counts the functions the module imports (they come first
// in the function index space).
func (m *module) importedFuncs() (uint64, error) {
	s := m.find(secImport)
	if s == nil {
		return 0, nil
	}
	b := s.payload
	cnt, p, err := wasmbin.Uleb(b)
	if err != nil {
		return 0, err
	}
	var funcs uint64
	for k := uint64(0); k < cnt; k++ {
		for range 2 { // module and field names
			l, n, err := wasmbin.Uleb(b[p:])
			if err != nil || uint64(len(b)-p-n) < l {
				return 0, errors.New("import section: truncated")
			}
			p += n + int(l)
		}
		if p >= len(b) {
			return 0, errors.New("import section: truncated")
		}
		kind := b[p]
		p++
		switch kind {
		case 0: // function: a type index
			_, n, err := wasmbin.Uleb(b[p:])
			if err != nil {
				return 0, err
			}
			p += n
			funcs++
		case 1: // table: reftype, limits
			n, err := wasmbin.SkipLimits(b[p+1:])
			if err != nil {
				return 0, err
			}
			p += 1 + n
		case 2: // memory: limits
			n, err := wasmbin.SkipLimits(b[p:])
			if err != nil {
				return 0, err
			}
			p += n
		case 3: // global: value type, mutability
			p += 2
		default:
			return 0, fmt.Errorf("import section: import kind %d", kind)
		}
	}
	return funcs, nil
}

// exportedFunc is the function index export names.
func (m *module) exportedFunc(name string) (uint64, error) {
	s := m.find(secExport)
	if s == nil {
		return 0, errors.New("no export section")
	}
	b := s.payload
	cnt, p, err := wasmbin.Uleb(b)
	if err != nil {
		return 0, err
	}
	for k := uint64(0); k < cnt; k++ {
		l, n, err := wasmbin.Uleb(b[p:])
		if err != nil || uint64(len(b)-p-n) < l+1 {
			return 0, errors.New("export section: truncated")
		}
		got := string(b[p+n : p+n+int(l)])
		p += n + int(l)
		kind := b[p]
		idx, n, err := wasmbin.Uleb(b[p+1:])
		if err != nil {
			return 0, errors.New("export section: truncated")
		}
		p += 1 + n
		if kind == 0 && got == name {
			return idx, nil
		}
	}
	return 0, fmt.Errorf("the module exports no function %s", name)
}

// inject appends body as a new function () → () and calls it first thing
// in export's body; with signal set, only when the export's two i32
// parameters are the halves of signal's FNV-1a hash (getInputSignalSize's).
func inject(wasm []byte, export, signal string, body []byte) ([]byte, error) {
	m, err := parse(wasm)
	if err != nil {
		return nil, err
	}
	types, funcs, codes := m.find(secType), m.find(secFunction), m.find(secCode)
	if types == nil || funcs == nil || codes == nil {
		return nil, errors.New("no type, function or code section")
	}
	imported, err := m.importedFuncs()
	if err != nil {
		return nil, err
	}
	target, err := m.exportedFunc(export)
	if err != nil {
		return nil, err
	}
	if target < imported {
		return nil, fmt.Errorf("%s is an imported function", export)
	}
	nTypes, _, err := wasmbin.Uleb(types.payload)
	if err != nil {
		return nil, err
	}
	nFuncs, _, err := wasmbin.Uleb(funcs.payload)
	if err != nil {
		return nil, err
	}
	newFunc := imported + nFuncs
	types.payload = wasmbin.AppendVec(types.payload, nTypes, []byte{0x60, 0x00, 0x00})
	funcs.payload = wasmbin.AppendVec(funcs.payload, nFuncs, wasmbin.AppendUleb(nil, nTypes))

	call := wasmbin.AppendUleb([]byte{0x10}, newFunc)
	if signal != "" {
		h := fnv64(signal)
		var p []byte
		p = append(p, 0x20, 0x00, 0x41)
		p = appendSleb(p, int64(int32(uint32(h>>32))))
		p = append(p, 0x46, 0x20, 0x01, 0x41)
		p = appendSleb(p, int64(int32(uint32(h))))
		p = append(p, 0x46, 0x71, 0x04, 0x40) // i32.eq, i32.eq, i32.and, if
		p = append(p, call...)
		call = append(p, 0x0b) // end if
	}

	// Code section: one entry (size, locals, expression) per own function.
	b := codes.payload
	cnt, p, err := wasmbin.Uleb(b)
	if err != nil || cnt != nFuncs {
		return nil, errors.New("code section: not one body per function")
	}
	out := wasmbin.AppendUleb(nil, cnt+1)
	for k := uint64(0); k < cnt; k++ {
		size, n, err := wasmbin.Uleb(b[p:])
		if err != nil || uint64(len(b)-p-n) < size {
			return nil, errors.New("code section: truncated")
		}
		entry := b[p+n : p+n+int(size)]
		p += n + int(size)
		if imported+k == target {
			at, err := skipLocals(entry)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", export, err)
			}
			entry = append(append(append([]byte(nil), entry[:at]...), call...), entry[at:]...)
		}
		out = wasmbin.AppendUleb(out, uint64(len(entry)))
		out = append(out, entry...)
	}
	out = wasmbin.AppendUleb(out, uint64(len(body)))
	codes.payload = append(out, body...)
	return m.bytes(), nil
}

// skipLocals returns where a function body's expression starts, after its
// locals declarations (a vector of count, value type).
func skipLocals(entry []byte) (int, error) {
	groups, p, err := wasmbin.Uleb(entry)
	if err != nil {
		return 0, errors.New("locals: truncated")
	}
	for g := uint64(0); g < groups; g++ {
		_, n, err := wasmbin.Uleb(entry[p:])
		if err != nil || p+n >= len(entry) {
			return 0, errors.New("locals: truncated")
		}
		p += n + 1
	}
	return p, nil
}

func appendSleb(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// fnv64 is FNV-1a, as circom hashes input signal names.
func fnv64(s string) uint64 {
	h := uint64(0xCBF29CE484222325)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 0x100000001B3
	}
	return h
}
