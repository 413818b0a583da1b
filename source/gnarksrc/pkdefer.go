package gnarksrc

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"time"
	"unsafe"

	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/proofdata"
)

// ─── a proving key's bases, read where they will live ────────────────────────
//
// A key resident on a GPU needs no host copy of its bases, nor of its
// domain's tables (the GPU builds its own from the domain's constants). Read
// whole at LoadDir, a 2^26 key's 17.2 GiB of points and 8 GiB of tables were
// on the host at once before the upload, and its load peaked at 34 GiB under
// an 18 GiB budget. So LoadDir leaves them unread where the file can seek (a
// regular file): it records where each point slice is, skips it, and the
// circuit's key says so (proofdata.DeferredParts). A GPU backend streams
// them from the file straight to its memory at Load, chunk by chunk
// (Stream); a CPU backend reads them into the host copy (Fetch), as LoadDir
// would have. Their points are checked as they are read, with the same
// errors as LoadDir's, naming the file, the slice and the point.

// pointBytes is the memory of points, as a BaseSink takes it.
func pointBytes[P any](points []P) []byte {
	if len(points) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&points[0])), len(points)*int(unsafe.Sizeof(points[0])))
}

// deferredParts are the parts LoadDir leaves unread when it can.
const deferredParts = proofdata.PartA | proofdata.PartB1 | proofdata.PartK | proofdata.PartZ | proofdata.PartB2 | proofdata.PartDomain

// pkDeferral is what readProvingKey left unread of a key file.
type pkDeferral struct {
	path string
	opts Options
	want proofdata.KeyParts // what to leave unread, where the reader can skip

	parts  proofdata.KeyParts // what was left unread
	slices map[proofdata.KeyParts]deferredSlice
	domain []byte // the domain's encoding, with its tables flag as written

	size int64 // the file as read: a later read refuses another
	mod  time.Time
}

// deferredSlice is one point slice left unread: n points of size bytes from
// offset off (its first point's first byte; its count is the 4 bytes before).
type deferredSlice struct {
	off        int64
	n, size    int
	compressed bool
	trusted    bool // its points are not checked for subgroup membership (keyLoader.trusted)
}

func newPKDeferral(path string, o Options) *pkDeferral {
	return &pkDeferral{path: path, opts: o, want: deferredParts, slices: map[proofdata.KeyParts]deferredSlice{}}
}

// partName is how errors name a deferred part's slice, as readPoints does.
func partName(p proofdata.KeyParts) string {
	switch p {
	case proofdata.PartA:
		return "A"
	case proofdata.PartB1:
		return "B"
	case proofdata.PartK:
		return "K"
	case proofdata.PartZ:
		return "Z"
	case proofdata.PartB2:
		return "B₂"
	}
	return "domain"
}

// deferSlice leaves a point slice unread when l defers part and its reader
// can skip: head is what sliceHead read (the count, then the first point's
// first bytes), n the count, size a point's encoded size. false: read it.
func (l *keyLoader) deferSlice(part proofdata.KeyParts, head []byte, n, size int, compressed bool) (bool, error) {
	d := l.def
	if d == nil || d.want&part == 0 || n == 0 || !l.canSkip() {
		return false, nil
	}
	pre := int64(len(head) - 4)
	d.slices[part] = deferredSlice{off: l.n - pre, n: n, size: size, compressed: compressed, trusted: l.trusted}
	if err := l.skip(int64(n)*int64(size) - pre); err != nil {
		return false, truncated(err, fmt.Sprintf("its %d points", n))
	}
	d.parts |= part
	return true, nil
}

// skipper is a reader that can skip bytes without reading them (keys.go's
// countingReader over a regular file).
type skipper interface {
	CanSkip() bool
	Skip(n int64) error
}

func (l *keyLoader) canSkip() bool {
	s, ok := l.r.(skipper)
	return ok && s.CanSkip()
}

// skip moves n bytes on without reading them.
func (l *keyLoader) skip(n int64) error {
	if err := l.r.(skipper).Skip(n); err != nil {
		return err
	}
	l.n += n
	return nil
}

// recordFile notes the file's size and time once read: a later read of a
// file changed since is refused rather than mixed with what was read.
func (d *pkDeferral) recordFile() error {
	st, err := os.Stat(d.path)
	if err != nil {
		return err
	}
	d.size, d.mod = st.Size(), st.ModTime()
	return nil
}

// read reads the deferred slices of parts, in the file's order, each over
// the loader's workers with a worker of newWorker's (given the part, its
// slice and the most points a chunk holds). The file must be the one
// LoadDir read: same size and time, and each slice's count where it was.
func (d *pkDeferral) read(parts proofdata.KeyParts, newWorker func(part proofdata.KeyParts, s deferredSlice, per int) pointWorker) error {
	var order []proofdata.KeyParts
	for p := range d.slices {
		if parts&p != 0 {
			order = append(order, p)
		}
	}
	slices.SortFunc(order, func(a, b proofdata.KeyParts) int { return int(d.slices[a].off - d.slices[b].off) })
	bo := d.opts.load()
	bo.IOTime = true
	_, err := boundedread.Read(context.Background(), d.path, bo, func(f *boundedread.File) (struct{}, error) {
		changed := func(why string) error {
			return fmt.Errorf("%s: changed since the circuit was loaded (%s): load the circuit again", d.path, why)
		}
		if st, err := os.Stat(d.path); err != nil {
			return struct{}{}, err
		} else if f.Size() != d.size || st.Size() != d.size || !st.ModTime().Equal(d.mod) {
			return struct{}{}, changed("its size or time")
		}
		// progress lines as LoadDir's: the bases are most of a big key
		var total int64
		for _, p := range order {
			total += int64(d.slices[p].n) * int64(d.slices[p].size)
		}
		cr := &countingReader{r: f}
		defer reportLoad(d.opts, d.path+"'s bases", total, cr)()
		var pos int64
		for _, p := range order {
			s := d.slices[p]
			if err := f.Skip(s.off - 4 - pos); err != nil {
				return struct{}{}, err
			}
			var cnt [4]byte
			if _, err := io.ReadFull(f, cnt[:]); err != nil {
				return struct{}{}, fmt.Errorf("read %s: proving key's %s: %w", d.path, partName(p), truncated(err, "its length"))
			}
			if int(binary.BigEndian.Uint32(cnt[:])) != s.n {
				return struct{}{}, changed(fmt.Sprintf("its %s slice", partName(p)))
			}
			body := int64(s.n) * int64(s.size)
			l := newKeyLoader(bufio.NewReaderSize(io.LimitReader(cr, body), max(loadChunkBytes, 4096)))
			if err := l.chunks(nil, s.n, s.size, func(per int) pointWorker { return newWorker(p, s, per) }); err != nil {
				return struct{}{}, fmt.Errorf("read %s: proving key's %s: %w", d.path, partName(p), err)
			}
			pos = s.off + body
		}
		return struct{}{}, nil
	})
	return err
}
