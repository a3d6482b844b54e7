//go:build !race

package costcheck

// raceFactor is 1 outside race-detector builds (race.go).
const raceFactor = 1
