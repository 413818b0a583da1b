package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedFilesAreFresh fails when a committed per-curve file is not
// what its template makes now: edit the template, not the file, and run
// go generate ./internal/generator.
func TestGeneratedFilesAreFresh(t *testing.T) {
	files, err := render()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(outputs)*len(curves)+len(tables) {
		t.Fatalf("%d files for %d templates × %d curves and %d tables: two outputs share a path", len(files), len(outputs), len(curves), len(tables))
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join("..", "..", path))
		if err != nil {
			t.Errorf("%s: %v (run go generate ./internal/generator)", path, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from its template's output: edit the template and run go generate ./internal/generator", path)
		}
	}
}

// TestNoInitInGeneratedFiles: a generated file declares its curve's half and
// the tables list the halves; none registers itself with init(), so that
// which curves a package knows is read in its table, not inferred from the
// files it holds.
func TestNoInitInGeneratedFiles(t *testing.T) {
	files, err := render()
	if err != nil {
		t.Fatal(err)
	}
	for path, src := range files {
		if bytes.Contains(src, []byte("\nfunc init()")) {
			t.Errorf("%s: a func init() in a generated file: declare the curve's half and list it in a table", path)
		}
	}
}
