// Package human formats quantities for people reading a terminal: durations
// given in nanoseconds, byte counts and elapsed times. The CLI, the PetClinic
// evaluation and demo, and the benchmarks' progress lines share it, so one
// quantity reads the same everywhere.
package human
