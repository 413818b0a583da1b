// Package boundedread reads a job's input file (a witness) so that no path a
// job names can hang the stream or fill memory: a FIFO nobody writes to, a
// character device, a stalled mount, a huge or sparse file.
//
// Three rules make that so:
//
//  1. The file is opened with O_NONBLOCK, so an open of a FIFO with no
//     writer returns at once instead of blocking in open(2).
//  2. Only regular files, and FIFOs and character devices that the runtime
//     poller can read with a deadline, are read; anything else (a directory,
//     /dev/zero, which the poller cannot wait on) is refused before a byte is
//     read. A regular file's size is known from fstat, so a reader can refuse
//     a wrong size before reading.
//  3. The open and the reads run on a goroutine of their own, bounded by the
//     job's context and a deadline. A pollable read is woken by the deadline;
//     a read the kernel will not interrupt (a regular file on a stalled
//     mount) is abandoned: Read returns at once and the goroutine is left to
//     finish, holding only its file and what the reader allocated.
package boundedread

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zkpipe/zkpipe/mem"
)

// DefaultTimeout is the deadline of one read when a caller gives none.
const DefaultTimeout = 30 * time.Second

// ErrTimeout marks a read that did not finish within its deadline.
var ErrTimeout = errors.New("timed out")

// File is an opened file as a reader sees it.
type File struct {
	f        *os.File
	name     string
	mode     fs.FileMode
	size     int64 // a regular file's size; -1 for a FIFO or a device
	sawData  bool  // a FIFO has delivered data (so a zero read is its EOF)
	pollable bool
	clock    *ioClock // with Options.IOTime: the time spent waiting in reads
	// cancelled: the read's context ended (its deadline is set to now,
	// which a Read's own deadline must not undo)
	cancelled atomic.Bool
}

// ioClock counts the time a read spends waiting in the kernel, in Read
// calls, against its limit: with Options.IOTime the deadline is of waiting,
// not of the decoder's work between reads.
type ioClock struct {
	mu    sync.Mutex
	spent time.Duration // in Read calls that returned
	since time.Time     // start of the Read in flight; zero when none
	limit time.Duration
}

func (c *ioClock) start() {
	c.mu.Lock()
	c.since = time.Now()
	c.mu.Unlock()
}

func (c *ioClock) stop() {
	c.mu.Lock()
	c.spent += time.Since(c.since)
	c.since = time.Time{}
	c.mu.Unlock()
}

// left is how much of the limit waiting may still take.
func (c *ioClock) left() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	used := c.spent
	if !c.since.IsZero() {
		used += time.Since(c.since)
	}
	return c.limit - used
}

func (c *ioClock) grow(d time.Duration) {
	c.mu.Lock()
	c.limit += d
	c.mu.Unlock()
}

// Size is a regular file's size from fstat, or -1 for a FIFO or a device,
// whose length is known only at EOF.
func (f *File) Size() int64 { return f.size }

// ReadAt reads len(p) bytes at off of a regular file (io.ReaderAt), for a
// reader that checks a file's layout against its size before it reads the
// body; on a FIFO or a device, which cannot seek, it fails.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if f.size < 0 {
		return 0, fmt.Errorf("%s: a %s has no offsets to read at", f.name, kind(f.mode))
	}
	return f.f.ReadAt(p, off)
}

// Skip moves a regular file's read offset n bytes on, for a reader that
// leaves a part of the file for later (ReadAt); a FIFO or a device fails.
func (f *File) Skip(n int64) error {
	if f.size < 0 {
		return fmt.Errorf("%s: a %s cannot skip what it has not read", f.name, kind(f.mode))
	}
	_, err := f.f.Seek(n, io.SeekCurrent)
	return err
}

// Name is the path the file was opened by.
func (f *File) Name() string { return f.name }

