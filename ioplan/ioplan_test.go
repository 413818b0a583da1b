package ioplan

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each output that would overwrite an input, add a file to an input
// directory, be written twice, or be a directory is refused, naming both
// sides; the same outputs elsewhere pass. Nothing is written by Check.
func TestCheck(t *testing.T) {
	root := t.TempDir()
	circ := filepath.Join(root, "c")
	if err := os.Mkdir(circ, 0o755); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(circ, "key")
	if err := os.WriteFile(key, []byte("key"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(root, "in.txt")
	if err := os.WriteFile(in, []byte("in"), 0o644); err != nil {
		t.Fatal(err)
	}
	hard, sym, dangling := filepath.Join(root, "hard"), filepath.Join(root, "sym"), filepath.Join(root, "dangling")
	if err := os.Link(key, hard); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(in, sym); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("c/absent", dangling); err != nil { // relative to its directory
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	if err := os.Chdir(root); err != nil {
		t.Fatal(err)
	}
	plan := func(outs ...string) *Plan {
		var p Plan
		p.Read("--in "+in, in)
		p.ReadDir("--circuit", circ, "key", "absent")
		for _, o := range outs {
			p.Replace("--o", o)
		}
		p.WriteIn("--out", filepath.Join(root, "out"), func(path string) bool { return filepath.Base(path) == "owned" })
		return &p
	}
	for _, c := range []struct {
		outs []string
		want string
	}{
		{[]string{in}, "is --in"},
		{[]string{sym}, "is --in"},
		{[]string{"/proc/self/cwd/in.txt"}, "is --in"},
		{[]string{key}, "is the --circuit file"},
		{[]string{hard}, "is the --circuit file"},
		{[]string{"/proc/self/cwd/c/key"}, "is the --circuit file"},
		{[]string{filepath.Join(circ, "absent")}, "is the --circuit file " + filepath.Join(circ, "absent")},
		{[]string{"/proc/self/cwd/c/absent"}, "is the --circuit file"},
		{[]string{dangling}, "is the --circuit file"},
		{[]string{filepath.Join(root, "out", "owned")}, "writes in --out"},
		{[]string{filepath.Join(root, "a"), "./a"}, "are one file"},
		{[]string{circ}, "is a directory"},
		{[]string{filepath.Join(root, "none", "a")}, "no such file"},
		{[]string{filepath.Join(in, "a")}, "not a directory"},
	} {
		err := plan(c.outs...).Check()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.outs, err, c.want)
		}
		if strings.Contains(c.want, "is ") && err != nil && !errors.Is(err, ErrClash) && c.want != "is a directory" {
			t.Errorf("%v: %v does not wrap ErrClash", c.outs, err)
		}
	}
	if err := plan(filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "out", "other")).Check(); err != nil {
		t.Errorf("outputs of their own: %v", err)
	}
	// an input where the output directory writes
	var p Plan
	p.Read("--jobs", filepath.Join(root, "out", "owned"))
	os.Mkdir(filepath.Join(root, "out"), 0o755)
	os.WriteFile(filepath.Join(root, "out", "owned"), nil, 0o644)
	p.Read("--jobs", filepath.Join(root, "out", "owned"))
	p.WriteIn("--out", filepath.Join(root, "out"), func(path string) bool { return filepath.Base(path) == "owned" })
	if err := p.Check(); err == nil || !errors.Is(err, ErrClash) {
		t.Errorf("an input the output directory writes: %v", err)
	}
	if b, _ := os.ReadFile(key); string(b) != "key" {
		t.Error("Check wrote")
	}
}
