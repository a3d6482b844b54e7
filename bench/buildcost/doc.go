// Command buildcost measures what tigris adds to a build (issue 19): for a
// target it times plain and instrumented builds from an empty cache and on
// warm ones, counts the compiler invocations of each (go build -x), and
// reports the largest process's peak memory. It prints a Markdown table for
// docs/performance.md.
//
//	go run ./bench/buildcost            # examples/moobench and golang.org/x/sync
//	go run ./bench/buildcost -target moobench
//
// Each step runs once; run it on an idle machine. The empty-cache steps
// compile the standard library from scratch (about a minute each on two
// cores).
package main
