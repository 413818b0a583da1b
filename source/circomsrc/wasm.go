package circomsrc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/proofdata"
)

// Calculator runs circom's witness calculator (the circuit_js/circuit.wasm
// circom writes) in Go on wazero, as circom's witness_calculator.js does in
// Node: set each input signal through the shared read-write memory, then
// read the witness back a field element at a time.
//
// The module is compiled once; instances are pooled, one per concurrent
// computation (a module instance is not safe for concurrent use), and an
// instance whose run failed is dropped rather than reused.
type Calculator struct {
	rt          wazero.Runtime
	code        wazero.CompiledModule
	n32         int         // 32-bit words in a field element
	cc          circomCurve // the curve whose r is the module's prime
	witnessSize int
	nInputs     int

	mu   sync.Mutex
	free []*instance
	made int // instances instantiated: one per concurrent computation, and one after each failure

	// bulk: the module was given zkpipeReadWitness (wasmpatch.go), and the
	// witness is read a chunk of wires a call; noBulk says why not.
	bulk   bool
	noBulk error

	// limitPages is the most memory an instance may hold (Limits.Memory),
	// timeout each job's deadline (Limits.Timeout, or by the circuit's size).
	limitPages uint32
	timeout    time.Duration

	wordByWord bool // tests: use the per-word calls even where direct access works
	wireByWire bool // tests: read a wire a call even where bulk reads work
}

// Limits bound what a witness calculator may take: its wasm is the user's
// code, so every call into it runs under a deadline and its memory under a
// limit that each job's memory reservation counts (JobBytes).
type Limits struct {
	// Memory is the most linear memory one instance may hold, in bytes,
	// rounded up to 64 KiB pages, at most wasm32's 4 GiB; 0 means
	// DefaultWasmMemory of the module's declared memory. A module that
	// declares more is refused at load; a job whose calculation needs more
	// fails alone (memory.grow fails inside it, and circom's code aborts).
	Memory int64
	// Budget, when Memory is 0 and Budget is not, lowers the default to an
	// eighth of this memory budget, so that input jobs' reservations leave
	// room for several at once (a module that declares more is refused:
	// give Memory).
	Budget int64
	// Timeout is the deadline of each job's witness calculation, from its
	// first call into the module to its last, and of the calls
	// NewCalculator makes at load; 0 means DefaultWasmTimeout of the
	// circuit's wires (at load, of none). A calculation past its deadline is
	// stopped (wazero checks at every loop and call) and its instance dropped.
	Timeout time.Duration
	// Hold, when set, reserves the host memory of the instance that
	// NewCalculatorWith makes at load (its memory limit, which wazero
	// allocates whole) with the caller's memory budget before the instance
	// is made, and release is called once it is dropped: with Hold the
	// load's instance is not kept for the first job (whose own reservation
	// counts the instance it takes), so nothing of the load outlives its
	// hold. An error refuses the load. nil: not reserved, and the load's
	// instance kept for the first job (prove, whose circuits load before
	// any job is admitted).
	Hold func(ctx context.Context, bytes int64) (release func(), err error)
}

// wasmPage is a wasm memory page; wasm32 addresses 65 536 of them (4 GiB).
const (
	wasmPage      = 1 << 16
	maxWasmMemory = 1 << 32
)

// DefaultWasmMemory is the memory limit of a module that declares initial
// bytes: four times that, at least 256 MiB, at most wasm32's 4 GiB. circom
// sizes a module's initial memory for its signals and components; it grows
// beyond only for deep call stacks.
func DefaultWasmMemory(initial int64) int64 {
	return min(max(4*initial, 256<<20), maxWasmMemory)
}

// DefaultWasmTimeout is the deadline of one witness calculation of a
// circuit of wires wires: a minute, and a second more for each 16 384
// wires. circom's calculator on wazero computes about 330 000 wires a
// second (SHA-256's 2¹⁶ in 201 CPU ms, notes/circom.md), so this is some
// twenty times what a circuit of millions of wires needs, more for smaller
// ones: it only catches a calculation that will never end.
func DefaultWasmTimeout(wires int) time.Duration {
	return time.Minute + time.Duration(max(wires, 0)/16384)*time.Second
}

