package stages

import "github.com/zkpipe/zkpipe/blob"

// Output stores a job's files, each a named blob (package blob): blob.Dir
// is one, writing a directory atomically; blob.Memory keeps them in memory
// for the library's Prove and for a fleet worker, which stores them in its
// object store.
type Output = blob.Writer
