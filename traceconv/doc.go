// Package traceconv converts tigris trace files (the record streams of package
// writer) into formats other tools read and summarizes them per function: what
// `tigris read`, `tigris stats` and `tigris convert` run. docs/trace-tools.md
// describes the commands and every mapping in detail.
//
// # Formats
//
// Formats lists the output formats as values (OpenXTrace, Chrome, Pprof,
// Kieker); each has a Convert function that reads a *writer.Reader to its end
// and writes one output stream:
//
//   - OpenXTrace: OPEN.xtrace-shaped JSON, one Trace per call tree, its
//     MethodInvocations carrying responseTime and exclusiveTime (ns).
//   - Chrome: Chrome trace-event JSON; one complete event per call on
//     pid = process, tid = goroutine, for Perfetto and chrome://tracing.
//   - Pprof: a pprof profile with one sample per call path and the sample types
//     calls, inclusive and exclusive (ns); exclusive is the default, so `go tool
//     pprof -top` ranks functions by their own time and flame graphs add up.
//   - Kieker: Kieker ASCII OperationExecutionRecords ($1;…;eoi;ess), the .dat
//     file of a Kieker monitoring log directory (with KiekerMap as kieker.map).
//
// WriteLines writes the items one per line (text or JSON lines), Summarize
// computes per-function statistics (calls, errors, panics; total, mean, p50, p95
// and max of inclusive and exclusive time) and WriteStatsTable/WriteStatsJSON
// print them.
//
// # Streaming and memory
//
// Chrome, Kieker and WriteLines convert record by record in constant memory
// (Chrome also remembers the goroutines it has named). OpenXTrace, Pprof and
// Summarize need call trees: records are grouped by trace and a trace is built
// once its root call's record has been read and Options.Lag more records have
// followed (records of one trace can arrive slightly out of order from the
// asynchronous writer's per-P queues). Memory then follows the traces in flight,
// bounded by Options.MaxPending; a pprof profile grows with the distinct call
// paths (each at most Options.MaxFrames frames, so a deep recursion costs memory
// linear in its depth) and a summary with the functions, never with the records.
//
// # Request traces
//
// A trace that joined a request's trace of another system has a remote
// parent (writer.Remote, format 1.4): its root's call tree carries it
// (Trace.Remote, FuncStats.MaxTraceID) when it comes within Options.Lag
// records of the root. It does not always come before the trace's records
// (the writer's per-P queues), so Options.Joined, which keeps only the
// traces of one request's trace id, is found by FindJoined in a read of its
// own before the filtering one.
//
// # Damage and loss
//
// Nothing in the input is an error: records the monitored program dropped (loss
// items), bytes the reader skipped (gaps, a torn tail), records of undefined
// probes and call trees missing their root are counted in the Report, and
// Report.Warnings words them. A read error (I/O, an unsupported format version)
// ends reading early and is kept in Report.ReadErr; what was read before it is
// converted. Convert and the other functions return an error only when writing
// the output fails. Report.Empty tells a caller that nothing usable was read.
//
// Calls that had not returned when the program's writer closed (records with
// writer.FlagUnfinished, format 1.5) are read, not lost: Report.Unfinished
// counts them apart from Report.Lost. Their time is how long they had run
// by then. Summarize counts them in FuncStats.Unfinished and leaves them out
// of Calls and of every duration; `tigris read`, Chrome and OPEN.xtrace mark
// them; Pprof and Kieker take their time up to the close as their duration.
//
// # Concurrency
//
// The functions of this package may run concurrently on different Readers; a
// Reader, a Format's output writer and Options.Progress are used only by the
// goroutine that called the function.
package traceconv
