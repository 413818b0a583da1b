package stream

import (
	"encoding/json"
	"io"
	"os"
	"sync"
)

// Result is one result line: a job's outcome and where its time went.
type Result struct {
	ID           string   `json:"id"`
	Circuit      string   `json:"circuit,omitempty"`
	Device       string   `json:"device,omitempty"`        // the GPU of its device stages ("cuda:1"); none on the CPU
	Proof        string   `json:"proof,omitempty"`         // path of the proof file
	Public       string   `json:"public,omitempty"`        // path of the public witness / public.json
	PublicInputs []string `json:"public_inputs,omitempty"` // decimal, in order
	// Calldata is the path of the proof's call of its Solidity verifier
	// (0x-prefixed hex), written when asked for (prove --calldata).
	Calldata    string `json:"calldata,omitempty"`
	Error       string `json:"error,omitempty"`
	FailedStage string `json:"failed_stage,omitempty"`
	// Retryable marks a failure of the prover's host rather than of the job
	// (its disk, its GPU): proven elsewhere, the job may well succeed.
	Retryable bool `json:"retryable,omitempty"`
	// Resumed marks a job answered from the outputs an earlier run left
	// (prove --skip-done): no stage ran, so Stages is empty.
	Resumed bool `json:"resumed,omitempty"`
	// VerifiedWith names the verifying key a proof read back from a store
	// was checked against before it was reported proved (zkpipe results):
	// a key the user gave (--circuit, --vkey) or the circuit store's.
	VerifiedWith string `json:"verified_with,omitempty"`
	// Statement says whether zkpipe results --jobs compared the verified
	// proof's public inputs with those the job was submitted with: "bound",
	// or "not bound (generate job)" / "not bound (input job)", whose public
	// inputs are known only once proven. Empty for a job not in --jobs.
	Statement string `json:"statement,omitempty"`

	// Shape is the workers/queue of each stage in force when the job
	// finished ("parse 2/2* synthesize 7/1* …", * where zkpipe chose), on
	// the first line of a run and on the first after the shape changes;
	// ShapeChanges says what changed since the line before and why.
	Shape        string   `json:"shape,omitempty"`
	ShapeChanges []string `json:"shape_changes,omitempty"`

	// Partitions are a request of partitions' proofs, one entry per
	// partition in the request's order; the line is ok (no Error) only
	// when every one proved, and Error names the indexes that failed.
	// Stages is then empty: each partition's entry has its own.
	Partitions []PartitionResult `json:"partitions,omitempty"`

	Stages  []StageTime `json:"stages"`
	TotalMS float64     `json:"total_ms"` // from entering parse to leaving the last stage reached (a request: its first partition's entry to its last's leaving)

	// Memory (package mem): the job's peak process RSS while it ran, what the
	// governor reserved for it, and minor page faults attributed to it.
	RSSPeakBytes  int64 `json:"rss_peak_bytes,omitempty"`
	ReservedBytes int64 `json:"reserved_bytes,omitempty"`
	MinorFaults   int64 `json:"minor_faults,omitempty"`
	// DeviceReservedBytes is what the governor's device budget held for
	// the job (Backend.JobBytes; a request: the most of its partitions').
	DeviceReservedBytes int64 `json:"device_reserved_bytes,omitempty"`
}

// PartitionResult is one partition of a request's result line: the
// fields of a single job's line that are its own.
type PartitionResult struct {
	Index        int         `json:"index"`
	ID           string      `json:"id"` // the partition's job id, "REQUEST/INDEX" (PartitionID)
	Proof        string      `json:"proof,omitempty"`
	Public       string      `json:"public,omitempty"`
	PublicInputs []string    `json:"public_inputs,omitempty"`
	Calldata     string      `json:"calldata,omitempty"`
	Error        string      `json:"error,omitempty"`
	FailedStage  string      `json:"failed_stage,omitempty"`
	Device       string      `json:"device,omitempty"`
	Stages       []StageTime `json:"stages,omitempty"`
	TotalMS      float64     `json:"total_ms,omitempty"`
	// the partition's own memory, as a single job's line has it: the first
	// partition of a stream faults its pooled buffers in, the later ones
	// reuse them
	ReservedBytes       int64 `json:"reserved_bytes,omitempty"`
	MinorFaults         int64 `json:"minor_faults,omitempty"`
	DeviceReservedBytes int64 `json:"device_reserved_bytes,omitempty"`
}

// StageTime is one stage of one job. Times ending in _at_ms are milliseconds
// since the stream started, so the results of one run share one time axis.
type StageTime struct {
	Stage   string  `json:"stage"`
	Worker  int     `json:"worker"`
	QueueMS float64 `json:"queue_ms"` // waiting for a worker (and for admission)
	RunMS   float64 `json:"run_ms"`
	// CPUMS is the process's CPU time while the stage ran, shared evenly
	// with the stage runs overlapping it (exact when none does).
	CPUMS       float64 `json:"cpu_ms"`
	QueuedAtMS  float64 `json:"queued_at_ms"`
	StartedAtMS float64 `json:"started_at_ms"`
	EndedAtMS   float64 `json:"ended_at_ms"`
}

// Writer writes result lines; safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	enc *json.Encoder
}

// NewWriter writes one JSON value per line to w.
func NewWriter(w io.Writer) *Writer { return &Writer{enc: json.NewEncoder(w)} }

// Write writes r as one line.
func (w *Writer) Write(r Result) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.enc.Encode(r)
}

// ReadResults reads a results file back (for zkpipe timeline and tests).
func ReadResults(r io.Reader) ([]Result, error) {
	var out []Result
	dec := json.NewDecoder(r)
	for dec.More() {
		var x Result
		if err := dec.Decode(&x); err != nil {
			return out, err
		}
		out = append(out, x)
	}
	return out, nil
}

// ReadResultsFile reads the results file at path.
func ReadResultsFile(path string) ([]Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadResults(f)
}
