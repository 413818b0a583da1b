package keygen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"unsafe"

	"github.com/consensys/gnark/backend/groth16"
)

// WriteRawProvingKey writes pk as gnark's pk.WriteRawTo does, byte for
// byte (its points uncompressed, so they load without a square root
// each), with the point slices encoded over all cores: gnark's encoder
// converts one point at a time out of Montgomery form, a 2^25 circuit's
// 5.5 GiB on one core. pk is a key of a curve of package curve, as
// Setup's are. It returns the bytes written. The encoder is SetupTo's
// (pkWriter), so a key Setup made and one SetupTo streamed from the same
// toxic waste are the same bytes.
func WriteRawProvingKey(w io.Writer, pk groth16.ProvingKey) (int64, error) {
	for _, write := range rawPKWriters {
		if n, ok, err := write(w, pk); ok {
			return n, err
		}
	}
	return 0, fmt.Errorf("keygen: a %T is not a proving key of a supported curve", pk)
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// chunkBytes is the memory of one chunk of a point slice streamed to a
// file (pointStream): two are live, one filled while the other is
// encoded and written. 32 MiB is 350K BLS12-381 G1 points, some 340 of
// the comb's blocks: enough to keep 16 cores busy.
var chunkBytes = 32 << 20

// deviceChunkBytes is chunkBytes when a FixedBase device computes the
// products: each of its calls builds its table and runs its own chunks
// of 2^22 scalars (zk_fixed_base), so a call should take several of
// those (256 MiB: 2.8M BLS12-381 G1 points, 1.4M G2 points).
var deviceChunkBytes = 256 << 20

// pointStream writes point slices as gnark-crypto's raw encoder does (a
// slice's length as a big-endian uint32, then each point's raw bytes),
// chunk by chunk: fill sets a chunk's points, which are then encoded in
// place (a raw point is its affine struct's size) over all cores and
// written by a goroutine while the next chunk is filled. Two chunk
// buffers, kept from slice to slice: the stream's memory is theirs, not
// the slice's.
type pointStream[P any] struct {
	w     io.Writer
	size  int                    // a point's raw encoding, its struct's size
	raw   func(dst []byte, p *P) // dst = p's raw encoding; dst may be p's memory
	chunk int                    // points a chunk
	bufs  [2][]P                 // allocated at the first slice, at most chunk points
}

// newPointStream streams points of size bytes, with chunks of about
// budget bytes, to w. raw must read the whole point before it writes dst
// (gnark-crypto's RawBytes, then a copy).
func newPointStream[P any](w io.Writer, size, budget int, raw func(dst []byte, p *P)) *pointStream[P] {
	var p P
	if int(unsafe.Sizeof(p)) != size {
		// a raw point is encoded over its own memory: both must be one size
		panic(fmt.Sprintf("keygen: a %T is %d bytes, its raw encoding %d", p, unsafe.Sizeof(p), size))
	}
	return &pointStream[P]{w: w, size: size, raw: raw, chunk: max(1, budget/size)}
}

// slice writes a slice of n points, fill(dst, start) setting dst to
// points [start, start+len(dst)) of it, for consecutive ranges in order.
func (s *pointStream[P]) slice(n int, fill func(dst []P, start int) error) error {
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(n))
	if _, err := s.w.Write(hdr[:]); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	chunk := min(n, s.chunk)
	for i := range s.bufs {
		if len(s.bufs[i]) < chunk {
			s.bufs[i] = make([]P, chunk)
		}
	}
	var werr error
	written := make(chan struct{}, 1)
	written <- struct{}{} // no write in flight
	for k, start := 0, 0; start < n; k, start = k+1, start+chunk {
		buf := s.bufs[k%2][:min(chunk, n-start)]
		err := fill(buf, start) // while the chunk before is written
		<-written
		if err == nil {
			err = werr
		}
		if err != nil {
			return err
		}
		go func() {
			b := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(buf)*s.size)
			parallelFor(len(buf), 1<<10, func(start, end int) {
				for i := start; i < end; i++ {
					s.raw(b[i*s.size:(i+1)*s.size], &buf[i]) // point i's memory becomes its bytes
				}
			})
			_, werr = s.w.Write(b)
			written <- struct{}{}
		}()
	}
	<-written
	return werr
}

// copyFrom is a fill (pointStream.slice) that copies src's points.
func copyFrom[P any](src []P) func(dst []P, start int) error {
	return func(dst []P, start int) error {
		copy(dst, src[start:start+len(dst)])
		return nil
	}
}

// writeDomainWithTables writes d as gnark's Setup's domain: d.WriteTo's
// bytes (its cardinality, five scalars of scalarBytes, then its tables
// flag, one byte) with the flag set, whether or not d has its tables in
// memory (WithoutDomainTables), so that the file loads with them as
// gnark's would. For a domain with its tables, the bytes are d.WriteTo's.
func writeDomainWithTables(w io.Writer, d io.WriterTo, scalarBytes int) error {
	var b bytes.Buffer
	if _, err := d.WriteTo(&b); err != nil {
		return err
	}
	raw := b.Bytes()
	if want := 8 + 5*scalarBytes + 1; len(raw) != want {
		return fmt.Errorf("the domain's encoding is %d bytes, not gnark-crypto's %d", len(raw), want)
	}
	raw[len(raw)-1] = 1 // true, as encoding/binary writes a bool
	_, err := w.Write(raw)
	return err
}
