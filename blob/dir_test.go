package blob

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDirWritesWholeFilesOrNone(t *testing.T) {
	dir := t.TempDir()
	d := Dir(dir)
	p, err := d.Write("a.proof", []byte("first"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Write("a.proof", []byte("second, longer")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "second, longer" {
		t.Errorf("rewrite left %q", b)
	}
	if _, err := Dir(filepath.Join(dir, "missing")).Write("b.proof", []byte("x")); err == nil {
		t.Error("write into a missing directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only a.proof (no temporaries)", len(entries))
	}
}
