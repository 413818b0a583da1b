package fleet

import (
	"strconv"
	"time"
)

// Names of the NATS resources zkpipe uses (see the package comment).
const (
	JobsStream    = "ZKPIPE_JOBS"
	ResultsStream = "ZKPIPE_RESULTS"

	jobsSubject    = "zkpipe.jobs."    // + priority
	resultsSubject = "zkpipe.results." // + job id
	// wakeSubject is a plain NATS subject, outside the streams: submit
	// sends an empty message on it after each job, to wake idle workers
	// at once (rather than at their next poll) without sending every
	// worker every job.
	wakeSubject = "zkpipe.wake"

	CircuitBucket = "zkpipe-circuits"
	WitnessBucket = "zkpipe-witness"
	ProofBucket   = "zkpipe-proofs"
	// HandBackBucket is a key-value bucket: for each job message (by its
	// stream sequence) that a worker handed back to the queue, how often
	// and how often for a fault of its own (see handBacks).
	HandBackBucket = "zkpipe-handbacks"
	// RequestBucket is a key-value bucket: for each request of partitions
	// being proven (by its id and submission), its partitions' answers so
	// far (see requests.go).
	RequestBucket = "zkpipe-requests"

	// A partition of a request is a job message of its own, its id
	// "REQUEST/INDEX" (stream.PartitionID), with these headers: the
	// request's id, the partition's index, the request's partition count
	// and its submission's tag (requestTag).
	hdrRequest    = "Zkpipe-Request"
	hdrPartition  = "Zkpipe-Partition"
	hdrPartitions = "Zkpipe-Partitions"
	hdrTag        = "Zkpipe-Request-Tag"

	// witnessRef marks a job's witness (or wtns) as an object in
	// WitnessBucket rather than a path on the worker.
	witnessRef = "nats-object:"
)

// Priorities, highest first: a worker takes every waiting job of one before
// any of the next.
var Priorities = []string{"high", "normal", "low"}

// Defaults of Config.
const (
	DefaultAckWait    = 30 * time.Second
	DefaultDuplicates = time.Hour
)

func jobSubject(priority string) string { return jobsSubject + priority }
func resultSubject(id string) string    { return resultsSubject + id }

// handBackKey is the key of a job message in HandBackBucket.
func handBackKey(seq uint64) string { return strconv.FormatUint(seq, 10) }

// outputsObject is the object holding job id's outputs; its presence marks
// the job as done.
func outputsObject(id string) string { return id }
