// Command buildcost measures what tigris adds to a build: for a target it
// times plain and instrumented builds from an empty cache and on warm ones,
// counts the compiler invocations of each, and reports the largest process's
// peak memory. It prints a Markdown table for docs/performance.md.
//
// Compiles are counted three ways: the compiles the go command runs (go build
// -x), those of them that go through the instrumenter (they carry the
// driver's -tigris digest; each runs the compiler twice when it keeps a
// probe, first with -m on a reduced copy of the package to learn what the
// compiler inlines), and the runtime packages tigris's nested go list
// compiles, which go build -x does not show: the packages instrumented code
// imports (and their imports) that the cache lacked before the step and
// holds after it, less those the go command compiled itself.
//
//	go run ./bench/buildcost            # examples/moobench and golang.org/x/sync
//	go run ./bench/buildcost -target moobench
//	go run ./bench/buildcost -warm-only   # counts on a warm cache only (no empty-cache steps)
//	go run ./bench/buildcost -rounds 5    # the ratios: medians of paired rounds
//	go run ./bench/buildcost -target nats -rounds 3       # a large server from the module proxy
//	go run ./bench/buildcost -target errcheck -rounds 3   # a small command, one package selected
//
// Each step of the table runs once; run it on an idle machine. The
// empty-cache steps compile the standard library from scratch (seconds to a
// minute each on two cores). -rounds N measures only the builds behind the
// ratios, tigris and plain in turn, and prints medians and the median of the
// per-pair ratios: one slow or lucky run moves neither. Every cache gets its
// own user cache directory (tigris's shared resolution of the runtime would
// otherwise point into an earlier step's cache and hide the runtime's
// compile from an "empty" one).
//
// # Programs from the module proxy
//
// -target nats and -target errcheck measure what a new user pays on a real
// program: github.com/nats-io/nats-server/v2@v2.15.2, a message broker (one
// package of thousands of functions, about 250 packages in its build), with
// every function of its module selected, and
// github.com/kisielk/errcheck@v1.9.0, a command of about 150 packages (most
// of them the standard library's) with only its main package selected. The
// go command downloads the pinned version into a temporary module; the
// module is copied out of the module cache (made writable), its toolchain
// line is dropped so that the machine's go command builds it
// (GOTOOLCHAIN=local; its go line is kept, and checked to be kept), and
// `tigris init` runs in the copy: the config it writes, narrowed to the one
// package for errcheck. Neither runs by default (they need the module
// proxy, or a module cache holding them).
//
// Each round builds the program plain (go build) and through tigris (tigris
// go build, the config init wrote), in turn, which first alternating, each
// from an empty GOCACHE and an empty user cache directory (tigris's cache);
// the module cache stays warm. A round records of each build the wall time,
// the CPU time of all its processes (user + system), the peak RSS of its
// largest compiler process (VmHWM of every process whose executable is the
// compiler and whose environment holds the build's GOCACHE, sampled every
// 20 ms from /proc: a compiler's growth in its last 20 ms is missed; Linux
// only) and the binary's size, then starts each binary -starts times (20 by
// default), alternating: for nats the time from exec until its port accepts
// a TCP connection, for errcheck until `errcheck -h` exits; the round keeps
// the median. The table gives the median over the rounds of each, and the
// median of the rounds' ratios (tigris over plain). The machine's 1-minute
// load average, sampled every 30 s, is logged at the end: on a shared
// machine the CPU ratio holds better than the wall one.
package main
