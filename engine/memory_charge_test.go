package engine

import (
	"testing"

	"github.com/zkpipe/zkpipe/mem"
)

// The charge of what is resident at start leaves out the pinned memory in
// RSS, which was charged as it was pinned: a 2^27 porep key's 44 GiB of
// bases streamed from pinned host memory, counted twice, filled a 124 GiB
// budget on the H100 host (resident at start 103 GiB of an RSS of 68).
func TestResidentChargeCountsPinnedOnce(t *testing.T) {
	const gib = int64(1) << 30
	u := mem.Usage{RSS: 60 * gib, Reusable: 2 * gib, GoHeld: 10 * gib}
	if got := residentCharge(u, 44*gib, 3*gib); got != 14*gib {
		t.Errorf("RSS 60 GiB of which 44 pinned, 2 reusable: charged %s, want 14 GiB", mem.FormatBytes(got))
	}
	// the floors still hold: the held heap, the keys' estimate
	if got := residentCharge(u, 55*gib, 3*gib); got != 10*gib {
		t.Errorf("held heap 10 GiB: charged %s", mem.FormatBytes(got))
	}
	if got := residentCharge(mem.Usage{RSS: gib}, 0, 5*gib); got != 5*gib {
		t.Errorf("keys of 5 GiB: charged %s", mem.FormatBytes(got))
	}
}
