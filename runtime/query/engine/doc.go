// Package engine plans and runs checked queries (package query): acquisition,
// pushdown, windows, joins, aggregates. It knows nothing of where tuples
// come from: a running program (package live) or a
// trace file (tigris query) pushes them, and both get the same answers.
//
// # Planning: acquire only what the query needs
//
// New makes a Plan against a Catalog of probes. For each calls source it
// evaluates the WHERE condition with each probe's static columns (function,
// package, file, ...) known: probes for which it is false are not acquired
// at all. What remains of each conjunct is pushed down to the probe when
// the probe's exit can decide it (a duration bound, the error and panic
// facts), so calls that cannot pass produce nothing. A probe is acquired at
// the cheapest mode that yields what the query reads: coarse, or fine when
// it reads trace or depth. Sampled streams get a sampler at the query's
// interval. The plan's cost is estimated from the probes' coarse statistics
// (rate, mean and deviation of durations) and the costs the program
// measured; Limits refuse plans over a probe count or a CPU budget, and
// Explain says why. Planning costs time linear in the query's size, times
// the probes for the conditions on static columns (at most MaxPlanWork
// node evaluations; larger conditions are checked per call instead), and a
// derived stream read by several leaves is planned once.
//
// # Running
//
// A Runner takes tuples per leaf and a watermark (no older tuple will come):
// WHERE, window joins (FOLLOWED BY), grouping into tumbling or sliding
// windows aligned on Unix time, aggregates (percentiles exact up to 1024
// values, then within 0.5 %), HAVING and LIMIT. Output depends only on the
// tuples and the watermarks, never on wall time, and rows of a window come
// out in the order of their GROUP BY values. Memory is bounded: groups per
// window (MaxGroups) and join buffers (MaxJoinBuffer), with what is dropped
// counted in Stats. A window join's work per tuple is the pairs it makes,
// whatever its window holds (join.go), and the plan estimates those pairs
// from the sides' rates and the window (Plan.Joins).
package engine
