package stages

// The stages, in order. Names are used for flags (--NAME-workers), result
// lines and trace spans.
const (
	Parse      = "parse"
	Synthesize = "synthesize"
	Transfer   = "transfer" // pin/transfer
	MSMH       = "msm-h"    // NTT+MSM_H
	BatchAdd   = "batch-add"
	TailMSM    = "tail-msm"
	BG2        = "b-g2"
	Assemble   = "assemble"
)

// Names lists the stages in order.
var Names = []string{Parse, Synthesize, Transfer, MSMH, BatchAdd, TailMSM, BG2, Assemble}

// Shape is one stage's concurrency: workers, and the depth of its input queue.
type Shape struct{ Workers, Queue int }
