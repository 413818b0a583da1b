package circomsrc

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
	"strconv"

	"github.com/zkpipe/zkpipe/source/boundedread"
)

// ─── snarkjs binary files ────────────────────────────────────────────────────
//
// .zkey, .wtns and .r1cs share one container (iden3's binfileutils):
//
//	magic    4 bytes  "zkey" | "wtns" | "r1cs"
//	version  u32
//	nSect    u32
//	nSect × { type u32, size u64, data[size] }
//
// all little-endian. A section type may appear once; the readers below check
// every size against what the headers say before they trust a byte of it.

// binFile is a parsed container: the data of each section by type, as
// sub-slices of the file's bytes (no copies).
type binFile struct {
	kind     string
	version  uint32
	sections map[uint32][]byte
}

// maxSections bounds a container's section count: snarkjs writes at most a
// dozen, and each is walked before any is read.
const maxSections = 1024

// binHeader checks a container's first 12 bytes and returns its version
// and section count.
func binHeader(head []byte, magic string, maxVersion uint32) (version, n uint32, err error) {
	if string(head[:4]) != magic {
		return 0, 0, fmt.Errorf("not a %s file (it does not begin with %q)", magic, magic)
	}
	version = binary.LittleEndian.Uint32(head[4:])
	if version == 0 || version > maxVersion {
		return 0, 0, fmt.Errorf("%s: a version this reader does not know (it knows 1 to %d)", magic, maxVersion)
	}
	n = binary.LittleEndian.Uint32(head[8:])
	if n > maxSections {
		return 0, 0, fmt.Errorf("%s: more sections than a snarkjs file has (%d at most here)", magic, maxSections)
	}
	return version, n, nil
}

func parseBinFile(data []byte, magic string, maxVersion uint32) (*binFile, error) {
	if len(data) < 12 {
		return nil, fmt.Errorf("%s: truncated: %d bytes, not even a header", magic, len(data))
	}
	version, n, err := binHeader(data, magic, maxVersion)
	if err != nil {
		return nil, err
	}
	f := &binFile{kind: magic, version: version, sections: map[uint32][]byte{}}
	pos := uint64(12)
	for i := uint32(0); i < n; i++ {
		if uint64(len(data))-pos < 12 {
			return nil, fmt.Errorf("%s: truncated in the header of section %d of %d", magic, i+1, n)
		}
		typ := binary.LittleEndian.Uint32(data[pos:])
		size := binary.LittleEndian.Uint64(data[pos+4:])
		pos += 12
		if size > uint64(len(data))-pos {
			return nil, fmt.Errorf("%s: truncated: section %d (type %d) says %d bytes, %d remain", magic, i+1, typ, size, uint64(len(data))-pos)
		}
		if _, dup := f.sections[typ]; dup {
			return nil, fmt.Errorf("%s: section type %d appears twice", magic, typ)
		}
		f.sections[typ] = data[pos : pos+size]
		pos += size
	}
	if pos != uint64(len(data)) {
		return nil, fmt.Errorf("%s: %d trailing bytes after the last of %d sections", magic, uint64(len(data))-pos, n)
	}
	return f, nil
}

// checkBinTable walks the section table of a container of size bytes (a
// regular file's, from fstat) through r, 12 bytes a section read at its
// offset, and checks that it adds up to the file: no section past the end,
// no byte after the last, no type twice. It runs before any section is
// allocated or read, so a zkey followed by gigabytes, or one whose table
// declares them, costs a few preads, not the file. n is the header's count.
func checkBinTable(r io.ReaderAt, size int64, magic string, n uint32) (map[uint32]binSpan, error) {
	pos := int64(12)
	seen := make(map[uint32]binSpan, n)
	var head [12]byte
	for i := uint32(0); i < n; i++ {
		if size-pos < 12 {
			return nil, fmt.Errorf("%s: truncated: the file ends in the header of section %d of %d", magic, i+1, n)
		}
		if _, err := r.ReadAt(head[:], pos); err != nil {
			return nil, fmt.Errorf("%s: section %d of %d: %w", magic, i+1, n, err)
		}
		typ, sz := binary.LittleEndian.Uint32(head[:]), binary.LittleEndian.Uint64(head[4:])
		pos += 12
		if sz > uint64(size-pos) {
			return nil, fmt.Errorf("%s: section %d (type %d) says %d bytes, the file has %d after its header: truncated, or not a %s", magic, i+1, typ, sz, size-pos, magic)
		}
		if _, dup := seen[typ]; dup {
			return nil, fmt.Errorf("%s: section type %d appears twice", magic, typ)
		}
		seen[typ] = binSpan{off: pos, size: int64(sz)}
		pos += int64(sz)
	}
	if pos != size {
		return nil, fmt.Errorf("%s: %d trailing bytes after the last of %d sections (the sections end at byte %d of %d)", magic, size-pos, n, pos, size)
	}
	return seen, nil
}

// binSpan is where a section's data is in its file: size bytes from off
// (its 12-byte header just before).
type binSpan struct{ off, size int64 }

// checkBinFileTable checks the header and section table of a regular file
// against its size (checkBinTable) without moving f's read offset; a pipe,
// whose size is known only at its end, is left to the reader.
func checkBinFileTable(f *boundedread.File, magic string, maxVersion uint32) error {
	_, _, err := binFileTable(f, magic, maxVersion)
	return err
}

// binFileTable is checkBinFileTable's table and the file's version (a
// nil table for a pipe).
func binFileTable(f *boundedread.File, magic string, maxVersion uint32) (map[uint32]binSpan, uint32, error) {
	if f.Size() < 0 {
		return nil, 0, nil
	}
	var head [12]byte
	if k, err := f.ReadAt(head[:], 0); k < len(head) {
		return nil, 0, fmt.Errorf("%s: truncated: %d bytes, not even a header (%v)", magic, k, err)
	}
	version, n, err := binHeader(head[:], magic, maxVersion)
	if err != nil {
		return nil, 0, err
	}
	t, err := checkBinTable(f, f.Size(), magic, n)
	return t, version, err
}

