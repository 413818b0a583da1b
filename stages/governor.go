package stages

import (
	"context"

	"github.com/zkpipe/zkpipe/mem"
)

// Governor admits jobs under a memory budget (mem.Governor). The synthesize
// stage asks it before a job's vectors exist; its wait pushes back on parse.
type Governor interface {
	// Admit blocks until bytes fit the budget and returns the hold on them. It
	// fails at once, naming both sizes, when bytes can never fit.
	Admit(ctx context.Context, job string, bytes int64) (*mem.Reservation, error)
}

// Footprint estimates the bytes a job of c holds at its peak, from admission
// to the end of NTT+MSM_H: the wire vector, a, b, c and their padded copies,
// the classified queries and the gathered bases of the tail MSMs.
func (c *Circuit) Footprint() int64 {
	const fr, g1, g2 = 32, 64, 128
	n := int64(c.Key.N())
	wires := int64(c.NbWires)
	q := int64(len(c.Sel.A) + len(c.Sel.B) + len(c.Sel.K))
	return wires*fr + // W
		6*n*fr + // a, b, c and the padded copies the NTT works on
		q*(fr+4) + q/8 + // classified scalars, indexes, bitmaps
		int64(len(c.Sel.A))*g1 + int64(len(c.Sel.B))*(g1+g2) // gathered bases (worst case)
}

// Sizes the stages hand back as they finish, against Footprint.
func (c *Circuit) wireBytes() int64 { return int64(c.NbWires) * 32 }
func (c *Circuit) nttBytes() int64  { return 6 * int64(c.Key.N()) * 32 }
