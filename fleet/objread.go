package fleet

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The fleet reads its objects (circuits' files, witnesses, outputs) a
// chunk at a time from the bucket's stream itself, with an ordered
// consumer on the object's chunks, rather than with nats.go's object
// reader: that one gives up 5 s after it opens when its context has no
// deadline (a witness of gigabytes takes longer), and, given one, waits
// out the whole deadline for a chunk that a server's death withheld. Here
// each chunk has stallTimeout to come, however long the object takes; the
// ordered consumer is made again on the stream's new leader after a
// failover; the digest is checked at the end as nats.go checks it.

// stallTimeout is how long a read of an object may go without a chunk
// before it fails (and is tried again, or its job handed back).
const stallTimeout = 20 * time.Second

// objectReader reads one object's chunks in order.
type objectReader struct {
	info    *jetstream.ObjectInfo
	it      jetstream.MessagesContext
	buf     []byte
	read    uint64
	sum     hash.Hash
	watch   *time.Timer
	stalled atomic.Bool
	unwatch func() bool // stops the ctx's stop of it
	err     error
}

// bucket is q's object store of that name.
func (q *Queue) bucket(name string) jetstream.ObjectStore {
	switch name {
	case CircuitBucket:
		return q.Circuits
	case WitnessBucket:
		return q.Witness
	case ProofBucket:
		return q.Proofs
	}
	panic("fleet: no bucket " + name)
}

// getObject opens object name of bucket for reading; ErrObjectNotFound
// when it is not there.
func (q *Queue) getObject(ctx context.Context, bucket, name string) (*objectReader, error) {
	var info *jetstream.ObjectInfo
	if err := retryQuick(ctx, func(ctx context.Context) (err error) { info, err = q.bucket(bucket).GetInfo(ctx, name); return err }); err != nil {
		return nil, err
	}
	return q.openObject(ctx, bucket, info)
}

// openObject opens the object info describes for reading.
func (q *Queue) openObject(ctx context.Context, bucket string, info *jetstream.ObjectInfo) (*objectReader, error) {
	r := &objectReader{info: info, sum: sha256.New()}
	if info.Size == 0 {
		return r, nil
	}
	chunks := fmt.Sprintf("$O.%s.C.%s", bucket, info.NUID)
	err := retryQuick(ctx, func(actx context.Context) error {
		cons, err := q.Conn.JS.OrderedConsumer(actx, "OBJ_"+bucket, jetstream.OrderedConsumerConfig{FilterSubjects: []string{chunks}})
		if err != nil {
			return err
		}
		r.it, err = cons.Messages()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("object %s: %w", info.Name, err)
	}
	r.watch = time.AfterFunc(stallTimeout, func() { r.stalled.Store(true); r.it.Stop() })
	r.watch.Stop() // armed while a chunk is awaited
	r.unwatch = context.AfterFunc(ctx, r.it.Stop)
	return r, nil
}

// Info is the object's.
func (r *objectReader) Info() (*jetstream.ObjectInfo, error) { return r.info, nil }

func (r *objectReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	for len(r.buf) == 0 {
		if r.read >= r.info.Size {
			if got := jetstream.GetObjectDigestValue(r.sum); got != r.info.Digest {
				r.err = fmt.Errorf("object %s: %w", r.info.Name, jetstream.ErrDigestMismatch)
				return 0, r.err
			}
			return 0, io.EOF
		}
		// the stall clock runs only while a chunk is awaited, not while
		// the caller takes its time with the one before
		r.watch.Reset(stallTimeout)
		m, err := r.it.Next()
		r.watch.Stop()
		if err != nil {
			if r.stalled.Load() {
				err = fmt.Errorf("object %s: no chunk for %s after %d of its %d bytes: %w", r.info.Name, stallTimeout, r.read, r.info.Size, jetstream.ErrNoStreamResponse)
			} else if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				err = fmt.Errorf("object %s: %w", r.info.Name, context.Canceled)
			}
			r.err = err
			return 0, err
		}
		data := m.Data()
		if r.read+uint64(len(data)) > r.info.Size {
			r.err = fmt.Errorf("object %s: more than its %d bytes in its chunks", r.info.Name, r.info.Size)
			return 0, r.err
		}
		r.sum.Write(data)
		r.read += uint64(len(data))
		r.buf = data
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

func (r *objectReader) Close() error {
	if r.it != nil {
		r.watch.Stop()
		r.unwatch()
		r.it.Stop()
	}
	return nil
}

// readObject reads object name of bucket whole, at most limit bytes
// (errTooLarge beyond, by its declared size first).
func (q *Queue) readObject(ctx context.Context, bucket, name string, limit int64) ([]byte, error) {
	r, err := q.getObject(ctx, bucket, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if r.info.Size > uint64(limit) {
		return nil, fmt.Errorf("%d bytes in the store, %w (%d)", r.info.Size, errTooLarge, limit)
	}
	var b bytes.Buffer
	b.Grow(int(r.info.Size))
	if _, err := io.Copy(&b, r); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
