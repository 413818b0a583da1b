package gnarksrc

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/blob/boundedread"
)

// PKDigestFile is the digest of circuit.pk that zkpipe setup writes beside
// it. A proving key whose file still has that digest is the one setup
// computed, every point in its subgroup by construction: its load skips
// the subgroup check of its point slices (package subgroup: about 5 µs a
// BLS12-381 point, 600 million points and minutes of 16 cores for a 2^27
// key, where the digest costs one read of the file over all cores). Any
// other key file, or one changed since, is checked point by point.
//
// The digest is a file beside the key, no signature: whoever can rewrite
// the key can rewrite it too. What it saves is a check that gives a clear
// error, not soundness: a proof from a bad key is refused by the verifying
// key before it is written (Emit), as gnark's own UnsafeReadFrom leaves it.
const PKDigestFile = "circuit.pk.digest"

// pkDigestChunk is the piece of the file each digest worker hashes.
const pkDigestChunk = 4 << 20

// pkDigestVersion names the digest's construction in its file.
const pkDigestVersion = "zkpipe-pk-digest-v1 sha256/4MiB"

// pkDigest is the digest of the file at path: SHA-256 of its size and of
// the SHA-256 of each 4 MiB piece, in order, the pieces hashed over all
// cores.
func pkDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	size := st.Size()
	pieces := int((size + pkDigestChunk - 1) / pkDigestChunk)
	sums := make([][sha256.Size]byte, pieces)
	var (
		next  = make(chan int)
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range min(runtime.GOMAXPROCS(0), max(pieces, 1)) {
		wg.Go(func() {
			buf := make([]byte, pkDigestChunk)
			for i := range next {
				off := int64(i) * pkDigestChunk
				n := min(int64(pkDigestChunk), size-off)
				if _, err := f.ReadAt(buf[:n], off); err != nil && !errors.Is(err, io.EOF) {
					mu.Lock()
					first = errors.Join(first, err)
					mu.Unlock()
					continue
				}
				sums[i] = sha256.Sum256(buf[:n])
			}
		})
	}
	for i := range pieces {
		next <- i
	}
	close(next)
	wg.Wait()
	if first != nil {
		return "", first
	}
	h := sha256.New()
	var sz [8]byte
	binary.BigEndian.PutUint64(sz[:], uint64(size))
	h.Write(sz[:])
	for i := range sums {
		h.Write(sums[i][:])
	}
	return pkDigestVersion + " " + hex.EncodeToString(h.Sum(nil)), nil
}

// writePKDigest writes dir's circuit.pk's digest beside it.
func writePKDigest(dir string) error {
	d, err := pkDigest(filepath.Join(dir, PKFile))
	if err != nil {
		return fmt.Errorf("digest of %s: %w", PKFile, err)
	}
	return writeDigestFile(dir, d)
}

// writeDigestFile writes d, circuit.pk's digest, into dir.
func writeDigestFile(dir, d string) error {
	_, err := blob.Dir(dir).WriteStream(PKDigestFile, func(w io.Writer) error {
		_, err := io.WriteString(w, d+"\n")
		return err
	})
	return err
}

// pkTrusted says whether dir's circuit.pk has the digest its
// circuit.pk.digest holds (false when there is none, or it cannot be read).
func pkTrusted(dir string, o Options) bool {
	want, err := boundedread.ReadLimited(context.Background(), filepath.Join(dir, PKDigestFile), PKDigestFile, 256, o.load(), io.ReadAll)
	if err != nil {
		return false
	}
	// a regular file alone: os.Open of a FIFO nobody writes to waits for
	// ever (the key's own read is bounded: boundedread), and a FIFO's
	// bytes cannot be read twice anyway
	pk := filepath.Join(dir, PKFile)
	if st, err := os.Stat(pk); err != nil || !st.Mode().IsRegular() {
		return false
	}
	got, err := pkDigest(pk)
	return err == nil && got == strings.TrimSpace(string(want))
}

// digestWriter passes what is written to it on to w and digests it as
// pkDigest digests a file of those bytes, a 4 MiB piece at a time hashed
// over all cores as the bytes come: zkpipe setup digests the proving key
// it streams instead of reading its file again (some 47 GB at 2^27, from
// the disk when the page cache has let it go). At most GOMAXPROCS+1
// pieces are in memory; Write waits for a free one.
type digestWriter struct {
	w     io.Writer
	size  int64
	piece []byte      // the piece being filled
	sums  []*[32]byte // each piece's SHA-256, in order
	jobs  chan digestJob
	free  chan []byte
	wg    sync.WaitGroup
}

type digestJob struct {
	b   []byte
	sum *[32]byte
}

func newDigestWriter(w io.Writer) *digestWriter {
	workers := runtime.GOMAXPROCS(0)
	d := &digestWriter{w: w, jobs: make(chan digestJob), free: make(chan []byte, workers+1)}
	for range workers + 1 {
		d.free <- make([]byte, 0, pkDigestChunk)
	}
	for range workers {
		d.wg.Go(func() {
			for j := range d.jobs {
				*j.sum = sha256.Sum256(j.b)
				d.free <- j.b[:0]
			}
		})
	}
	d.piece = <-d.free
	return d
}

func (d *digestWriter) Write(p []byte) (int, error) {
	n, err := d.w.Write(p)
	p = p[:n]
	d.size += int64(n)
	for len(p) > 0 {
		k := min(len(p), pkDigestChunk-len(d.piece))
		d.piece = append(d.piece, p[:k]...)
		p = p[k:]
		if len(d.piece) == pkDigestChunk {
			d.send()
			d.piece = <-d.free
		}
	}
	return n, err
}

// send hands the piece being filled to a worker.
func (d *digestWriter) send() {
	sum := new([32]byte)
	d.sums = append(d.sums, sum)
	d.jobs <- digestJob{d.piece, sum}
}

// digest ends the writer (its workers too) and returns pkDigest's digest
// of the bytes written. The writer takes no more.
func (d *digestWriter) digest() string {
	if len(d.piece) > 0 {
		d.send()
	}
	close(d.jobs)
	d.wg.Wait()
	h := sha256.New()
	var sz [8]byte
	binary.BigEndian.PutUint64(sz[:], uint64(d.size))
	h.Write(sz[:])
	for _, s := range d.sums {
		h.Write(s[:])
	}
	return pkDigestVersion + " " + hex.EncodeToString(h.Sum(nil))
}
