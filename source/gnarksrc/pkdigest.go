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
	_, err = blob.Dir(dir).WriteStream(PKDigestFile, func(w io.Writer) error {
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
	got, err := pkDigest(filepath.Join(dir, PKFile))
	return err == nil && got == strings.TrimSpace(string(want))
}
