package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Collect takes files, directories (through a symlink too; hidden files and
// subdirectories skipped) and globs, counts a file reached twice (the same
// path, a symlink, a hard link) once, keeps the first MaxWitnesses, and
// names the pattern that gives nothing.
func TestCollect(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "w")
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	for i := range MaxWitnesses + 3 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("w%03d", i)), []byte("x"), 0o644)
	}
	os.WriteFile(filepath.Join(dir, ".hidden"), []byte("x"), 0o644)
	os.Symlink(dir, filepath.Join(root, "link"))
	os.Link(filepath.Join(dir, "w000"), filepath.Join(root, "hard"))

	files, skipped, err := Collect("witness", []string{filepath.Join(root, "hard"), filepath.Join(root, "link"), dir, filepath.Join(dir, "w0*")})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != MaxWitnesses || skipped != 3 || files[0] != filepath.Join(root, "hard") || files[1] != filepath.Join(root, "link", "w001") {
		t.Errorf("%d files (%v…), %d skipped; want %d from hard, link/w001 on, and 3 skipped", len(files), files[:2], skipped, MaxWitnesses)
	}
	for _, f := range files {
		if strings.Contains(f, "hidden") || strings.HasSuffix(f, "sub") {
			t.Errorf("took %s", f)
		}
	}
	os.MkdirAll(filepath.Join(root, "dirs", "a"), 0o755)
	for pat, want := range map[string]string{
		filepath.Join(root, "*.none"): "no file matches",
		filepath.Join(root, "absent"): "no such file",
		filepath.Join(dir, "sub"):     "an empty directory",
		filepath.Join(root, "dirs"):   "no files, only directories",
		filepath.Join(root, "[x"):     "syntax error in pattern",
	} {
		if _, _, err := Collect("wtns", []string{pat}); err == nil || !strings.Contains(err.Error(), "--wtns "+pat+": "+want) {
			t.Errorf("%s: %v, want %q", pat, err, want)
		}
	}
}
