package circomsrc

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
	"strconv"

	"github.com/zkpipe/zkpipe/blob/boundedread"
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

// binFile is a container whose sections are read one at a time, each only
// once the parser asks for it and its declared size is checked against
// what the headers read so far say it must hold (section's need), and
// against what the file has left. Behind it is one of:
//
//   - memory (parseBinFile): the file's bytes, its table checked; sections
//     are sub-slices of them;
//   - a regular file (fileBinFile): its table checked against the file's
//     size before anything else (no section past the end, no byte after
//     the last, no type twice); a section is read, at its offset, when
//     asked for and its size fits its need, and one never asked for
//     (the MPC transcript, the wire labels) is never read;
//   - a stream (streamBinFile: a pipe, an object-store reader): sections
//     are met in the file's order. The one asked for is checked and read;
//     one the parser will want later (wants) is held, its size bounded by
//     what the stream may still give (circom writes the r1cs's
//     constraints before the header that sizes them), and checked against
//     its need when asked for, before it is parsed; the others are passed
//     over unread. end reads on to the stream's end, which must come
//     after the last section.
type binFile struct {
	kind    string
	version uint32
	n       uint32 // sections the header counts

	sections map[uint32][]byte // in hand: in memory, or held from a stream
	sizes    map[uint32]int64  // declared size of each section met

	// a regular file: where each section lies
	table map[uint32]binSpan
	file  *seqFile

	// a stream: sections met so far, bytes it may still give, and which
	// sections to hold when met before they are asked for
	stream io.Reader
	met    uint32
	left   int64
	wants  func(typ uint32) bool
	// the section met last, whose data (pendSize bytes more) is next when
	// atData; rest: what is left of it after a prefix, passed over unread
	pending  uint32
	pendSize int64
	atData   bool
	rest     bool
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

// parseBinFile is a container held in memory: its table checked against
// its length, its sections sub-slices of data (no copies).
func parseBinFile(data []byte, magic string, maxVersion uint32) (*binFile, error) {
	if len(data) < 12 {
		return nil, fmt.Errorf("%s: truncated: %d bytes, not even a header", magic, len(data))
	}
	version, n, err := binHeader(data, magic, maxVersion)
	if err != nil {
		return nil, err
	}
	table, err := checkBinTable(bytes.NewReader(data), int64(len(data)), magic, n)
	if err != nil {
		return nil, err
	}
	f := &binFile{kind: magic, version: version, n: n, sections: map[uint32][]byte{}, sizes: map[uint32]int64{}}
	for typ, s := range table {
		f.sections[typ] = data[s.off : s.off+s.size]
		f.sizes[typ] = s.size
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

// binFileTable checks the header and section table of the regular file f
// against its size (checkBinTable) without moving its read offset, and
// returns the table, the version and the section count.
func binFileTable(f *boundedread.File, magic string, maxVersion uint32) (map[uint32]binSpan, uint32, uint32, error) {
	if f.Size() < 0 {
		return nil, 0, 0, fmt.Errorf("%s: not a regular file", magic)
	}
	var head [12]byte
	if k, err := f.ReadAt(head[:], 0); k < len(head) {
		return nil, 0, 0, fmt.Errorf("%s: truncated: %d bytes, not even a header (%v)", magic, k, err)
	}
	version, n, err := binHeader(head[:], magic, maxVersion)
	if err != nil {
		return nil, 0, 0, err
	}
	t, err := checkBinTable(f, f.Size(), magic, n)
	return t, version, n, err
}

// fileBinFile is the container in the regular file f, its table checked
// against its size; no section is read yet.
func fileBinFile(f *boundedread.File, magic string, maxVersion uint32) (*binFile, error) {
	table, version, n, err := binFileTable(f, magic, maxVersion)
	if err != nil {
		return nil, err
	}
	bf := &binFile{kind: magic, version: version, n: n, sections: map[uint32][]byte{}, sizes: map[uint32]int64{},
		table: table, file: &seqFile{f: f}}
	for typ, s := range table {
		bf.sizes[typ] = s.size
	}
	return bf, nil
}

// streamBinFile is the container streamed from r, at most limit bytes;
// its 12-byte header is read now, its sections as they are asked for.
// Sections that wants says the parser will ask for later are held when
// met before; the others are passed over unread.
func streamBinFile(r io.Reader, magic string, maxVersion uint32, limit int64, wants func(typ uint32) bool) (*binFile, error) {
	var head [12]byte
	if n, err := io.ReadFull(r, head[:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("%s: truncated: %d bytes, not even a header", magic, n)
		}
		return nil, err
	}
	version, n, err := binHeader(head[:], magic, maxVersion)
	if err != nil {
		return nil, err
	}
	return &binFile{kind: magic, version: version, n: n, sections: map[uint32][]byte{}, sizes: map[uint32]int64{},
		stream: r, left: limit - 12, wants: wants}, nil
}

// meet reads a stream's next section header; its data is next.
func (f *binFile) meet() (typ uint32, err error) {
	var head [12]byte
	if _, err := io.ReadFull(f.stream, head[:]); err != nil {
		return 0, fmt.Errorf("%s: truncated in the header of section %d of %d: %w", f.kind, f.met+1, f.n, err)
	}
	f.met++
	f.left -= 12
	typ = binary.LittleEndian.Uint32(head[:])
	sz := binary.LittleEndian.Uint64(head[4:])
	if f.left < 0 || sz > uint64(f.left) {
		return 0, fmt.Errorf("%s: section %d (type %d) says %d bytes, more than the %d a %s can have left", f.kind, f.met, typ, sz, max(f.left, 0), f.kind)
	}
	if _, dup := f.sizes[typ]; dup {
		return 0, fmt.Errorf("%s: section type %d appears twice", f.kind, typ)
	}
	f.sizes[typ] = int64(sz)
	f.pending, f.pendSize, f.atData, f.rest = typ, int64(sz), true, false
	return typ, nil
}

// pass moves a stream past the data of the section met last: held when
// the parser wants it later, else passed over unread.
func (f *binFile) pass() error {
	typ, size := f.pending, f.pendSize
	f.atData = false
	f.left -= size
	if f.wants != nil && f.wants(typ) && !f.rest {
		data := make([]byte, size) // within what the stream may give (meet)
		if k, err := io.ReadFull(f.stream, data); err != nil {
			return fmt.Errorf("%s: truncated: section type %d says %d bytes, %d came: %w", f.kind, typ, size, k, err)
		}
		f.sections[typ] = data
		return nil
	}
	if k, err := io.CopyN(io.Discard, f.stream, size); err != nil {
		return fmt.Errorf("%s: truncated: section type %d says %d bytes, %d came: %w", f.kind, typ, size, k, err)
	}
	return nil
}

// find brings a stream to section typ's data; false when it has none.
func (f *binFile) find(typ uint32) (bool, error) {
	if f.atData {
		if f.pending == typ {
			return true, nil
		}
		if err := f.pass(); err != nil {
			return false, err
		}
	}
	for f.met < f.n {
		t, err := f.meet()
		if err != nil {
			return false, err
		}
		if t == typ {
			return true, nil
		}
		if err := f.pass(); err != nil {
			return false, err
		}
	}
	return false, nil
}

// end reads a stream on past its last section (the parser is done: none
// is held), and checks that it ends there. A file's or memory's table
// was checked whole at the start.
func (f *binFile) end() error {
	if f.stream == nil {
		return nil
	}
	f.wants = nil
	if f.atData {
		if err := f.pass(); err != nil {
			return err
		}
	}
	for f.met < f.n {
		if _, err := f.meet(); err != nil {
			return err
		}
		if err := f.pass(); err != nil {
			return err
		}
	}
	var one [1]byte
	if k, err := f.stream.Read(one[:]); k > 0 {
		return fmt.Errorf("%s: trailing bytes after the last of %d sections", f.kind, f.n)
	} else if err != io.EOF && err != nil {
		return err
	}
	return nil
}

// has reports whether the container has section typ (meeting it in a
// stream).
func (f *binFile) has(typ uint32) (bool, error) {
	if _, ok := f.sizes[typ]; ok || f.stream == nil {
		return ok, nil
	}
	return f.find(typ)
}

// section returns section typ, which must be present, once its declared
// size fits need (what the headers read so far say it holds): it is read
// only then. Errors name the section.
func (f *binFile) section(typ uint32, name string, need boundedread.Need) (*reader, error) {
	return f.sectionBy(typ, name, 0, func([]byte) boundedread.Need { return need })
}

// sectionBy is section for a section whose first k bytes say what the
// rest holds (a count): they are read alone first, and need is given them.
func (f *binFile) sectionBy(typ uint32, name string, k int, need func(head []byte) boundedread.Need) (*reader, error) {
	b, err := f.read(typ, name, k, need, -1)
	if err != nil {
		return nil, err
	}
	return &reader{kind: f.kind, name: name, b: b}, nil
}

// prefix returns the first k bytes of section typ once its declared size
// fits need; the rest is not read (a wtns's public values).
func (f *binFile) prefix(typ uint32, name string, need boundedread.Need, k int) (*reader, error) {
	b, err := f.read(typ, name, 0, func([]byte) boundedread.Need { return need }, k)
	if err != nil {
		return nil, err
	}
	return &reader{kind: f.kind, name: name, b: b}, nil
}

// span checks section typ's declared size against need without reading
// it, and returns where it lies in a regular file (zero elsewhere); false
// when the container has no such section.
func (f *binFile) span(typ uint32, name string, need boundedread.Need) (binSpan, bool, error) {
	ok, err := f.has(typ)
	if err != nil || !ok {
		return binSpan{}, false, err
	}
	if err := need.Check(f.what(name), f.sizes[typ], -1); err != nil {
		return binSpan{}, false, err
	}
	return f.table[typ], true, nil
}

func (f *binFile) what(name string) string { return f.kind + ": " + name + " section" }

// read is section's, sectionBy's and prefix's read of section typ: its
// first k bytes alone, then its declared size checked against need of
// them, then all of it (want < 0) or its first want bytes.
func (f *binFile) read(typ uint32, name string, k int, need func(head []byte) boundedread.Need, want int) ([]byte, error) {
	what := f.what(name)
	// in hand: in memory, or held from a stream before it was asked for
	if b, ok := f.sections[typ]; ok {
		if len(b) < k {
			return nil, fmt.Errorf("%s: %d bytes, too short for its first %d", what, len(b), k)
		}
		if err := need(b[:k]).Check(what, int64(len(b)), -1); err != nil {
			return nil, err
		}
		if want >= 0 {
			return b[:min(want, len(b))], nil
		}
		return b, nil
	}
	size, ok := f.sizes[typ]
	if f.stream != nil {
		found, err := f.find(typ)
		if err != nil {
			return nil, err
		}
		ok, size = found, f.pendSize
	}
	if !ok {
		return nil, fmt.Errorf("%s: no %s section (type %d)", f.kind, name, typ)
	}
	if size < int64(k) {
		return nil, fmt.Errorf("%s: %d bytes, too short for its first %d", what, size, k)
	}
	head := make([]byte, k)
	if err := f.readData(typ, 0, head); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := need(head).Check(what, size, -1); err != nil {
		return nil, err
	}
	n := size
	if want >= 0 {
		n = min(int64(want), size)
	}
	data := make([]byte, n) // checked: within its need, and within the file
	copy(data, head)
	if err := f.readData(typ, int64(len(head)), data[len(head):]); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if f.stream != nil {
		f.left -= n
		f.pendSize -= n
		f.atData, f.rest = n < size, n < size
	}
	return data, nil
}

// readData reads len(p) bytes of section typ's data from its byte off (a
// stream: from where it is, which is off).
func (f *binFile) readData(typ uint32, off int64, p []byte) error {
	if len(p) == 0 {
		return nil
	}
	if f.stream != nil {
		if _, err := io.ReadFull(f.stream, p); err != nil {
			return fmt.Errorf("truncated: %w", err)
		}
		return nil
	}
	if err := f.file.at(f.table[typ].off + off); err != nil {
		return err
	}
	return f.file.read(p)
}

// readBinPath reads the container at path under boundedread, as the
// circuit's files are read (o's load timeout, a second more each 32 MiB),
// and parses it with parse: a regular file's sections are read as parse
// asks for them (fileBinFile), a pipe's as they come (streamBinFile: at
// most limit bytes, holding those wants names when met early; nothing may
// follow the last).
func readBinPath[T any](ctx context.Context, path, magic string, maxVersion uint32, limit int64, o Files, wants func(uint32) bool, parse func(*binFile) (T, error)) (T, error) {
	// the deadline is of waiting for the file (IOTime), not of the work
	// between reads
	return boundedread.Read(ctx, path, boundedread.Options{Timeout: o.LoadTimeout, MinRate: loadRate, IOTime: true}, func(f *boundedread.File) (T, error) {
		var zero T
		if f.Size() > limit {
			return zero, fmt.Errorf("%s: %d bytes, more than a %s this machine's memory can hold (%d)", path, f.Size(), magic, limit)
		}
		var bf *binFile
		var err error
		if f.Size() >= 0 {
			bf, err = fileBinFile(f, magic, maxVersion)
		} else {
			bf, err = streamBinFile(f, magic, maxVersion, limit, wants)
		}
		if err != nil {
			return zero, fmt.Errorf("%s: %w", path, err)
		}
		v, err := parse(bf)
		if err == nil {
			err = bf.end()
		}
		if err != nil {
			return zero, fmt.Errorf("%s: %w", path, err)
		}
		return v, nil
	})
}

// pointsNeed is what a section of count points of size bytes each holds.
func pointsNeed(count, size int) boundedread.Need {
	return boundedread.Exactly(boundedread.Items(uint64(max(count, 0)), uint64(size), 0), strconv.Itoa(count)+" points")
}

// types is a wants of the section types given.
func types(ts ...uint32) func(uint32) bool {
	return func(t uint32) bool {
		for _, u := range ts {
			if t == u {
				return true
			}
		}
		return false
	}
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