// MemoryLimit is the most linear memory one instance may hold, in bytes.
func (c *Calculator) MemoryLimit() int64 { return int64(c.limitPages) * wasmPage }

// Timeout is the deadline of one witness calculation.
func (c *Calculator) Timeout() time.Duration { return c.timeout }

// JobBytes is the host memory one calculation may hold at its peak: its
// instance's memory at the limit. wazero allocates each instance's memory
// at its limit once (WithMemoryCapacityFromMax; untouched pages cost
// nothing) rather than reallocating it as it grows: grown page by page to
// 256 MiB, reallocation took 1 GB of RSS in garbage copies, one allocation
// 300 MB.
func (c *Calculator) JobBytes() int64 { return c.MemoryLimit() }

// readChunk is how many wires zkpipeReadWitness copies a call: 2 MiB of
// the instance's memory (32 pages it adds once), one call per 65 536
// wires, however large the circuit.
const readChunk = 1 << 16

// instance is one module instance with its exports looked up once:
// ExportedFunction builds a new call engine (and stack) on every lookup,
// which dominated the witness computation when done per call.
type instance struct {
	m     api.Module
	fns   map[string]api.Function
	stack []uint64
	// shared is the address of the shared read-write memory in the module's
	// memory, when it exports getSharedRWMemoryStart and its memory (circom
	// 2.1 on): values are then copied in and out directly, not a 32-bit word
	// a call (each call costs about a microsecond, most of it the goroutine
	// wazero starts to watch the context).
	shared uint32
	direct bool
	// chunk is the address of the readChunk wires' buffer the instance
	// added to its memory, once it has (chunkOK); chunkTried after the
	// first attempt (a memory at its maximum refuses to grow: the instance
	// then reads a wire a call).
	chunk               uint32
	chunkOK, chunkTried bool
	// pages is the memory the instance holds between jobs: what it was
	// instantiated with, and the bulk reader's buffer. One that grew beyond
	// in a job is dropped, not pooled, so that idle instances hold no more.
	pages uint32
}

// memPages is the instance's memory now, in pages.
func (i *instance) memPages() uint32 {
	p, _ := i.m.Memory().Grow(0)
	return p
}

// growChunk adds the bulk reader's buffer to the instance's memory, once,
// and tells whether the instance has it.
func (i *instance) growChunk() bool {
	if !i.chunkTried {
		i.chunkTried = true
		if prev, ok := i.m.Memory().Grow(readChunk * 32 / wasmPage); ok {
			i.chunk, i.chunkOK = prev*wasmPage, true
			i.pages = i.memPages()
		}
	}
	return i.chunkOK
}

// writeShared puts v (below 2²⁵⁶) into the shared memory, little-endian.
func (i *instance) writeShared(ctx context.Context, n32 int, v *big.Int) error {
	var b [32]byte
	v.FillBytes(b[:])
	for l, r := 0, 31; l < r; l, r = l+1, r-1 {
		b[l], b[r] = b[r], b[l]
	}
	if i.direct {
		if !i.m.Memory().Write(i.shared, b[:]) {
			return fmt.Errorf("wasm: shared memory at %d is outside the module's memory", i.shared)
		}
		return nil
	}
	for j := 0; j < n32; j++ {
		w := uint64(b[4*j]) | uint64(b[4*j+1])<<8 | uint64(b[4*j+2])<<16 | uint64(b[4*j+3])<<24
		if _, err := i.call(ctx, "writeSharedRWMemory", uint64(j), w); err != nil {
			return err
		}
	}
	return nil
}

