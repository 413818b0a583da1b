//go:build !race

package keysink

// RaceDetector says the race detector is on (see race.go).
const RaceDetector = false
