//go:build !race

package live

// raceEnabled: the tests run under the race detector.
const raceEnabled = false