// readShared copies the shared memory's field element into b, little-endian.
func (i *instance) readShared(ctx context.Context, n32 int, b *[32]byte) error {
	if i.direct {
		m, ok := i.m.Memory().Read(i.shared, 32)
		if !ok {
			return fmt.Errorf("wasm: shared memory at %d is outside the module's memory", i.shared)
		}
		copy(b[:], m)
		return nil
	}
	for j := 0; j < n32; j++ {
		x, err := i.call(ctx, "readSharedRWMemory", uint64(j))
		if err != nil {
			return err
		}
		b[4*j], b[4*j+1], b[4*j+2], b[4*j+3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
	}
	return nil
}

// call calls an export of i with args and returns its first result, if any.
func (i *instance) call(ctx context.Context, name string, args ...uint64) (uint64, error) {
	f, ok := i.fns[name]
	if !ok {
		if f = i.m.ExportedFunction(name); f == nil {
			return 0, fmt.Errorf("the module exports no %s: not a circom 2 witness calculator", name)
		}
		i.fns[name] = f
	}
	i.stack = append(i.stack[:0], args...)
	for len(i.stack) < 4 {
		i.stack = append(i.stack, 0)
	}
	if err := f.CallWithStack(ctx, i.stack); err != nil {
		return 0, err
	}
	if len(f.Definition().ResultTypes()) == 0 {
		return 0, nil
	}
	return i.stack[0], nil
}

// wasmFailure is what circom's runtime.exceptionHandler codes mean, from
// witness_calculator.js.
var wasmFailure = map[uint32]string{
	1: "signal not found",
	2: "too many signals set",
	3: "signal already set",
	4: "assert failed",
	5: "not enough memory",
	6: "input signal array access exceeds the size",
	7: "out of bounds array access",
}

// callState is one computation's messages, reached by the host functions
// through the call's context.
type callState struct {
	errs strings.Builder // printErrorMessage: why an assert failed, and where
	fail error           // set by exceptionHandler before it aborts the call
}

type callKey struct{}

// errAbort unwinds a call from exceptionHandler; callState.fail says why.
var errAbort = errors.New("circom witness calculator aborted")

// NewCalculator compiles a circom witness-calculator module and checks that it
// computes BN254 witnesses, with the default Limits.
func NewCalculator(ctx context.Context, wasm []byte) (*Calculator, error) {
	return NewCalculatorWith(ctx, wasm, Limits{})
}

// NewCalculatorWith is NewCalculator under lim. The exports it calls run
// under lim.Timeout (DefaultWasmTimeout(0) when 0): a module that loops in
// one fails to load, saying which, instead of hanging start-up.
func NewCalculatorWith(ctx context.Context, wasm []byte, lim Limits) (*Calculator, error) {
	if lim.Memory < 0 || lim.Memory > maxWasmMemory {
		return nil, fmt.Errorf("wasm: a memory limit of %d bytes (circomsrc.Limits.Memory): want 0 (the default) up to wasm32's 4 GiB", lim.Memory)
	}
	if lim.Timeout < 0 {
		return nil, fmt.Errorf("wasm: a deadline of %s (circomsrc.Limits.Timeout): want 0 (the default, by the circuit's size) or more", lim.Timeout)
	}
	initial, err := declaredMemory(wasm)
	if err != nil {
		return nil, fmt.Errorf("wasm: not a circom witness calculator: %w", err)
	}
	limit := lim.Memory
	if limit == 0 {
		limit = DefaultWasmMemory(initial)
		if lim.Budget > 0 {
			limit = min(limit, lim.Budget/8)
		}
	}
	pages := uint32((limit + wasmPage - 1) / wasmPage)
	if initial > int64(pages)*wasmPage {
		return nil, fmt.Errorf("wasm: the module declares %s of memory, more than its limit of %s (circomsrc.Limits.Memory)",
			formatBytes(initial), formatBytes(int64(pages)*wasmPage))
	}
	loadTimeout := lim.Timeout
	if loadTimeout == 0 {
		loadTimeout = DefaultWasmTimeout(0)
	}
	parent := ctx

	// CloseOnContextDone lets a deadline or a cancelled job stop a
	// computation: wazero checks the context at every loop and call. The
	// memory limit is each instance's capacity, allocated once (JobBytes).
	rt := wazero.NewRuntimeWithConfig(parent, wazero.NewRuntimeConfig().
		WithCloseOnContextDone(true).
		WithMemoryLimitPages(pages).
		WithMemoryCapacityFromMax(true))
	c := &Calculator{rt: rt, limitPages: pages, timeout: lim.Timeout}
	fail := func(err error) (*Calculator, error) {
		rt.Close(parent)
		return nil, err
	}
	message := func(ctx context.Context, m api.Module) string {
		var b strings.Builder
		f := m.ExportedFunction("getMessageChar")
		for f != nil && b.Len() < 4096 {
			r, err := f.Call(ctx)
			if err != nil || len(r) == 0 || uint32(r[0]) == 0 {
				break
			}
			b.WriteByte(byte(r[0]))
		}
		return b.String()
	}
	state := func(ctx context.Context) *callState {
		if s, ok := ctx.Value(callKey{}).(*callState); ok {
			return s
		}
		return new(callState)
	}
	_, err = rt.NewHostModuleBuilder("runtime").
		NewFunctionBuilder().WithFunc(func(ctx context.Context, code uint32) {
		s := state(ctx)
		what, ok := wasmFailure[code]
		if !ok {
			what = fmt.Sprintf("error code %d", code)
		}
		if msg := strings.TrimSpace(s.errs.String()); msg != "" {
			what += ": " + strings.ReplaceAll(msg, "\n", "; ")
		}
		s.fail = errors.New(what)
		panic(errAbort)
	}).Export("exceptionHandler").
		NewFunctionBuilder().WithFunc(func(ctx context.Context, m api.Module) {
		s := state(ctx)
		if s.errs.Len() < 4096 {
			s.errs.WriteString(message(ctx, m))
			s.errs.WriteByte('\n')
		}
	}).Export("printErrorMessage").
		// log() output of the circuit is read (the module expects it) and dropped.
		NewFunctionBuilder().WithFunc(func(ctx context.Context, m api.Module) { message(ctx, m) }).Export("writeBufferMessage").
		NewFunctionBuilder().WithFunc(func(context.Context) {}).Export("showSharedRWMemory").
		Instantiate(ctx)
	if err != nil {
		return fail(fmt.Errorf("wasm: host module: %w", err))
	}
	// The module with the bulk witness reader, if it takes one; a module
	// that does not is compiled as it is (and read a wire a call).
	if patched, perr := addWitnessReader(wasm); perr != nil {
		c.noBulk = perr
	} else if c.code, perr = rt.CompileModule(ctx, patched); perr != nil {
		c.noBulk = fmt.Errorf("the module with %s does not compile: %w", readWitnessExport, perr)
	} else {
		c.bulk = true
	}
	if !c.bulk {
		if c.code, err = rt.CompileModule(ctx, wasm); err != nil {
			return fail(fmt.Errorf("wasm: not a circom witness calculator: %w", err))
		}
	}
	// Every call at load runs under the deadline, from here (compiling is
	// wazero's work, not the module's); ctx's cancellation (a signal during
	// start-up) stops it too.
	ctx, cancel := context.WithTimeout(parent, loadTimeout)
	defer cancel()
	if lim.Hold != nil {
		release, err := lim.Hold(parent, c.MemoryLimit())
		if err != nil {
			return fail(fmt.Errorf("wasm: the witness calculator's instance at load (%s, its memory limit: circomsrc.Limits.Memory): %w", formatBytes(c.MemoryLimit()), err))
		}
		defer release() // after the instance is closed (below)
	}
	in, err := c.instance(ctx)
	if err != nil {
		return fail(fmt.Errorf("wasm: %w", c.failure(parent, ctx, nil, loadTimeout, "instantiating the module", err)))
	}
	if lim.Hold != nil {
		defer in.m.Close(parent)
	} else {
		defer c.put(in)
	}
	call := func(name string, args ...uint64) uint64 {
		if err != nil {
			return 0
		}
		var r uint64
		if r, err = in.call(ctx, name, args...); err != nil {
			err = c.failure(parent, ctx, in, loadTimeout, name+" at load", err)
		}
		return r
	}
	if c.n32 = int(int32(call("getFieldNumLen32"))); err == nil && c.n32 != 8 {
		return fail(fmt.Errorf("wasm: the witness calculator's field elements are %d 32-bit words; only %s (8) are supported", c.n32, supported))
	}
	call("getRawPrime")
	prime := c.readWords(func(j int) uint64 { return call("readSharedRWMemory", uint64(j)) })
	c.witnessSize = int(call("getWitnessSize"))
	c.nInputs = int(call("getInputSize"))
	if err != nil {
		return fail(fmt.Errorf("wasm: %w", err))
	}
	var ok bool
	if c.cc, ok = curveByModulus(prime, false); !ok {
		return fail(fmt.Errorf("wasm: the witness calculator is for the prime %s; only %s are supported", prime, supported))
	}
	if c.timeout == 0 {
		c.timeout = DefaultWasmTimeout(c.witnessSize)
	}
	return c, nil
}

// failure says why a call into the module failed: parent ended (the
// stream's cancellation), the call's ctx passed its deadline d, or the
// instance's memory reached its limit (memory.grow failed, and the module
// trapped); what names the call.
func (c *Calculator) failure(parent, ctx context.Context, in *instance, d time.Duration, what string, err error) error {
	switch {
	case parent.Err() != nil:
		return fmt.Errorf("%s stopped: %w", what, context.Cause(parent))
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%s ran past its deadline of %s (circomsrc.Limits.Timeout); stopped", what, d)
	case in != nil && in.memPages() >= c.limitPages:
		return fmt.Errorf("%s reached the witness calculator's memory limit of %s (circomsrc.Limits.Memory): %w", what, formatBytes(c.MemoryLimit()), err)
	}
	return err
}

// formatBytes writes a size in binary units, as zkpipe's flags take them.
func formatBytes(b int64) string {
	switch {
	case b >= 1<<30 && b%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", b>>30)
	case b >= 1<<20 && b%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", b>>20)
	case b >= 1<<10 && b%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", b>>10)
	}
	return fmt.Sprintf("%d bytes", b)
}

// WitnessSize is the number of wires the calculator produces.
func (c *Calculator) WitnessSize() int { return c.witnessSize }

// Curve is the curve whose scalar field is the module's prime.
func (c *Calculator) Curve() curve.ID { return c.cc.id() }

// Close frees the runtime and every instance.
func (c *Calculator) Close(ctx context.Context) error { return c.rt.Close(ctx) }

// readWords reads a field element from the shared memory, word j (little
// end first) from read(j).
func (c *Calculator) readWords(read func(j int) uint64) *big.Int {
	b := make([]byte, 4*c.n32)
	for j := 0; j < c.n32; j++ {
		w := uint32(read(j))
		i := len(b) - 4*(j+1)
		b[i], b[i+1], b[i+2], b[i+3] = byte(w>>24), byte(w>>16), byte(w>>8), byte(w)
	}
	return new(big.Int).SetBytes(b)
}

func (c *Calculator) instance(ctx context.Context) (*instance, error) {
	c.mu.Lock()
	if n := len(c.free); n > 0 {
		m := c.free[n-1]
		c.free = c.free[:n-1]
		c.mu.Unlock()
		return m, nil
	}
	c.made++
	c.mu.Unlock()
	// Anonymous instances: wazero allows any number of unnamed ones.
	m, err := c.rt.InstantiateModule(ctx, c.code, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	if err != nil {
		return nil, fmt.Errorf("wasm: instantiate: %w", err)
	}
	in := &instance{m: m, fns: map[string]api.Function{}}
	in.pages = in.memPages()
	if m.ExportedFunction("getSharedRWMemoryStart") != nil && m.Memory() != nil {
		start, err := in.call(ctx, "getSharedRWMemoryStart")
		if err != nil {
			m.Close(ctx)
			return nil, fmt.Errorf("wasm: %w", err)
		}
		in.shared, in.direct = uint32(start), true
	}
	return in, nil
}

func (c *Calculator) put(in *instance) {
	c.mu.Lock()
	c.free = append(c.free, in)
	c.mu.Unlock()
}

// Calculate computes the full witness for the circuit inputs in input, a JSON
// object whose values are numbers, decimal or 0x-hex strings, or (nested)
// arrays and objects of them, as witness_calculator.js takes them. Inputs the
// circuit rejects (a failed assert, a missing or unknown signal) are errors.
func (c *Calculator) Calculate(ctx context.Context, input json.RawMessage) ([]proofdata.Scalar, error) {
	w := make([]proofdata.Scalar, c.witnessSize)
	if err := c.CalculateInto(ctx, input, w); err != nil {
		return nil, err
	}
	return w, nil
}

// CalculateInto is Calculate writing the witness into w (Montgomery form of
// the Curve's Fr), which must hold WitnessSize elements (a vector from the engine's pools: every element is
// written, whatever it held).
func (c *Calculator) CalculateInto(ctx context.Context, input json.RawMessage, w []proofdata.Scalar) (err error) {
	if len(w) != c.witnessSize {
		return fmt.Errorf("wasm: a witness of %d wires into %d elements", c.witnessSize, len(w))
	}
	signals, err := flattenInput(input, c.cc.r())
	if err != nil {
		return err
	}
	// One deadline for the whole calculation; ctx's cancellation (the
	// stream aborted) stops it too.
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	in, err := c.instance(ctx)
	if err != nil {
		return fmt.Errorf("wasm: %w", c.failure(parent, ctx, nil, c.timeout, "the witness calculation", err))
	}
	if c.wordByWord {
		in.direct = false
	}
	st := new(callState)
	ctx = context.WithValue(ctx, callKey{}, st)
	defer func() {
		if err == nil && in.memPages() <= in.pages {
			c.put(in)
			return
		}
		// Failed (its memory may be half-written, or wazero closed it at
		// the deadline), or grown past its idle size: dropped.
		if err != nil {
			err = fmt.Errorf("wasm: %w", c.failure(parent, ctx, in, c.timeout, "the witness calculation", err))
			switch {
			case st.fail != nil && in.memPages() >= c.limitPages:
				// circom's own "not enough memory": the limit's doing, not the inputs'
				err = fmt.Errorf("wasm: the witness calculation reached the witness calculator's memory limit of %s (circomsrc.Limits.Memory): %w",
					formatBytes(c.MemoryLimit()), st.fail)
			case st.fail != nil:
				err = fmt.Errorf("inputs rejected by the circuit: %w", st.fail)
			}
		}
		in.m.Close(context.Background())
	}()
	call := func(name string, args ...uint64) (uint64, error) { return in.call(ctx, name, args...) }

	if _, err := call("init", 0); err != nil {
		return err
	}
	set := 0
	for _, s := range signals {
		h := fnv64(s.name)
		r, err := call("getInputSignalSize", h>>32, h&0xffffffff)
		if err != nil {
			return err
		}
		size := int32(uint32(r))
		switch {
		case size <= 0: // circom answers 0 or −1 for a name it does not know
			return fmt.Errorf("inputs rejected by the circuit: signal %s not found", s.name)
		case int(size) > len(s.values):
			return fmt.Errorf("inputs rejected by the circuit: not enough values for input signal %s (%d of %d)", s.name, len(s.values), size)
		case int(size) < len(s.values):
			return fmt.Errorf("inputs rejected by the circuit: too many values for input signal %s (%d for %d)", s.name, len(s.values), size)
		}
		for i, v := range s.values {
			if err := in.writeShared(ctx, c.n32, v); err != nil {
				return err
			}
			if _, err := call("setInputSignal", h>>32, h&0xffffffff, uint64(i)); err != nil {
				return err
			}
			set++
		}
	}
	if set < c.nInputs {
		return fmt.Errorf("inputs rejected by the circuit: only %d of %d input values set", set, c.nInputs)
	}

	if c.bulk && in.direct && !c.wireByWire && in.growChunk() {
		return c.readBulk(ctx, in, w)
	}
	var b [32]byte
	for i := range w {
		if _, err := call("getWitness", uint64(i)); err != nil {
			return err
		}
		if err := in.readShared(ctx, c.n32, &b); err != nil {
			return err
		}
		if _, err := c.cc.fromLE(w[i:i+1], b[:]); err != nil {
			return fmt.Errorf("wasm: witness value %d: %w", i, err)
		}
	}
	return nil
}

// readBulk reads the computed witness into w through zkpipeReadWitness, a
// chunk of readChunk wires a call into the instance's buffer (growChunk):
// the values come out in normal form, little-endian, 32 bytes each.
func (c *Calculator) readBulk(ctx context.Context, in *instance, w []proofdata.Scalar) error {
	mem := in.m.Memory()
	for from := 0; from < len(w); from += readChunk {
		to := min(from+readChunk, len(w))
		if _, err := in.call(ctx, readWitnessExport, uint64(in.chunk), uint64(from), uint64(to)); err != nil {
			return err
		}
		buf, ok := mem.Read(in.chunk, uint32(32*(to-from)))
		if !ok {
			return fmt.Errorf("wasm: witness buffer at %d is outside the module's memory", in.chunk)
		}
		if k, err := c.cc.fromLE(w[from:to], buf); err != nil {
			return fmt.Errorf("wasm: witness value %d: %w", from+k, err)
		}
	}
	return nil
}

// signal is one qualified input name ("a", "in[2]", "x.y") and its values
// in order, each reduced modulo r.
type signal struct {
	name   string
	values []*big.Int
}

// flattenInput qualifies input as witness_calculator.js's qualify_input does:
// object keys join with ".", an array of objects gives name[i] prefixes, and
// an array of numbers (nested or not) is one signal's values, flattened,
// each reduced modulo the circuit's prime p.
func flattenInput(raw json.RawMessage, p *big.Int) ([]signal, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("input: want a JSON object of signals, got %s", kindOf(v))
	}
	var out []signal
	var walk func(prefix string, v any) error
	walk = func(prefix string, v any) error {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(x) {
				name := k
				if prefix != "" {
					name = prefix + "." + k
				}
				if err := walk(name, x[k]); err != nil {
					return err
				}
			}
			return nil
		case []any:
			if hasObjects(x) {
				for i, e := range x {
					if err := walk(fmt.Sprintf("%s[%d]", prefix, i), e); err != nil {
						return err
					}
				}
				return nil
			}
		}
		s := signal{name: prefix}
		if err := flatValues(prefix, v, p, &s.values); err != nil {
			return err
		}
		out = append(out, s)
		return nil
	}
	if err := walk("", obj); err != nil {
		return nil, err
	}
	return out, nil
}

