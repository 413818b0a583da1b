package commands

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

// --adapt-shape and the stage flags reach the engine: the status output
// and the first result line say the shape in force, a stage set by a flag
// keeps it, and with --adapt-shape=false nothing changes.
func TestProveSaysTheShapeAndKeepsFlags(t *testing.T) {
	dir := setupCircuit(t, t.TempDir(), "chain", "mulchain", 300)
	vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(dir, gnarksrc.VKFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flags []string
		says  string
	}{
		{[]string{"--adapt-every", "10ms"}, "adapted while it runs"},
		{[]string{"--adapt-shape=false", "--adapt-every", "10ms"}, "kept (--adapt-shape=false)"},
	} {
		lines, status := proveJobs(t, dir, 24, append(c.flags, "--synthesize-workers", "2", "--synthesize-queue", "3")...)
		if !strings.Contains(status, "zkpipe: shape parse ") || !strings.Contains(status, c.says) {
			t.Errorf("%v: status output does not say the shape:\n%s", c.flags, status)
		}
		for i, l := range lines {
			if l.Error != "" {
				t.Fatalf("%v: job %s: %s", c.flags, l.ID, l.Error)
			}
			if err := gnarksrc.VerifyFiles(vk, l.Proof, l.Public); err != nil {
				t.Errorf("%v: job %s: gnark rejects the proof: %v", c.flags, l.ID, err)
			}
			if i == 0 && l.Shape == "" {
				t.Errorf("%v: the first result line has no shape", c.flags)
			}
			if l.Shape != "" && !strings.Contains(l.Shape, "synthesize 2/3 ") {
				t.Errorf("%v: job %s: shape %q, want the flags' synthesize 2/3", c.flags, l.ID, l.Shape)
			}
			if c.flags[0] == "--adapt-shape=false" && len(l.ShapeChanges) > 0 {
				t.Errorf("%v: job %s: changes %q", c.flags, l.ID, l.ShapeChanges)
			}
		}
	}
}
