package blob

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/zkpipe/zkpipe/blob/boundedread"
)

// Reader reads a job's stored outputs by name, wherever they are: a
// directory (DirReader), an object store's files in hand (Files), memory
// (Memory). Read returns the blob name holds, an error wrapping
// fs.ErrNotExist when there is none of that name, and an error when it holds
// more than limit bytes: nothing is read whole past what its kind can be.
// Where says where name is, for a result line or an error (a directory's
// path; else the name).
type Reader interface {
	Read(ctx context.Context, name string, limit int64) ([]byte, error)
	Where(name string) string
}

// DirReader reads the files of a directory, each bounded in size and time
// (boundedread: a FIFO, a device or a stalled mount does not hang it).
type DirReader string

// Where is name's path.
func (d DirReader) Where(name string) string { return filepath.Join(string(d), name) }

// Read reads dir/name, at most limit bytes.
func (d DirReader) Read(ctx context.Context, name string, limit int64) ([]byte, error) {
	return boundedread.ReadAll(ctx, d.Where(name), limit, boundedread.Options{})
}

// Files are blobs in hand, by name (a fleet job's stored outputs, fetched).
type Files map[string][]byte

// Read returns files[name].
func (f Files) Read(_ context.Context, name string, limit int64) ([]byte, error) {
	return readIn(f, name, limit)
}

// Where is name.
func (Files) Where(name string) string { return name }

// Where is name.
func (*Memory) Where(name string) string { return name }

// Read returns what was written under name, as Files does.
func (m *Memory) Read(_ context.Context, name string, limit int64) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return readIn(m.files, name, limit)
}

func readIn(files map[string][]byte, name string, limit int64) ([]byte, error) {
	b, ok := files[name]
	switch {
	case !ok:
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	case int64(len(b)) > limit:
		return nil, fmt.Errorf("%s: %d bytes, more than the %d expected", name, len(b), limit)
	}
	return b, nil
}
