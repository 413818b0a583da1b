// Package mem keeps a proof stream inside its memory: budgets, admission,
// reuse and measurement.
//
//	Budgets    ParseBudget, ReadMachine, CgroupLimit: sizes or shares of the
//	           machine's memory lowered to the cgroup's limit
//	Governor   admits each job's footprint under the RSS budget, judged by the
//	           sum of reservations and by measured RSS, in arrival order;
//	           charges resident keys and pinned buffers; samples RSS and
//	           minor faults per job (Reservation.PeakRSS, MinorFaults)
//	Pool       size-classed free lists that keep large vectors across proofs
//	PinnedPool pinned host buffers allocated and touched once, at start-up,
//	           with a GPU backend's allocator, within the pinned budget
//	ReadUsage  RSS (/proc/self/statm), reusable memory (idle pools, free Go
//	           heap), minor faults (getrusage)
//
// The stages declare what they need (stages.Governor); zkpipe prove wires a
// Governor in from its flags (cmd_prove_mem.go).
package mem
