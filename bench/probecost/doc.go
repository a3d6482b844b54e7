// Package probecost counts what a probed call costs, under valgrind's
// callgrind with its cache and branch simulators: instructions, first- and
// last-level cache misses and mispredicted branches per probed call, split
// by where they are spent (the instrumented function's own code, monitor.Start,
// the exit, the statistics, the clock, the random draw, the fine path, stack
// growth), for the same program built plain and through tigris and run
// off, under phase 1, coarse with every call timed and fine.
//
// Counts do not depend on the machine's load, which wall-clock benchmarks on
// a shared machine do; they are what docs/performance.md's section "Why a
// probed call in real code costs more than MooBench's" is made of.
//
// [Callgrind] runs a program with --dump-every-bb and reads the last whole
// dump, so a run is measured in its steady state (phase 1 has looked, the
// statistics are allocated), not while it starts. [ReadProfile] reads
// callgrind's output format; [Analyze] splits a dump into parts per
// operation (a call of the benchmark's function); [Table] writes each run's
// cost beyond the plain build's per probed call.
//
// The harness is TestProbeCost: MooBench's recursive method and fastjson's
// own Parse benchmarks (a small document that stays in the first-level
// cache and the 617 KB twitter document that does not), and
// TestProbeCostPetclinic: requests of the example service in the
// evaluation's dependency scope. Both build everything they run and take
// minutes of one CPU, so they run only with TIGRIS_PROBECOST=1:
//
//	TIGRIS_PROBECOST=1 go test ./bench/probecost -run TestProbeCost -v -timeout 60m
package probecost
