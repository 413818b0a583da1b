// Package stream holds the two ends of a proof stream: job requests read as
// JSON Lines, and result lines written as JSON Lines, both keyed by job id so
// that a work queue spread over machines can carry them later and a job
// delivered twice is harmless.
package stream
