// Package ioplan checks a command's outputs against its inputs, once,
// before anything is written: no output may be an input (by identity, so
// symlinks, hard links, /proc/self/cwd/… and ./a spellings are one file),
// a name that would add to or replace an input directory's files (a
// circuit directory's circuit.pk, or a hash-to-field it does not have
// yet), a file another output or an output directory writes, or a
// directory; and every output's directory must exist. A command records
// what it reads and writes in a Plan and calls Check before its first
// write, so that a refused run leaves every file as it was (a proof and
// its public inputs are written both or neither).
//
// Every command that writes a file goes through a Plan: prove, bench,
// results, timeline, export solidity, setup --r1cs, groth16 prove and fullprove (whose
// Plan is fileprove's), and the engine's per-job witness check uses its
// Files.
package ioplan

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// ErrClash marks an output refused for what it would overwrite, or where
// it would go (engine.ErrInputClash is this error).
var ErrClash = errors.New("an output that is one of the run's inputs")

// Files are files recorded by identity (os.SameFile): symlinks, hard links
// and spellings of one path (./a, a) are one file.
type Files struct {
	names, paths []string // paths: "" for an open file (AddInfo)
	infos        []os.FileInfo
}

// Add records the file at path as name ("--jobs jobs.jsonl"); a path that
// does not exist (yet) is no file to clash with.
func (f *Files) Add(name, path string) {
	if fi, err := os.Stat(path); err == nil {
		f.names, f.paths, f.infos = append(f.names, name), append(f.paths, path), append(f.infos, fi)
	}
}

// AddInfo records an open file (stdin) as name.
func (f *Files) AddInfo(name string, fi os.FileInfo) {
	f.names, f.paths, f.infos = append(f.names, name), append(f.paths, ""), append(f.infos, fi)
}

// FindIn returns the name of the first recorded file whose path is, by
// in, somewhere it must not be.
func (f *Files) FindIn(in func(path string) bool) (string, bool) {
	for i, p := range f.paths {
		if p != "" && in(p) {
			return f.names[i], true
		}
	}
	return "", false
}

// Find returns the name of the recorded file that path is, if any. Only a
// regular file clashes: writing to /dev/null, a terminal or a pipe
// truncates nothing (--jobs /dev/null --results /dev/null is harmless).
func (f *Files) Find(path string) (string, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	for i, g := range f.infos {
		if os.SameFile(fi, g) {
			return f.names[i], true
		}
	}
	return "", false
}

// Plan is what one command reads and writes.
type Plan struct {
	in      Files
	dirs    []inputDir
	outs    []output
	outDirs []outputDir
}

type inputDir struct {
	name, dir string
	files     []string
}

type output struct {
	name, path string
	replace    bool // written beside and renamed into place
}

type outputDir struct {
	name, dir string
	writes    func(path string) bool
}

// Read records the input file at path as name ("--zkey a.zkey"); one
// that does not exist is none.
func (p *Plan) Read(name, path string) { p.in.Add(name, path) }

// ReadOpen records an open input (stdin's file) as name.
func (p *Plan) ReadOpen(name string, fi os.FileInfo) { p.in.AddInfo(name, fi) }

// ReadDir records the input directory dir, whose files of the given names
// are inputs whether they exist or not: an output of one of those names
// there would replace one (circuit.pk) or add one that changes what the
// directory means (a hash-to-field it did not have). name says what dir
// is ("--circuit c"); its files are named "the NAME file DIR/FILE".
func (p *Plan) ReadDir(name, dir string, files ...string) {
	for _, f := range files {
		p.in.Add("the "+name+" file "+filepath.Join(dir, f), filepath.Join(dir, f))
	}
	p.dirs = append(p.dirs, inputDir{name, dir, files})
}

// Write records the output file path as name ("--results"), opened
// and truncated in place (a FIFO or a device may be one). "-" (stdout) and
// "" are no file.
func (p *Plan) Write(name, path string) {
	if path != "" && path != "-" {
		p.outs = append(p.outs, output{name, path, false})
	}
}

// Replace records the output file path as name ("--contract"), written
// whole beside it and renamed into place (blob.Dir.Write), so its
// directory must let a file be made there. "-" and "" are no file.
func (p *Plan) Replace(name, path string) {
	if path != "" && path != "-" {
		p.outs = append(p.outs, output{name, path, true})
	}
}

