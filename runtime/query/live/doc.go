// Package live runs monitoring queries inside a running program: the
// program side of tigris ctl query, served by the admin endpoint.
//
// A Registry holds the program's queries and named streams. Posting a query
// compiles it (package query), plans it against the program's probes
// (package engine) and starts it: the plan's probes are acquired through the
// monitor's query layer (monitor.Acquire: mode floors shared by reference
// count, taps filtered at the probes' exits), runtime streams get samplers,
// and a goroutine per query drains its taps every Tick, feeds the engine and
// keeps its rows in a ring for readers (WriteStream). Cancelling a query, or
// its LIMIT, releases everything it acquired: every probe is back in the
// mode the rules and the analyzer give it.
//
// Triggers run their actions here: FINE raises the matched probes to fine
// for a while (the same floors), SAMPLE reads a runtime stream for a while,
// SNAPSHOT copies the recent trace to a file of its own.
//
// A query no probe can feed is refused when posted (engine.Plan.Nothing).
// EXPLAIN's estimate takes the probes' rates over the last 10 to 20 s
// (recent.go). What a running query leaves out (shed, lost) is said among
// its rows as it starts and per window (dropped.go); compiling a posted
// text stops when its client leaves (Registry.Compile).
//
// Nothing here runs on a probe's path but the tap (in the monitor): a full
// queue drops calls and counts them, and a slow reader never slows the
// program.
package live
