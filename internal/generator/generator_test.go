package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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

// TestCUDACurveListMatches: the CUDA library's list of curves
// (gpu/cuda/curves.h's ZK_CURVES) names the curves of curves in the same
// order: a curve's place is its library id on both sides (ZK_CURVE_*, the
// generated zkCurve constants, zk_abi's size table).
func TestCUDACurveListMatches(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "gpu", "cuda", "curves.h"))
	if err != nil {
		t.Fatal(err)
	}
	var cuda []string
	for _, m := range regexp.MustCompile(`(?m)^\s*X\(a, (\w+),`).FindAllSubmatch(src, -1) {
		cuda = append(cuda, string(m[1]))
	}
	var gen []string
	for _, c := range curves {
		gen = append(gen, c.ID)
	}
	if !slices.Equal(cuda, gen) {
		t.Errorf("gpu/cuda/curves.h lists %v, internal/generator's curves %v: one list a language, in one order", cuda, gen)
	}
}
