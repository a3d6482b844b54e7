// Package tracegen writes synthetic trace files of a given size for
// measurements: tigris dash's page on a trace of a million records
// (package dash's benchmarks, integration/dash); and small ones of given
// records for tests (WriteJoined).
package tracegen