// readBinFile reads a container from f, at most limit bytes, allocating
// each section as it comes and no more than the file holds: a regular
// file's table is checked against its size first (checkBinTable), a pipe's
// sections against what limit leaves, and after the last section the file
// must end. The sections together take the file's size, once.
func readBinFile(f *boundedread.File, magic string, maxVersion uint32, limit int64) (*binFile, error) {
	var head [12]byte
	if n, err := io.ReadFull(f, head[:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("%s: truncated: %d bytes, not even a header", magic, n)
		}
		return nil, err
	}
	version, n, err := binHeader(head[:], magic, maxVersion)
	if err != nil {
		return nil, err
	}
	left := limit - 12 // what a section may still take
	if size := f.Size(); size >= 0 {
		if _, err := checkBinTable(f, size, magic, n); err != nil {
			return nil, err
		}
		left = size - 12
	}
	bf := &binFile{kind: magic, version: version, sections: map[uint32][]byte{}}
	for i := uint32(0); i < n; i++ {
		if _, err := io.ReadFull(f, head[:]); err != nil {
			return nil, fmt.Errorf("%s: truncated in the header of section %d of %d: %w", magic, i+1, n, err)
		}
		typ, sz := binary.LittleEndian.Uint32(head[:]), binary.LittleEndian.Uint64(head[4:])
		left -= 12
		if left < 0 || sz > uint64(left) {
			return nil, fmt.Errorf("%s: section %d (type %d) says %d bytes, more than the %d a %s can have left", magic, i+1, typ, sz, max(left, 0), magic)
		}
		if _, dup := bf.sections[typ]; dup {
			return nil, fmt.Errorf("%s: section type %d appears twice", magic, typ)
		}
		data := make([]byte, sz)
		if k, err := io.ReadFull(f, data); err != nil {
			return nil, fmt.Errorf("%s: truncated: section %d (type %d) says %d bytes, %d came: %w", magic, i+1, typ, sz, k, err)
		}
		bf.sections[typ] = data
		left -= int64(sz)
	}
	var one [1]byte
	if k, err := f.Read(one[:]); k > 0 {
		return nil, fmt.Errorf("%s: trailing bytes after the last of %d sections", magic, n)
	} else if err != io.EOF && err != nil {
		return nil, err
	}
	return bf, nil
}

// readBinPath reads the container at path under boundedread, as the
// circuit's files are read (o's load timeout, a second more each 32 MiB).
func readBinPath(ctx context.Context, path, magic string, maxVersion uint32, limit int64, o Files) (*binFile, error) {
	// the deadline is of waiting for the file (IOTime), not of the work
	// between reads
	return boundedread.Read(ctx, path, boundedread.Options{Timeout: o.LoadTimeout, MinRate: loadRate, IOTime: true}, func(f *boundedread.File) (*binFile, error) {
		if f.Size() > limit {
			return nil, fmt.Errorf("%s: %d bytes, more than a %s this machine's memory can hold (%d)", path, f.Size(), magic, limit)
		}
		bf, err := readBinFile(f, magic, maxVersion, limit)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return bf, nil
	})
}

// section returns section typ, which must be present.
func (f *binFile) section(typ uint32, name string) (*reader, error) {
	s, ok := f.sections[typ]
	if !ok {
		return nil, fmt.Errorf("%s: no %s section (type %d)", f.kind, name, typ)
	}
	return &reader{kind: f.kind, name: name, b: s}, nil
}

// reader consumes one section; the first short read sets err and every later
// read returns zeros, so a parser checks err once per section.
type reader struct {
	kind, name string
	b          []byte
	err        error
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return make([]byte, n)
	}
	if n < 0 || n > len(r.b) {
		r.err = fmt.Errorf("%s: %s section: truncated: needs %d more bytes, has %d", r.kind, r.name, n, len(r.b))
		return make([]byte, n)
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) u32() uint32 { return binary.LittleEndian.Uint32(r.take(4)) }
func (r *reader) u64() uint64 { return binary.LittleEndian.Uint64(r.take(8)) }

// done checks that the section was consumed exactly.
func (r *reader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%s: %s section: %d bytes more than its header accounts for", r.kind, r.name, len(r.b))
	}
	return r.err
}

// need checks, before a loop reads count items of size bytes each, that the
// section holds exactly that much more (plus rest bytes after), so a corrupt
// count fails at once instead of after a huge allocation.
func (r *reader) need(count, size, rest uint64, what string) error {
	if r.err != nil {
		return r.err
	}
	if size != 0 && count > (1<<40)/size {
		r.err = fmt.Errorf("%s: %s section: %d %s is absurd", r.kind, r.name, count, what)
		return r.err
	}
	if want := count*size + rest; uint64(len(r.b)) != want {
		r.err = fmt.Errorf("%s: %s section: %d %s need %d bytes, the section has %d", r.kind, r.name, count, what, want, len(r.b))
	}
	return r.err
}

func leInt(b []byte) *big.Int {
	be := make([]byte, len(b))
	for i := range b {
		be[len(b)-1-i] = b[i]
	}
	return new(big.Int).SetBytes(be)
}

// item names what a reader reads, for its errors: "point 7", "[α]₁". It is
// formatted only on an error: a zkey holds millions of items.
type item struct {
	name string
	i    int // −1: no index
}

func (it item) String() string {
	if it.i < 0 {
		return it.name
	}
	return it.name + " " + strconv.Itoa(it.i)
}
