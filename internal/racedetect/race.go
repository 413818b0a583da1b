//go:build race

package racedetect

// Enabled says the race detector is on.
const Enabled = true
