package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// LockFile is the file in an output directory whose lock marks it as in use.
const LockFile = ".zkpipe.lock"

// ErrDirInUse is returned by OpenOutDir when another process holds the
// directory.
var ErrDirInUse = errors.New("in use by another zkpipe")

// OutDir is an output directory held by one process: while it is open no
// other zkpipe writes there, so two runs with overlapping ids cannot leave a
// job's proof from one and its public inputs from the other.
//
// Files are written as blob.Dir writes them (temporary file, sync,
// rename). The first failed write is kept: see Failed.
type OutDir struct {
	dir    blob.Dir
	unlock func() error

	mu       sync.Mutex
	failed   error
	onFailed func(error)
}

// OpenOutDir creates dir if needed, locks it (refusing one another process
// holds) and removes the temporary files a killed run left in it: with the
// lock held, nobody else is writing them.
func OpenOutDir(dir string) (*OutDir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("output directory %s: %w", dir, err)
	}
	unlock, err := lockDir(filepath.Join(dir, LockFile))
	if err != nil {
		return nil, fmt.Errorf("output directory %s: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		unlock()
		return nil, fmt.Errorf("output directory %s: %w", dir, err)
	}
	for _, e := range entries {
		if blob.IsTempName(e.Name()) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
		// a request of partitions writes in a subdirectory named by its id
		if e.IsDir() && stream.ValidID(e.Name()) {
			sub, err := os.ReadDir(filepath.Join(dir, e.Name()))
			if err != nil {
				continue
			}
			for _, f := range sub {
				if blob.IsTempName(f.Name()) {
					os.Remove(filepath.Join(dir, e.Name(), f.Name()))
				}
			}
		}
	}
	return &OutDir{dir: blob.Dir(dir), unlock: unlock}, nil
}

// openOutput opens what takes the jobs' outputs: Options.Output, or the
// directory Out (e.out), locked.
func (e *Engine) openOutput() (stages.Output, error) {
	if e.opts.Output != nil {
		return e.opts.Output, nil
	}
	var err error
	if e.out, err = OpenOutDir(e.opts.Out); err != nil {
		return nil, fmt.Errorf("engine.Options.Out: %w", err)
	}
	return e.out, nil
}

// Path is the directory; "" on nil (an engine writing to Options.Output).
func (d *OutDir) Path() string {
	if d == nil {
		return ""
	}
	return string(d.dir)
}

// Write stores data under name (stages.Output). A failed write wraps
// ErrOutput; the first is kept as the directory's failure and reported to
// the function OnFailed set.
func (d *OutDir) Write(name string, data []byte) (string, error) {
	p, err := d.dir.Write(name, data)
	if err != nil {
		err = fmt.Errorf("%w: %w", ErrOutput, err)
		d.mu.Lock()
		first := d.failed == nil
		if first {
			d.failed = err
		}
		f := d.onFailed
		d.mu.Unlock()
		if first && f != nil {
			f(err)
		}
	}
	return p, err
}

// Failed is the first failed write, if any (none on nil).
func (d *OutDir) Failed() error {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.failed
}

// OnFailed sets the function told of the first failed write (none on nil).
func (d *OutDir) OnFailed(f func(error)) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.onFailed = f
}

// Close releases the directory's lock.
func (d *OutDir) Close() error {
	if d == nil || d.unlock == nil {
		return nil
	}
	err := d.unlock()
	d.unlock = nil
	return err
}
