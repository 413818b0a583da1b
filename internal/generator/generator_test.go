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
	if len(files) != len(outputs)*len(curves) {
		t.Fatalf("%d files for %d templates × %d curves: two outputs share a path", len(files), len(outputs), len(curves))
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
