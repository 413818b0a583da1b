package gnarksrc_test

import (
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

func heapObjects() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	runtime.GC()
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// HostBytes, what the governor charges for a loaded circuit beside its key
// and selections, is most of what the loaded circuit keeps on the heap
// beside them (the R1CS; 80.4 of 86.2 B a constraint for bits 2^16), and
// never more.
func TestHostBytesIsTheR1CS(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bits")
	if _, err := gnarksrc.Setup("bits", 60000, dir); err != nil {
		t.Fatal(err)
	}
	before := heapObjects()
	c, err := gnarksrc.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	kept := heapObjects() - before - c.Key.HostBytes() - int64(len(c.Sel.A)+len(c.Sel.B)+len(c.Sel.K))*4
	got := c.Source.HostBytes()
	t.Logf("%d constraints: HostBytes %d (%.1f B a constraint), the loaded circuit keeps %d beside its key and selections (%.1f)",
		c.Constraints, got, float64(got)/float64(c.Constraints), kept, float64(kept)/float64(c.Constraints))
	if got > kept || got < kept*3/4 {
		t.Errorf("HostBytes %d for %d kept beside the key: want 75%% to 100%% of it", got, kept)
	}
	runtime.KeepAlive(c)
}
