// Package tracequery runs monitoring queries over recorded trace files:
// tigris query. It uses the same engine as a running
// program (runtime/query/engine), fed with the fine records of the files in
// place of live taps, so a query gives the same answer over the trace of a
// run as it gave live, for the calls the trace holds.
//
// What differs from a live query: the runtime streams (cpu, heap,
// goroutines, gc) are not in trace files, so SAMPLE is refused; a trigger's
// actions are reported ("would ...") rather than run, and every firing is a
// row; a query that aggregates without a window prints its result once, at
// the end of the trace. The files are read twice: once for the probe
// definitions the plan needs (and, when the query reads trace_id, the
// remote parents: a record may come before its trace's, joined.go), once
// for the records. A query may take at
// most Options.MaxCPU of the process's CPU time (cpu.go; tigris query's
// --max-cpu, a minute by default).
package tracequery
