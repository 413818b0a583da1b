package blob

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Dir is a Writer writing files into a directory, each atomically: the
// house's one atomic writer (outputs, keys, contracts, results).
type Dir string

// Write writes data to a temporary file in the directory, syncs it, and
// renames it into place: a reader sees the whole file or none, even if the
// disk fills or the process dies mid-write. A name with a directory part (a
// partition's "porep-1/0.proof") is written in that subdirectory, made if
// needed, its temporary file beside it.
func (d Dir) Write(name string, data []byte) (string, error) {
	return d.WriteStream(name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteStream is Write for a file too large to hold twice: write streams
// it (buffered) into the temporary file, which is synced and renamed into
// place as Write's is. A 2^26 circuit's proving key is 24 GiB.
func (d Dir) WriteStream(name string, write func(io.Writer) error) (string, error) {
	final := filepath.Join(string(d), name)
	dir := filepath.Dir(final)
	if dir != filepath.Clean(string(d)) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("write %s: %w", final, err)
		}
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(final)+tempMark+"*")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", final, err)
	}
	tmp := f.Name()
	fail := func(err error) (string, error) {
		f.Close()
		os.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", final, err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		return fail(err)
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", final, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", final, err)
	}
	return final, nil
}

// tempMark is in the name of every temporary file Dir writes.
const tempMark = ".tmp-"

// IsTempName tells whether name is one of Dir's temporary files (a dot, the
// final name, .tmp-, a random suffix): a run killed mid-write leaves one.
func IsTempName(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, tempMark)
}
