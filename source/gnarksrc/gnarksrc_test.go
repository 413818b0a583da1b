package gnarksrc_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

func setup(t *testing.T, builtin string, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), builtin)
	if _, err := gnarksrc.Setup(builtin, n, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLoadDirRoundTripsSetup(t *testing.T) {
	dir := setup(t, "commit", 100)
	c, err := gnarksrc.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "commit" || c.Constraints < 100 || c.Source.Kind() != "gnark" {
		t.Fatalf("loaded %s with %d constraints (%s)", c.Name, c.Constraints, c.Source.Kind())
	}
	// commit's K query skips the committed wires and the commitment wire
	if len(c.Sel.K) >= c.NbWires-c.NbPublic {
		t.Errorf("K selects %d of %d private wires: committed ones not skipped", len(c.Sel.K), c.NbWires-c.NbPublic)
	}
}

func TestLoadDirNamesWhatIsWrong(t *testing.T) {
	chain := setup(t, "mulchain", 64)
	bits := setup(t, "bits", 300)
	copyDir := func(t *testing.T, src string) string {
		dst := filepath.Join(t.TempDir(), "c")
		os.MkdirAll(dst, 0o755)
		for _, f := range []string{gnarksrc.R1CSFile, gnarksrc.PKFile, gnarksrc.VKFile, gnarksrc.MetaFile} {
			b, err := os.ReadFile(filepath.Join(src, f))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dst, f), b, 0o644)
		}
		return dst
	}
	cases := []struct {
		name, want string
		spoil      func(dir string)
	}{
		{"missing key", "circuit.pk", func(d string) { os.Remove(filepath.Join(d, gnarksrc.PKFile)) }},
		{"truncated key", "circuit.pk", func(d string) {
			b, _ := os.ReadFile(filepath.Join(d, gnarksrc.PKFile))
			os.WriteFile(filepath.Join(d, gnarksrc.PKFile), b[:len(b)/3], 0o644)
		}},
		{"garbage r1cs", "circuit.r1cs", func(d string) { os.WriteFile(filepath.Join(d, gnarksrc.R1CSFile), []byte("not an r1cs"), 0o644) }},
		{"key of another circuit", "not of one circuit", func(d string) {
			b, _ := os.ReadFile(filepath.Join(bits, gnarksrc.PKFile))
			os.WriteFile(filepath.Join(d, gnarksrc.PKFile), b, 0o644)
		}},
		{"bad meta", "circuit.json", func(d string) { os.WriteFile(filepath.Join(d, gnarksrc.MetaFile), []byte(`{"builtin":"nope"}`), 0o644) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, chain)
			tc.spoil(dir)
			_, err := gnarksrc.LoadDir(dir)
			if err == nil {
				t.Fatal("loaded a spoiled circuit directory")
			}
			if !strings.Contains(err.Error(), "circuit c") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q should name the circuit and mention %q", err, tc.want)
			}
		})
	}
}

func TestSetupRejectsUnknownAndTinyCircuits(t *testing.T) {
	if _, err := gnarksrc.Setup("nope", 100, t.TempDir()); err == nil || !strings.Contains(err.Error(), "unknown built-in") {
		t.Errorf("unknown built-in: %v", err)
	}
	if _, err := gnarksrc.Setup("mulchain", 1, t.TempDir()); err == nil || !strings.Contains(err.Error(), "below the minimum") {
		t.Errorf("tiny circuit: %v", err)
	}
}
