// Package costcheck bounds the cost of handling one input, for the tests and
// fuzz targets of the runtime module's parsers and decoders: what a call
// allocates (bytes and objects) must stay within a fixed allowance plus a
// constant per input byte, and must grow linearly when the input does.
//
// Allocation is the measure because it is deterministic where time is not
// (the machine is shared; tests never assert timings): the parsers here
// allocate per token, node or record, so superlinear work shows up as
// superlinear allocation. Where a loop does work without allocating (the
// trace reader's recovery), the code counts its work itself and the tests
// bound that count. Race-detector builds allocate several times more, so
// there every allowance is raceFactor (8) times wider (race.go); the
// linearity check compares ratios and is the same.
//
// The root module has the same helpers in internal/costcheck: internal
// packages of one module cannot be imported by the other, and a test helper
// has no place among the packages user binaries link.
package costcheck
