// Package costcheck bounds the cost of handling one input, for the tests and
// fuzz targets of the root module's parsers, decoders and converters (config,
// traceconv, export): what a call allocates (bytes and objects) must stay
// within a fixed allowance plus a constant per input byte, and must grow
// linearly when the input does.
//
// Allocation is the measure because it is deterministic where time is not
// (the machine is shared; tests never assert timings): the code here
// allocates per node, record or field, so superlinear work shows up as
// superlinear allocation. Race-detector builds allocate several times more,
// so there every allowance is raceFactor (8) times wider (race.go); the
// linearity check compares ratios and is the same.
//
// It is a copy of the runtime module's runtime/internal/costcheck: internal
// packages of one module cannot be imported by the other, and a test helper
// has no place among the packages user binaries link.
package costcheck