// Read reads from the file. On a FIFO, a zero read before any data may mean
// that no writer has opened it yet (O_NONBLOCK opens do not wait for one):
// Read then waits, under the deadline, for data or for a writer to come and
// go, so a slow producer still works and a missing one times out.
func (f *File) Read(p []byte) (int, error) {
	if f.clock != nil {
		f.clock.start()
		defer f.clock.stop()
		if f.pollable {
			// the poller's deadline: what waiting has left
			f.f.SetReadDeadline(time.Now().Add(max(f.clock.left(), 0)))
			if f.cancelled.Load() {
				f.f.SetReadDeadline(time.Now())
			}
		}
	}
	if !f.pollable || f.mode&fs.ModeNamedPipe == 0 || len(p) == 0 {
		n, err := f.f.Read(p)
		return n, mapDeadline(err)
	}
	rc, err := f.f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var rerr error
	waited := false
	err = rc.Read(func(fd uintptr) bool {
		n, rerr = syscall.Read(int(fd), p)
		switch {
		case rerr == syscall.EAGAIN:
			return false // no data yet: wait on the poller
		case rerr == syscall.EINTR:
			return false
		case n == 0 && rerr == nil && !f.sawData && !waited:
			// no writer yet, or one that left without writing: wait
			// once for data or a hang-up, then a zero read is EOF
			waited = true
			return false
		}
		return true
	})
	if err != nil {
		return 0, mapDeadline(err)
	}
	if rerr != nil {
		return 0, rerr
	}
	if n == 0 {
		return 0, io.EOF
	}
	f.sawData = true
	return n, nil
}

func mapDeadline(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return ErrTimeout
	}
	return err
}

// Options bound one read.
type Options struct {
	// Timeout bounds the whole read, from open to the last byte; 0 means
	// DefaultTimeout, a negative value no deadline but the context's.
	Timeout time.Duration
	// MinRate, when set, grows a regular file's deadline by its size over
	// MinRate (bytes a second) once fstat has told the size: a large key
	// on a working disk is not cut off, while a FIFO nobody writes to, whose
	// size is unknown, still fails at Timeout.
	MinRate int64
	// IOTime makes the deadline one of waiting: only the time spent in the
	// file's Read calls counts against Timeout (and MinRate's share), not
	// the reader's work between them. For a decoder whose CPU work takes
	// as long as the machine needs (decompressing a gnark proving key: a
	// square root a point, minutes for a large key on a busy two-core
	// machine), while a FIFO nobody writes to or a stalled mount, which
	// blocks in a read, is still caught at the same deadline.
	IOTime bool
}

func (o Options) timeout() time.Duration {
	if o.Timeout == 0 {
		return DefaultTimeout
	}
	return o.Timeout
}

// Read opens path and calls read with it, within ctx and o's deadline, and
// returns what read returns. read runs on a goroutine of its own and must
// not keep f; it may be abandoned (see the package comment), so it must
// allocate what it returns and touch nothing the caller shares. Errors name
// the path; a deadline error wraps ErrTimeout, a cancelled one ctx's error.
func Read[T any](ctx context.Context, path string, o Options, read func(f *File) (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, fmt.Errorf("%s: %w", path, err)
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1) // buffered: an abandoned reader never blocks
	sized := make(chan int64, 1) // a regular file's size, for MinRate
	var deadline time.Time
	if t := o.timeout(); t > 0 {
		deadline = time.Now().Add(t)
	}
	limit := o.timeout()
	// rctx ends when Read returns, for whatever reason: that wakes a
	// pollable read still blocked, so its goroutine ends now.
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var clock *ioClock
	if o.IOTime && !deadline.IsZero() {
		clock = &ioClock{limit: limit}
	}
	go func() {
		v, err := readFile(rctx, path, deadline, sized, clock, read)
		done <- result{v, err}
	}()

	var timer <-chan time.Time
	var t *time.Timer
	if !deadline.IsZero() {
		t = time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timer = t.C
	}
	timedOut := func() error {
		if clock != nil {
			return fmt.Errorf("%s: no complete read within %v of waiting for the file (a FIFO nobody writes to, or a stalled mount?): %w", path, limit, ErrTimeout)
		}
		return fmt.Errorf("%s: no complete read within %v (a FIFO nobody writes to, or a stalled mount?): %w", path, limit, ErrTimeout)
	}
	for {
		select {
		case n := <-sized:
			if t != nil && o.MinRate > 0 && n > 0 {
				// a regular file's reads take no deadline (see readFile):
				// only this timer bounds them
				more := time.Duration(float64(n) / float64(o.MinRate) * float64(time.Second))
				deadline = deadline.Add(more)
				limit += more
				if clock != nil {
					clock.grow(more)
				}
				t.Reset(time.Until(deadline))
			}
		case r := <-done:
			// the reader's own deadline and the timer end together: whichever
			// is seen first, the error is the same
			if errors.Is(r.err, ErrTimeout) {
				if ctx.Err() != nil {
					return zero, fmt.Errorf("%s: %w", path, ctx.Err())
				}
				return zero, timedOut()
			}
			return r.v, r.err
		case <-ctx.Done():
			return zero, fmt.Errorf("%s: %w", path, ctx.Err())
		case <-timer:
			if clock != nil {
				if left := clock.left(); left > 0 {
					// the reader was working, not waiting: the time
					// left is waiting's
					t.Reset(left)
					continue
				}
			}
			return zero, timedOut()
		}
	}
}