func hasObjects(a []any) bool {
	for _, e := range a {
		switch x := e.(type) {
		case map[string]any:
			return true
		case []any:
			if hasObjects(x) {
				return true
			}
		}
	}
	return false
}

func flatValues(name string, v any, p *big.Int, out *[]*big.Int) error {
	var x *big.Int
	var err error
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			if err := flatValues(name, e, p, out); err != nil {
				return err
			}
		}
		return nil
	case json.Number:
		x, err = numberValue(string(v))
	case string:
		x, err = stringValue(v)
	case bool: // BigInt(true) is 1n
		x = big.NewInt(0)
		if v {
			x.SetInt64(1)
		}
	default:
		err = fmt.Errorf("want a number or a string of one, got %s", kindOf(v))
	}
	if err != nil {
		return fmt.Errorf("input %s: %w", name, err)
	}
	// normalize: BigInt(n) % p, plus p when negative (Go's Mod is Euclidean)
	*out = append(*out, x.Mod(x, p))
	return nil
}

// maxValueChars bounds one input value's text. Go's decimal parse is
// quadratic in the length (a 4 MB value takes 35 s, the 16 MB a job line may
// hold some minutes), and a field element is at most 77 decimal digits, or
// 258 characters in 0b binary; leading zeros and signs fit well within.
const maxValueChars = 1024

