package engine

import (
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/stages"
)

// poolLimit is how many buffers of one size each pool keeps. A job in
// flight holds up to four of a size (W, a, b, c; or three queries), and a
// stream keeps several jobs in flight: mem.Pool's default of 4 would drop,
// and the next job fault in again, all but one job's worth. A pool keeps no
// more than the most that were in use at once, and the governor counts what
// it keeps idle as reusable.
const poolLimit = 64

// pools lend a job's large buffers (stages.Buffers): one set for the
// solver's vectors and its flags, one for the classified queries. Scalars
// are curve-neutral, so one pool serves circuits of every curve.
type pools struct {
	scalars mem.Pool[proofdata.Scalar]
	flags   mem.Pool[bool]
	bitmaps mem.Pool[uint64]
	indexes mem.Pool[uint32]
}

var _ stages.Buffers = (*pools)(nil)

func (p *pools) setLimit(n int) {
	p.scalars.Limit, p.flags.Limit, p.bitmaps.Limit, p.indexes.Limit = n, n, n, n
}

func (p *pools) Scalars(n int) []proofdata.Scalar { return p.scalars.Get(n) }
func (p *pools) PutScalars(b []proofdata.Scalar)  { p.scalars.Put(b) }
func (p *pools) Flags(n int) []bool               { return p.flags.Get(n) }
func (p *pools) PutFlags(b []bool)                { p.flags.Put(b) }
func (p *pools) Bitmap(words int) []uint64        { return p.bitmaps.Get(words) }
func (p *pools) PutBitmap(b []uint64)             { p.bitmaps.Put(b) }
func (p *pools) Indexes(n int) []uint32           { return p.indexes.Get(n) }
func (p *pools) PutIndexes(b []uint32)            { p.indexes.Put(b) }
