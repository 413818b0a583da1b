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
	"context"
	"errors"
	"fmt"
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
// instead of a path: bytes in hand (NewInput), or fetched when the source
// first opens them (Fetched: a fleet worker's witness, from its object
// store, in the parse stage); or the witness already decoded, in the
// source's own type (Value: the library's Prove). The source reads bytes
// as it reads a file, with the same bounds (exact size, header checked
// before any value is allocated), and Releases them once decoded. Safe for
// concurrent use.
type Input struct {
	name   string
	fetch  Fetch
	stream Stream
	value  any // a decoded witness (Value); no bytes

	cur io.Closer // a Streamed input's reader now open

	mu      sync.Mutex
	data    []byte
	hold    *mem.Reservation
	fetched bool
	gone    bool
}

// Fetch gets an Input's bytes under ctx (the parse stage's), with the
// memory governor's hold on them (nil: none), which Release closes.
// Fetching in parse, not before the job enters, keeps the bytes resident
// only while a parse worker reads them: held by jobs waiting in a queue,
// they could keep the memory that the jobs ahead wait for at admission.
type Fetch func(ctx context.Context) (data []byte, hold *mem.Reservation, err error)

// Stream opens an Input's bytes as a reader of size bytes under ctx (the
// parse stage's), with the memory governor's hold on what the source reads
// of them (nil: none): the bytes come a chunk at a time, never whole in the
// Input (a fleet worker's witness, read from its object store as the source
// decodes it). Release closes the reader and the hold.
type Stream func(ctx context.Context) (r io.ReadCloser, size int64, hold *mem.Reservation, err error)

// Streamed makes an Input whose bytes open reads as the source reads them:
// each Open opens them anew (closing the reader before); nothing of them is
// kept in the Input, so a witness of gigabytes is held once, by its reader.
func Streamed(name string, open Stream) *Input {
	return &Input{name: name, stream: open}
}

// NewInput makes an Input of data in hand, named name in messages ("witness
// a.witness"); hold (nil: none) is closed by Release. The Input owns data
// from then on: the caller must not change it.
func NewInput(name string, data []byte, hold *mem.Reservation) *Input {
	return &Input{name: name, data: data, hold: hold, fetched: true}
}

// Value makes an Input of a witness already decoded, in the type the
// circuit's source takes (gnark's witness.Witness; a circom wire slice):
// it has no bytes to open.
func Value(name string, v any) *Input {
	return &Input{name: name, value: v, fetched: true}
}

// Value is the decoded witness of an Input that Value made, and true; nil
// and false for bytes.
func (in *Input) Value() (any, bool) {
	if in == nil || in.value == nil {
		return nil, false
	}
	return in.value, true
}

// Fetched makes an Input whose bytes fetch gets when it is first opened.
func Fetched(name string, fetch Fetch) *Input {
	return &Input{name: name, fetch: fetch}
}

// Name is what the input is, for messages.
func (in *Input) Name() string { return in.name }

// ErrReleased is Open's error once the input was released.
var ErrReleased = errors.New("already read and released")

// Open returns a reader of the input's bytes and their number, fetching
// them first if they are not in hand (a failed fetch is tried again at the
// next Open; one Open at a time: the source's). After Release it returns
// ErrReleased.
func (in *Input) Open(ctx context.Context) (r io.Reader, size int64, err error) {
	in.mu.Lock()
	gone, fetched := in.gone, in.fetched
	in.mu.Unlock()
	if gone {
		return nil, 0, ErrReleased
	}
	if in.value != nil {
		return nil, 0, fmt.Errorf("%s: a witness value, no bytes to read", in.name)
	}
	if in.stream != nil {
		return in.openStream(ctx)
	}
	if !fetched {
		// not under mu: a Release meanwhile must not wait for the store
		data, hold, err := in.fetch(ctx)
		if err != nil {
			return nil, 0, err
		}
		in.mu.Lock()
		if in.gone {
			in.mu.Unlock()
			hold.Close()
			return nil, 0, ErrReleased
		}
		in.data, in.hold, in.fetched = data, hold, true
		in.mu.Unlock()
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.gone {
		return nil, 0, ErrReleased
	}
	return bytes.NewReader(in.data), int64(len(in.data)), nil
}

// openStream is Open of a Streamed input.
func (in *Input) openStream(ctx context.Context) (io.Reader, int64, error) {
	r, size, hold, err := in.stream(ctx)
	if err != nil {
		return nil, 0, err
	}
	in.mu.Lock()
	if in.gone {
		in.mu.Unlock()
		r.Close()
		hold.Close()
		return nil, 0, ErrReleased
	}
	prev, prevHold := in.cur, in.hold
	in.cur, in.hold = r, hold
	in.mu.Unlock()
	if prev != nil {
		prev.Close()
	}
	prevHold.Close()
	return r, size, nil
}

// Release drops the bytes (a reader from Open still holds them until it
// is dropped; a Streamed input's reader is closed) and closes the hold.
// Safe more than once, and on nil.
func (in *Input) Release() {
	if in == nil {
		return
	}
	in.mu.Lock()
	hold, cur := in.hold, in.cur
	in.data, in.hold, in.cur, in.gone = nil, nil, nil, true
	in.mu.Unlock()
	if cur != nil {
		cur.Close()
	}
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
