// Package moments keeps the running mean and variance of a stream of numbers
// (Welford's algorithm) and the 95 % confidence intervals built on them, the
// median of a sample, and percentile-bootstrap intervals of a median, of a
// ratio of two medians ([MedianCI95], [RatioOfMediansCI95]) and of the median
// ratio of paired values ([PairedRatioCI95]). It is the one
// implementation of running statistics in the root module: tigris analyze
// aggregates trace records with it, and the benchmarks (package bench and the
// PetClinic evaluation) summarize their samples with it.
//
// The runtime module keeps Welford steps of its own (the monitor's coarse
// statistics and the dsl's grouping): it must not import the root module, which
// user binaries never link, and the monitor's step runs on the probes' hot path
// over per-P stripes with integer counts, where a call through this package's
// type would cost more than the arithmetic.
//
// A [Moments] is a value: the zero value is empty and ready to use, copies are
// independent, and it is not safe for concurrent use.
package moments
