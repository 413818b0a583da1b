package engine

import (
	"runtime"
	"testing"

	"github.com/zkpipe/zkpipe/mem"
)

// untouched keeps a large allocation reachable until the test drops it, so
// that the compiler cannot elide it.
var untouched []byte

// What is resident before the first job is charged at least at the live
// Go heap, even where the heap's free pages were never resident: a key
// load that frees buffers it never wrote (a fresh span is not zeroed, so
// its pages are never touched) leaves free heap that RSS does not hold,
// and RSS − Reusable then falls below what the process keeps (on the
// H200, bits 2^26's R1CS, about 5 GiB, went uncharged).
func TestChargeResidentCountsTheLiveHeap(t *testing.T) {
	const liveBytes, freedBytes = 256 << 20, 1 << 30
	live := make([]byte, liveBytes)
	for i := 0; i < len(live); i += 4096 {
		live[i] = 1 // resident: what a loaded R1CS is
	}
	untouched = make([]byte, freedBytes) // never written: never resident
	untouched = nil
	g := mem.NewGovernor(mem.Config{Budget: mem.Unlimited})
	r := chargeResident(g, nil) // collects: the freed GiB becomes free heap
	defer r.Close()
	u := mem.ReadUsage()
	t.Logf("charged %s for %s kept; RSS %s, reusable %s, Go %s, Go held %s",
		mem.FormatBytes(r.Bytes()), mem.FormatBytes(liveBytes), mem.FormatBytes(u.RSS), mem.FormatBytes(u.Reusable), mem.FormatBytes(u.Go), mem.FormatBytes(u.GoHeld))
	if r.Bytes() < liveBytes {
		t.Errorf("charged %s as resident while the heap keeps %s live", mem.FormatBytes(r.Bytes()), mem.FormatBytes(liveBytes))
	}
	runtime.KeepAlive(live)
}
