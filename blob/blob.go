// Package blob holds a job's files as values: the input a source reads (a
// witness, a .wtns) and the named outputs it writes (ID.proof, ID.public,
// ID.proof.json, ID.calldata, …), so that a directory, an object store or
// memory can stand behind them. The sources read an Input with the same
// bounded readers they read a file with, and write through a Writer; the
// engine's output directory is one Writer, a fleet worker's object store
// another.
package blob

import (
	"bytes"
	"io"
	"sync"

	"github.com/zkpipe/zkpipe/mem"
)

// Writer stores a job's outputs, each a named blob.
type Writer interface {
	// Write stores data under name, whole or not at all, and returns the
	// path a reader should use (a result line's proof, public, calldata).
	// Writing the same name again replaces it atomically, so a job
	// delivered twice is harmless. The writer must not keep data.
	Write(name string, data []byte) (string, error)
}

// Input is a job's input file (a gnark binary witness, a .wtns) as a value
// instead of a path: its bytes, in hand (a fleet worker fetched them from
// its store). The source reads them as it reads a file, with the same
// bounds (exact size, header checked before any value is allocated), and
// Releases them once decoded.
//
// Hold, when set, is the memory governor's charge for the bytes: they are
// resident from the moment they are fetched, before the job's own
// reservation exists (admission comes after parse), so whoever fetched
// them charges them, and Release gives the charge back. Safe for
// concurrent use.
type Input struct {
	name string

	mu   sync.Mutex
	data []byte
	hold *mem.Reservation
	gone bool
}

// NewInput makes an Input of data, named name in messages ("witness object
// a@1.witness"); hold (nil: none) is closed by Release. The Input owns data
// from then on: the caller must not change it.
func NewInput(name string, data []byte, hold *mem.Reservation) *Input {
	return &Input{name: name, data: data, hold: hold}
}

// Name is what the input is, for messages.
func (in *Input) Name() string { return in.name }

// Open returns a reader of the input's bytes and their number. After
// Release it returns ok false.
func (in *Input) Open() (r io.Reader, size int64, ok bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.gone {
		return nil, 0, false
	}
	return bytes.NewReader(in.data), int64(len(in.data)), true
}

// Release drops the bytes (a reader from Open still holds them until it
// is dropped) and closes the hold. Safe more than once, and on nil.
func (in *Input) Release() {
	if in == nil {
		return
	}
	in.mu.Lock()
	hold := in.hold
	in.data, in.hold, in.gone = nil, nil, true
	in.mu.Unlock()
	hold.Close()
}

// Memory is a Writer that keeps a job's outputs in memory, in the order
// they were written, for a caller that wants values, not paths (the
// library's Engine.Prove; a fleet worker, which stores them in its object
// store). Write returns the name itself: where the blobs end up, under the
// same names, is the caller's. Safe for concurrent use.
type Memory struct {
	mu    sync.Mutex
	names []string
	files map[string][]byte
}

// Write keeps a copy of data under name and returns name.
func (m *Memory) Write(name string, data []byte) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files == nil {
		m.files = make(map[string][]byte)
	}
	if _, ok := m.files[name]; !ok {
		m.names = append(m.names, name)
	}
	m.files[name] = bytes.Clone(data)
	return name, nil
}

// File returns what was written under name.
func (m *Memory) File(name string) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[name]
	return b, ok
}

// Names lists the names written, in the order first written.
func (m *Memory) Names() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.names...)
}