func readFile[T any](ctx context.Context, path string, deadline time.Time, sized chan<- int64, clock *ioClock, read func(f *File) (T, error)) (T, error) {
	var zero T
	osf, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return zero, err
	}
	defer osf.Close()
	st, err := osf.Stat()
	if err != nil {
		return zero, err
	}
	f := &File{f: osf, name: path, mode: st.Mode(), size: -1, clock: clock}
	switch m := st.Mode(); {
	case m.IsRegular():
		f.size = st.Size()
		sized <- f.size
	case m&(fs.ModeNamedPipe|fs.ModeCharDevice) != 0:
		// Only what the poller can wait on has a deadline: /dev/zero and
		// its like never block, but never end either, and are refused.
		if err := osf.SetReadDeadline(deadline); err != nil {
			return zero, fmt.Errorf("%s: a %s that cannot be read with a deadline; give a regular file or a pipe", path, kind(m))
		}
		f.pollable = true
		stop := context.AfterFunc(ctx, func() {
			f.cancelled.Store(true)
			osf.SetReadDeadline(time.Now())
		})
		defer stop()
	default:
		return zero, fmt.Errorf("%s: a %s, not a regular file or a pipe", path, kind(m))
	}
	return read(f)
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

// ReadAll reads the whole file at path, refusing one of more than limit
// bytes: a regular file by its size before a byte is read, a FIFO or device
// once it has given limit+1 bytes.
func ReadAll(ctx context.Context, path string, limit int64, o Options) ([]byte, error) {
	return Read(ctx, path, o, func(f *File) ([]byte, error) {
		if f.Size() > limit {
			return nil, fmt.Errorf("%s: %d bytes, more than the %d expected", path, f.Size(), limit)
		}
		data, err := io.ReadAll(io.LimitReader(f, limit+1))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if int64(len(data)) > limit {
			return nil, fmt.Errorf("%s: more than the %d bytes expected", path, limit)
		}
		return data, nil
	})
}

// ReadLimited opens path as Read does and hands read the file cut at limit
// bytes, for a reader that decodes a stream rather than a whole buffer: a
// regular file over limit is refused by its size before a byte is read, and
// a pipe that gives more fails its read. what names the kind of file in
// errors ("proving key").
func ReadLimited[T any](ctx context.Context, path, what string, limit int64, o Options, read func(r io.Reader) (T, error)) (T, error) {
	return Read(ctx, path, o, func(f *File) (T, error) {
		var zero T
		if f.Size() > limit {
			return zero, fmt.Errorf("%s: %d bytes, more than a %s can be (%d)", path, f.Size(), what, limit)
		}
		return read(&capped{r: f, left: limit, path: path, what: what, limit: limit})
	})
}

// Capped is f cut at limit bytes as ReadLimited hands it over: a read past
// limit fails, naming what the file is ("proving key").
func (f *File) Capped(limit int64, what string) io.Reader {
	return &capped{r: f, left: limit, path: f.name, what: what, limit: limit}
}

// capped fails a read past its limit, rather than end quietly as
// io.LimitReader does: a decoder must not take a cut stream for the file.
type capped struct {
	r           io.Reader
	left, limit int64
	path, what  string
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		if n, err := c.r.Read(one[:]); n == 0 {
			if err == nil {
				err = io.EOF
			}
			return 0, err
		}
		return 0, fmt.Errorf("%s: more than a %s can be (%d bytes)", c.path, c.what, c.limit)
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// Skip skips n bytes of the capped file (File.Skip), within its limit.
func (c *capped) Skip(n int64) error {
	s, ok := c.r.(interface{ Skip(int64) error })
	if !ok {
		return fmt.Errorf("%s: cannot skip", c.path)
	}
	if n > c.left {
		return fmt.Errorf("%s: more than a %s can be (%d bytes)", c.path, c.what, c.limit)
	}
	if err := s.Skip(n); err != nil {
		return err
	}
	c.left -= n
	return nil
}

// MachineMemory is the most memory this process may use (the machine's,
// lowered to its cgroup's limit): no file read whole into memory can be
// larger, so a larger one (a huge sparse file, say) is refused unread.
func MachineMemory() int64 {
	if m := mem.ReadMachine().Limit; m > 0 {
		return m
	}
	return 1 << 40
}
