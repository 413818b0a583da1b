// Package racedetect says whether the race detector is built in: it
// allocates on its own and multiplies memory use (sync.Pool drops items at
// random under it), so a test that measures memory or allocations skips
// under it and the plain run measures.
package racedetect