// stringValue is BigInt(s) of JavaScript, which witness_calculator.js's
// normalize applies to each input: surrounding white space is dropped, ""
// is 0, and the rest is a decimal with an optional sign, or 0x, 0o or 0b
// and digits of that base without a sign. Anything else (1e3, 1.0, -0x3,
// 1_000) is refused, as BigInt throws a SyntaxError on it.
func stringValue(s string) (*big.Int, error) {
	t := strings.TrimFunc(s, isJSSpace)
	if len(t) > maxValueChars {
		return nil, fmt.Errorf("a value of %d characters, more than the %d an integer input may have", len(t), maxValueChars)
	}
	if t == "" {
		return new(big.Int), nil
	}
	base, digits, neg := 10, t, false
	if len(t) > 2 && t[0] == '0' {
		switch t[1] {
		case 'x', 'X':
			base, digits = 16, t[2:]
		case 'o', 'O':
			base, digits = 8, t[2:]
		case 'b', 'B':
			base, digits = 2, t[2:]
		}
	}
	if base == 10 && (t[0] == '+' || t[0] == '-') {
		neg, digits = t[0] == '-', t[1:]
	}
	if digits == "" || strings.ContainsFunc(digits, func(r rune) bool { return !isDigit(r, base) }) {
		return nil, fmt.Errorf("%s is not an integer (snarkjs's BigInt refuses it too)", quoteShort(s))
	}
	v, ok := new(big.Int).SetString(digits, base)
	if !ok {
		return nil, fmt.Errorf("%s is not an integer", quoteShort(s))
	}
	if neg {
		v.Neg(v)
	}
	return v, nil
}

