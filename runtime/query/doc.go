// Package query parses and checks queries of tigris's monitoring query
// language: declarative, continuous queries over the streams a running
// program exposes, after EndoScope (Cheung and Madden, VLDB 2008). It does
// not run them (package engine plans and runs checked queries; package
// live runs them inside a program, and tigris query over a trace file).
//
// # Streams
//
// calls has one tuple per completed call of an instrumented function
// (function, duration, goroutine, trace, error, ...). The runtime streams
// cpu, heap, goroutines and gc have a value at every instant and are read
// through SAMPLE(stream, interval). CREATE STREAM names a derived stream.
//
// # Statements
//
//	SELECT function, count(*), p99(duration) FROM calls
//	    WHERE package = 'example.com/shop/repo' AND duration > 5ms
//	    GROUP BY function WINDOW 10s
//	CREATE STREAM slow AS (SELECT function, duration FROM calls WHERE duration > 1s)
//	CREATE TRIGGER hot FROM calls WHEN function = 'example.com/shop.Checkout' AND duration > 2s
//	    BEGIN FINE 'within(example.com/shop/...)' FOR 30s; SNAPSHOT END
//	EXPLAIN SELECT ...
//
// docs/queries.md is the reference: the grammar (grammar.go, pinned by a
// golden test), every column, the operators, and the limits with their
// errors.
//
// # Errors
//
// Compile returns an *Error with the line and column of the offending token
// and a Caret for terminals. Every limit (MaxText, MaxNesting, the bounds in
// streams.go) is checked here, before anything runs, and the cost of
// parsing and checking is linear in the text.
//
// # Stopping
//
// CompileStop asks a stop function now and then whether to give up (its
// client left): it returns ErrStopped within a bounded amount of work
// whatever the text, at most stopEvery tokens or operands after the stop
// function said so (stop.go; the grammar carries zero-width checkpoints
// for it, which Grammar leaves out).
package query
