package stream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
)

// A request of partitions (cuzk's PoRep: ten partitions of one circuit) is
// k proofs of one circuit, each of its own witness, proven through the same
// stages as single jobs and answered by one result line holding k proofs.
// Partition i of request "porep-1" is the job "porep-1/i": a '/' no valid
// id holds (ValidID), so no single job's id, and no file a single job
// writes (ID.proof, in the output directory itself), can be a partition's;
// its files go to the subdirectory porep-1/ (porep-1/0.proof, …).

// Partition is one entry of a request's partitions: a single job's witness
// fields, exactly one of them.
type Partition struct {
	Witness  string          `json:"witness,omitempty"`
	Generate *Generate       `json:"generate,omitempty"`
	Wtns     string          `json:"wtns,omitempty"`
	Input    json.RawMessage `json:"input,omitempty"`
}

// DefaultMaxPartitions is the most partitions a request may have unless
// the engine is told otherwise (engine.Options.MaxPartitions): cuzk's
// PoRep has 10, and each partition is a job's whole footprint.
const DefaultMaxPartitions = 64

// PartitionID is the job id of partition i of request id: "id/i".
func PartitionID(id string, i int) string { return id + "/" + strconv.Itoa(i) }

// IsPartitionName reports whether dir/base is a partition's output name as
// PartitionID and the output suffixes make it: a valid request id, then a
// decimal index and a suffix (one of suffixes).
func IsPartitionName(dir, base string, suffixes []string) bool {
	if !ValidID(dir) {
		return false
	}
	for _, s := range suffixes {
		if n, ok := strings.CutSuffix(base, s); ok && isIndex(n) {
			return true
		}
	}
	return false
}

// isIndex: a decimal index as strconv.Itoa writes it (no sign, no leading 0).
func isIndex(s string) bool {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// IsPartitioned reports whether r is a request of partitions.
func (r Request) IsPartitioned() bool { return r.Partitions != nil }

// Partition is the single job of r's partition i: its id (PartitionID),
// r's circuit and the entry's witness.
func (r Request) Partition(i int) Request {
	p := r.Partitions[i]
	return Request{ID: PartitionID(r.ID, i), Circuit: r.Circuit,
		Witness: p.Witness, Generate: p.Generate, Wtns: p.Wtns, Input: p.Input}
}

// CheckPartitions refuses a request of partitions that cannot be proven as
// one: none, more than max, a witness field of its own beside them, an
// entry with no witness or more than one, or one witness (a file, a seed,
// the same inputs) listed twice, which would prove the same statement
// twice. Errors name the entry's index; the caller names the job.
func (r Request) CheckPartitions(max int) error {
	switch {
	case len(r.Partitions) == 0:
		return fmt.Errorf("partitions: none given (a request of partitions has 1 to %d)", max)
	case len(r.Partitions) > max:
		return fmt.Errorf("partitions: %d of them, more than the %d a request may have (MaxPartitions)", len(r.Partitions), max)
	case r.Witness != "" || r.Generate != nil || r.Wtns != "" || r.Input != nil:
		return fmt.Errorf("partitions: a request of partitions takes its witnesses in its partitions, not beside them (it has a top-level %s)", topLevelWitness(r))
	}
	seen := map[string]int{} // a witness's key → the first partition that has it
	for i, p := range r.Partitions {
		var key, what string
		n := 0
		if p.Witness != "" {
			n++
			key, what = "witness "+filepath.Clean(p.Witness), "witness "+p.Witness
		}
		if p.Generate != nil {
			n++
			key = "seed " + strconv.FormatInt(p.Generate.Seed, 10)
			what = "generate seed " + strconv.FormatInt(p.Generate.Seed, 10)
		}
		if p.Wtns != "" {
			n++
			key, what = "wtns "+filepath.Clean(p.Wtns), "wtns "+p.Wtns
		}
		if p.Input != nil {
			n++
			var c bytes.Buffer
			if err := json.Compact(&c, p.Input); err != nil {
				return fmt.Errorf("partition %d: input: %v", i, err)
			}
			key, what = "input "+c.String(), "its input"
		}
		switch {
		case n == 0:
			return fmt.Errorf("partition %d: no witness: give one of witness, generate, wtns or input", i)
		case n > 1:
			return fmt.Errorf("partition %d: %d witnesses: give one of witness, generate, wtns or input", i, n)
		}
		if first, dup := seen[key]; dup {
			return fmt.Errorf("partition %d: %s is also partition %d's: each partition proves a witness of its own", i, what, first)
		}
		seen[key] = i
	}
	return nil
}

func topLevelWitness(r Request) string {
	switch {
	case r.Witness != "":
		return "witness"
	case r.Generate != nil:
		return "generate"
	case r.Wtns != "":
		return "wtns"
	}
	return "input"
}

// RequestLine is the one result line of request id from its partitions'
// lines, in order: ok only when each proved; otherwise its error names the
// partitions that failed and the first one's error. zkpipe prove and the
// fleet answer a request with it alike.
func RequestLine(id, circuit string, parts []Result) Result {
	out := Result{ID: id, Circuit: circuit, Stages: []StageTime{},
		Partitions: make([]PartitionResult, len(parts))}
	var failed []string
	firstErr := ""
	retryable := true
	device := ""
	start, end := math.Inf(1), math.Inf(-1)
	for i, l := range parts {
		out.Partitions[i] = PartitionResult{Index: i, ID: l.ID, Proof: l.Proof, Public: l.Public,
			PublicInputs: l.PublicInputs, Calldata: l.Calldata, Error: l.Error, FailedStage: l.FailedStage,
			Device: l.Device, Stages: l.Stages, TotalMS: l.TotalMS,
			ReservedBytes: l.ReservedBytes, MinorFaults: l.MinorFaults, DeviceReservedBytes: l.DeviceReservedBytes}
		if out.Circuit == "" {
			out.Circuit = l.Circuit
		}
		if l.Error != "" {
			failed = append(failed, strconv.Itoa(i))
			if firstErr == "" {
				firstErr = l.Error
			}
			retryable = retryable && l.Retryable
		}
		if i == 0 || l.Device == device {
			device = l.Device
		} else {
			device = ""
		}
		for _, s := range l.Stages {
			start, end = math.Min(start, s.QueuedAtMS), math.Max(end, s.EndedAtMS)
		}
		out.ReservedBytes += l.ReservedBytes
		out.MinorFaults += l.MinorFaults
		out.RSSPeakBytes = max(out.RSSPeakBytes, l.RSSPeakBytes)
		out.DeviceReservedBytes = max(out.DeviceReservedBytes, l.DeviceReservedBytes)
	}
	out.Device = device
	if end >= start {
		out.TotalMS = end - start
	}
	if len(failed) > 0 {
		what := "partition " + failed[0]
		if len(failed) > 1 {
			what = "partitions " + strings.Join(failed, ", ")
		}
		written := ""
		if len(failed) < len(parts) {
			written = " (the others' proofs are written)"
		}
		out.Error = fmt.Sprintf("job %s: %s of %d failed%s; first: %s", id, what, len(parts), written, firstErr)
		out.Retryable = retryable
	}
	return out
}