// WriteIn records the output directory dir, as name ("--out"), in which
// the command writes the paths writes says (the engine's InOutDir): none
// of them may be an input or another output. "" is no directory (a fresh
// temporary one).
func (p *Plan) WriteIn(name, dir string, writes func(path string) bool) {
	if dir != "" {
		p.outDirs = append(p.outDirs, outputDir{name, dir, writes})
	}
}

// Check refuses, naming the paths and wrapping ErrClash, an output that
// is an input, or a name an input directory holds, or is written by
// another output or in an output directory; one that is a directory; or
// one whose directory does not exist. And an input that is a file written
// in an output directory. It writes nothing.
func (p *Plan) Check() error {
	for i, o := range p.outs {
		if err := p.checkOutput(o); err != nil {
			return err
		}
		for _, q := range p.outs[:i] {
			if sameFile(o.path, q.path) {
				return fmt.Errorf("%s %s and %s %s are one file: give each its own (%w)", q.name, q.path, o.name, o.path, ErrClash)
			}
		}
	}
	for _, d := range p.outDirs {
		if name, ok := p.in.FindIn(func(path string) bool { return d.writes(path) }); ok {
			return fmt.Errorf("%s is a file zkpipe writes in %s %s: refusing to overwrite an input (%w)", name, d.name, d.dir, ErrClash)
		}
	}
	return nil
}

func (p *Plan) checkOutput(o output) error {
	if name, ok := p.in.Find(o.path); ok {
		return fmt.Errorf("%s %s is %s: refusing to overwrite an input (%w)", o.name, o.path, name, ErrClash)
	}
	// by name: a file an input directory would hold, there or not yet,
	// at the path or where a symlink there points (a file created through
	// a dangling link: --results)
	for _, t := range linkChain(o.path) {
		base := filepath.Base(t)
		for _, d := range p.dirs {
			for _, f := range d.files {
				if base == f && sameDir(d.dir, filepath.Dir(t)) {
					return fmt.Errorf("%s %s is the %s file %s: refusing to overwrite an input (%w)", o.name, o.path, d.name, filepath.Join(d.dir, f), ErrClash)
				}
			}
		}
	}
	for _, d := range p.outDirs {
		if d.writes(o.path) {
			return fmt.Errorf("%s %s is a file zkpipe writes in %s %s: give it another name (%w)", o.name, o.path, d.name, d.dir, ErrClash)
		}
	}
	fi, err := os.Stat(o.path)
	switch {
	case err == nil && fi.IsDir():
		return fmt.Errorf("%s %s is a directory: give the file to write (nothing written)", o.name, o.path)
	case err == nil && !o.replace:
		return nil // opened where it is (a file, a FIFO, /dev/null)
	}
	dir := filepath.Dir(o.path)
	for _, d := range p.outDirs {
		if sameDir(d.dir, dir) {
			return nil // made by the command, if not there yet
		}
	}
	switch fi, err := os.Stat(dir); {
	case err != nil:
		return fmt.Errorf("%s %s: its directory: %w (nothing written)", o.name, o.path, err)
	case !fi.IsDir():
		return fmt.Errorf("%s %s: %s is not a directory (nothing written)", o.name, o.path, dir)
	}
	// W_OK|X_OK: a file is made in it (written whole and renamed into
	// place, or created)
	if err := syscall.Access(dir, 0o2|0o1); err != nil {
		return fmt.Errorf("%s %s: cannot write in %s: %w (nothing written)", o.name, o.path, dir, err)
	}
	return nil
}

// sameFile reports whether paths a and b are one file: by identity when
// both exist, else by their directories' identity and their names.
func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	if err1 == nil && err2 == nil {
		return os.SameFile(fa, fb)
	}
	return filepath.Base(a) == filepath.Base(b) && sameDir(filepath.Dir(a), filepath.Dir(b))
}

// SameDir reports whether directories a and b are one: by identity when
// both exist, else (one to be created) by absolute path.
func SameDir(a, b string) bool { return sameDir(a, b) }

func sameDir(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	if err1 == nil && err2 == nil {
		return os.SameFile(fa, fb)
	}
	aa, err1 := filepath.Abs(a)
	ab, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == ab
}

// linkChain is path and, while it is a symlink, what it points to, in
// turn (at most 40 links, as the kernel follows).
func linkChain(path string) []string {
	chain := []string{path}
	for range 40 {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			break
		}
		t, err := os.Readlink(path)
		if err != nil {
			break
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(path), t)
		}
		path = t
		chain = append(chain, path)
	}
	return chain
}