func isDigit(r rune, base int) bool {
	switch {
	case r >= '0' && r <= '9':
		return int(r-'0') < base
	case base == 16:
		return (r >= 'a' && r <= 'f') || (r >= 'A' && r <= 'F')
	}
	return false
}

// isJSSpace is JavaScript's white space and line terminators, what
// BigInt(string) trims: tab, vertical tab, form feed, the Zs spaces, the
// byte order mark, and LF, CR, U+2028 and U+2029.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\v', '\f', '\n', '\r', 0xfeff, 0x2028, 0x2029:
		return true
	}
	return unicode.Is(unicode.Zs, r)
}

// numberValue is a JSON number as snarkjs gets it: JSON.parse makes it a
// double, and BigInt(double) refuses a fraction or an infinity
// (RangeError). A number the double does not hold exactly (beyond 2⁵³ in
// general, 12345678901234567890123, 1e-400) is refused too, though snarkjs
// would round it silently and prove another value than the one written:
// give such a value as a string.
func numberValue(s string) (*big.Int, error) {
	if len(s) > maxValueChars {
		return nil, fmt.Errorf("a number of %d characters, more than the %d an integer input may have", len(s), maxValueChars)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, fmt.Errorf("%s is not a number", quoteShort(s))
	}
	if math.IsInf(f, 0) {
		return nil, fmt.Errorf("%s is beyond a JavaScript number (snarkjs refuses it); give it as a decimal string", quoteShort(s))
	}
	if f != math.Trunc(f) {
		return nil, fmt.Errorf("%s is not an integer", quoteShort(s))
	}
	mantissa, _, _ := strings.Cut(strings.ToLower(s), "e")
	if f == 0 {
		if strings.Trim(mantissa, "-+0.") != "" {
			return nil, fmt.Errorf("%s is not an integer", quoteShort(s))
		}
		return new(big.Int), nil
	}
	// |f| ≥ 1 and finite, and the text at most 1024 characters: its
	// exponent is small, so the exact value is cheap to make.
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("%s is not a number", quoteShort(s))
	}
	if _, exact := r.Float64(); !exact || !r.IsInt() {
		return nil, fmt.Errorf("%s is more than a JavaScript number holds exactly (snarkjs would round it to %s); give it as a decimal string",
			quoteShort(s), new(big.Float).SetFloat64(f).Text('f', 0))
	}
	return new(big.Int).Set(r.Num()), nil
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// fnv64 is FNV-1a over the name's bytes, which circom uses to look input
// signals up (witness_calculator.js's fnvHash).
func fnv64(s string) uint64 {
	h := uint64(0xCBF29CE484222325)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 0x100000001B3
	}
	return h
}
