//go:build race

package keysink

// RaceDetector says the race detector is on: it allocates on its own (and
// sync.Pool drops items at random under it), so a test that measures what
// a stream allocates skips under it; the plain run measures.
const RaceDetector = true
