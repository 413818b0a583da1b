//go:build race

package mem_test

// The race detector multiplies memory use several times over: tests that
// compare memory with an estimate skip under it.
const raceEnabled = true
