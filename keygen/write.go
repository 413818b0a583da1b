package keygen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/consensys/gnark/backend/groth16"
)

// rawPKWriters holds each curve's WriteRawProvingKey, registered by its
// generated file (write_<curve>.go); ok is false for another curve's key.
var rawPKWriters []func(w io.Writer, pk groth16.ProvingKey) (n int64, ok bool, err error)

// WriteRawProvingKey writes pk as gnark's pk.WriteRawTo does, byte for
// byte (its points uncompressed, so they load without a square root
// each), with the point slices encoded over all cores: gnark's encoder
// converts one point at a time out of Montgomery form, a 2^25 circuit's
// 5.5 GiB on one core. pk is a key of a curve of package curve, as
// Setup's are. It returns the bytes written.
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

// rawRoundBytes is how much of a slice rawSlice encodes between writes:
// two such buffers, one written while the other is filled.
var rawRoundBytes = 2 << 20

// rawSlice writes a slice of n elements as gnark-crypto's encoder does
// (its length as a big-endian uint32, then each element's size bytes),
// put(i, b) filling b with element i's bytes. Rounds of rawRoundBytes are
// filled over all cores while the round before is written, so the write
// runs at about the disk's speed instead of one core's.
func rawSlice(w io.Writer, n, size int, put func(i int, b []byte)) error {
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(n))
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	round := max(1, min(n, rawRoundBytes/size))
	bufs := [2][]byte{make([]byte, round*size), make([]byte, round*size)}
	var werr error
	written := make(chan struct{}, 1)
	written <- struct{}{} // no write in flight
	for k, start := 0, 0; start < n; k, start = k+1, start+round {
		end := min(start+round, n)
		buf := bufs[k%2][:(end-start)*size]
		parallelFor(end-start, 1<<10, func(s, e int) {
			for i := s; i < e; i++ {
				put(start+i, buf[i*size:(i+1)*size])
			}
		})
		<-written // the other buffer's write is over
		if werr != nil {
			return werr
		}
		go func() {
			_, werr = w.Write(buf)
			written <- struct{}{}
		}()
	}
	<-written
	return werr
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
