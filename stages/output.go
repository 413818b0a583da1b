package stages

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Output stores a job's files.
type Output interface {
	// Write stores data under name, whole or not at all, and returns the path
	// a reader should use. Writing the same name again replaces it atomically,
	// so a job delivered twice is harmless.
	Write(name string, data []byte) (string, error)
}

// Dir is an Output writing files into a directory.
type Dir string

// Write writes data to a temporary file in the directory, syncs it, and
// renames it into place: a reader sees the whole file or none, even if the
// disk fills or the process dies mid-write.
func (d Dir) Write(name string, data []byte) (string, error) {
	final := filepath.Join(string(d), name)
	f, err := os.CreateTemp(string(d), "."+name+tempMark+"*")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", final, err)
	}
	tmp := f.Name()
	fail := func(err error) (string, error) {
		f.Close()
		os.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", final, err)
	}
	if _, err := f.Write(data); err != nil {
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

// Memory is an Output that keeps a job's files in memory, for a caller
// that wants values, not paths (the library's Engine.Prove). Safe for
// concurrent use.
type Memory struct {
	mu    sync.Mutex
	files map[string][]byte
}

// memoryPrefix marks the paths Memory returns: no file is at them.
const memoryPrefix = "mem:"

// Write keeps a copy of data under name and returns "mem:" and name.
func (m *Memory) Write(name string, data []byte) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files == nil {
		m.files = make(map[string][]byte)
	}
	m.files[name] = bytes.Clone(data)
	return memoryPrefix + name, nil
}

// File returns what was written under name.
func (m *Memory) File(name string) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[name]
	return b, ok
}
