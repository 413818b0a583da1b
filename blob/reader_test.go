package blob

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestReadersSayNotExist: every Reader tells a missing blob (fs.ErrNotExist,
// what a job that stored nothing reads as) from one too large for its kind.
func TestReadersSayNotExist(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := &Memory{}
	m.Write("a", []byte("12345"))
	for name, r := range map[string]Reader{"dir": DirReader(dir), "files": Files{"a": []byte("12345")}, "memory": m} {
		ctx := context.Background()
		if b, err := r.Read(ctx, "a", 5); err != nil || string(b) != "12345" {
			t.Errorf("%s: read a: %q, %v", name, b, err)
		}
		if _, err := r.Read(ctx, "b", 5); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: a missing blob: %v, want fs.ErrNotExist", name, err)
		}
		if _, err := r.Read(ctx, "a", 4); err == nil || errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: a blob past its limit: %v, want an error other than fs.ErrNotExist", name, err)
		}
	}
	if got := DirReader(dir).Where("a"); got != filepath.Join(dir, "a") {
		t.Errorf("DirReader.Where: %s", got)
	}
}
