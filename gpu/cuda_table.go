package gpu

import (
	"errors"
	"fmt"

	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/proofdata"
)

// MSM tables (gpu/cuda/msm.cuh, "precomputed tables"): for each resident
// base set, every base's multiples 2^(c·w)·P for the windows w of the
// set's MSM, built once at Load. An MSM over a table sorts its digits into
// one set of buckets instead of one set a window, so each bucket holds nw
// times the points (its threads' chunks come out even), the sort's keys
// lose log₂nw bits, and one window's buckets remain to reduce. The price is
// memory: nw (16 from 2^20 bases) times the bases'. A key gets its tables
// when they fit the backend's table budget (WithMSMTables); else its MSMs
// run over the bases as before.

// DefaultMSMTableBytes is the table budget of a key by default: the tables
// of a 2^22 circuit (about 24 GiB with its B₂ in G2) fit, a 2^24 one's do
// not.
const DefaultMSMTableBytes = 32 << 30

// WithMSMTables sets the device memory one key's MSM tables may take
// (bytes); 0 turns tables off.
func WithMSMTables(bytes int64) CUDAOption {
	return func(c *cudaConfig) { c.tableBytes = max(bytes, 0) }
}

// DefaultMSMTableMinBases is the fewest bases a set needs for a table: below
// it an MSM takes well under a millisecond and its table, with at least 20
// windows of small buckets, would cost more to build than it saves.
const DefaultMSMTableMinBases = 1 << 16

// WithMSMTableMinBases sets the fewest bases a base set needs for a table
// (tests use 1, to run the tables at every size).
func WithMSMTableMinBases(n int) CUDAOption {
	return func(c *cudaConfig) { c.tableMin = max(n, 1) }
}

// msmTable is one base set's table on the device.
type msmTable struct {
	ptr   uintptr
	nbase int
}

type precomputeFn func(curve int32, bases uintptr, nbase uint64, table uintptr, s uintptr, e *byte) int32

// baseSet is one of a key's base arrays: where it is on the device, how
// many points it has and which group they are in.
type baseSet struct {
	ptr uintptr
	n   int
	g2  bool
}

func (r *cudaResident) baseSets() []baseSet {
	k := r.key
	return []baseSet{{r.a, k.Size.A, false}, {r.b1, k.Size.B, false}, {r.k, k.Size.K, false},
		{r.z, k.Size.Z, false}, {r.b2, k.Size.B2, true}}
}

// tableBytes is what the tables of n bases of curve id take (0 when the
// library cannot lay such a table out).
func (c *CUDA) tableBytes(id curve.ID, n int, g2 bool) int64 {
	cv, ok := cudaCurves[id]
	if n == 0 || !ok {
		return 0
	}
	var w, nw, group int32
	if g2 {
		group = 1
	}
	var e cerr
	if e.err("msm table", c.fn.msmTableLayout(c.ctx, cv.id(), uint64(n), group, &w, &nw, e.p())) != nil {
		return 0
	}
	size := int64(id.Params().G1AffineBytes)
	if g2 {
		size = int64(id.Params().G2AffineBytes)
	}
	return int64(nw) * int64(n) * size
}

// keyTableBytes is what the tables of k take, if k gets them (0 if not):
// every base set's, when together they fit the budget.
func (c *CUDA) keyTableBytes(k *proofdata.Key) int64 {
	if c.tableBudget <= 0 {
		return 0
	}
	sets := []struct {
		n  int
		g2 bool
	}{{k.Size.A, false}, {k.Size.B, false}, {k.Size.K, false}, {k.Size.Z, false}, {k.Size.B2, true}}
	var total int64
	for _, s := range sets {
		if !c.tabled(s.n) {
			continue
		}
		b := c.tableBytes(k.Curve, s.n, s.g2)
		if b == 0 {
			return 0 // a set the library cannot table: none at all, so ResidentBytes stays exact
		}
		total += b
	}
	if total > c.tableBudget {
		return 0
	}
	return total
}

// buildTables makes r's tables, if its key gets them. On failure the tables
// made so far are r's to free (freeTables).
func (r *cudaResident) buildTables() error {
	c := r.c
	if r.streamed || c.keyTableBytes(r.key) == 0 { // no tables of bases streamed from the host
		return nil
	}
	if c.keyTableBytes(r.key) == 0 {
		return nil
	}
	r.tables = map[uintptr]msmTable{}
	for _, s := range r.baseSets() {
		if !c.tabled(s.n) {
			continue
		}
		p, err := c.alloc(int(c.tableBytes(r.key.Curve, s.n, s.g2)), c.xfer)
		if err != nil {
			return fmt.Errorf("msm table: %w", err)
		}
		r.tables[s.ptr] = msmTable{ptr: p, nbase: s.n}
		f := c.fn.precomputeG1
		if s.g2 {
			f = c.fn.precomputeG2
		}
		var e cerr
		if err := e.err("msm table", f(r.cv.id(), s.ptr, uint64(s.n), p, c.xfer, e.p())); err != nil {
			return err
		}
	}
	return nil
}

// freeTables frees r's tables; the caller syncs the stream.
func (r *cudaResident) freeTables(s uintptr) error {
	var err error
	for _, t := range r.tables {
		var e cerr
		err = errors.Join(err, e.err("free", r.c.fn.devFree(t.ptr, s, e.p())))
	}
	r.tables = nil
	return err
}

// tabled says whether a set of n bases gets a table (when its key's fit).
func (c *CUDA) tabled(n int) bool { return n > 0 && n >= c.tableMin }

// table is the table of the base set at bases, if r has one.
func (r *cudaResident) table(bases uintptr) (msmTable, bool) {
	t, ok := r.tables[bases]
	return t, ok
}
