package engine

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zkpipe/zkpipe/source/circomsrc"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

// Every name the engine writes in an output directory is an output there,
// so no run may read it as an input; other names, and the same names in
// another directory, are not.
func TestInOutDirKnowsEveryOutput(t *testing.T) {
	out, other := t.TempDir(), t.TempDir()
	suffixes := append(slices.Clone(gnarksrc.OutputSuffixes), circomsrc.OutputSuffixes...)
	for _, name := range []string{"j1.proof", "j1.public", "j1.proof.json", "j1.public.json", "j1.calldata", LockFile} {
		if !InOutDir(out, filepath.Join(out, name), suffixes) {
			t.Errorf("%s in the output directory: not an output", name)
		}
		if InOutDir(out, filepath.Join(other, name), suffixes) {
			t.Errorf("%s in another directory: an output", name)
		}
	}
	for _, name := range []string{"j1.wtns", "j1.witness", "calldata", ".calldata", "j1.calldata.bak"} {
		if InOutDir(out, filepath.Join(out, name), suffixes) {
			t.Errorf("%s: an output, want not", name)
		}
	}
	// a request of partitions writes REQUEST/INDEX.suffix, and temporary
	// files beside them; nothing else in such a subdirectory is an output
	for _, name := range []string{"porep-1/0.proof", "porep-1/0.public", "porep-1/12.proof.json", "porep-1/3.public.json", "porep-1/63.calldata", "porep-1/.0.proof.tmp-123"} {
		if !InOutDir(out, filepath.Join(out, name), suffixes) {
			t.Errorf("%s in the output directory: not an output", name)
		}
		if InOutDir(out, filepath.Join(other, name), suffixes) {
			t.Errorf("%s in another directory: an output", name)
		}
	}
	for _, name := range []string{"porep-1/a.proof", "porep-1/01.proof", "porep-1/-1.proof", "porep-1/0.wtns", ".r/0.proof", "a/b/0.proof", "porep-1/0"} {
		if InOutDir(out, filepath.Join(out, name), suffixes) {
			t.Errorf("%s: an output, want not", name)
		}
	}
	// a symlink elsewhere to an output is that output
	link := filepath.Join(other, "w")
	if err := os.Symlink(filepath.Join(out, "j2.calldata"), link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "j2.calldata"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if !InOutDir(out, link, suffixes) {
		t.Error("a symlink to an output's calldata: not an output")
	}
}
