// Package export is `tigris export`: it ships a monitored program's data to
// the OpenTelemetry ecosystem, its fine records (trace files) as OTLP spans
// and its coarse statistics (the admin endpoint) as OTLP metrics, over
// OTLP/HTTP with protobuf bodies. It runs in a process beside the program:
// the program links no OpenTelemetry code and its probes cost what they cost
// without export.
//
// # Pipeline
//
// Followers (follow.go) read each stream's files in sequence through
// writer.Reader, waiting at the end of a file that still grows and moving to
// the next file of the rotation. The shipper's loop (shipper.go) gives the
// records to the assembler (assemble.go), which holds each trace until its
// root returns and rebuilds parents by Kieker's rule, or sends long traces in
// parts with parents that still match. Spans go into batches; workers encode
// them straight to protobuf (spans.go) and post them with retries (send.go).
// A poller (metrics.go) turns the admin endpoint's statistics into metrics.
//
// # Guarantees
//
// Memory is bounded by Options.MaxMemory: when it is reached (the receiver is
// down and batches pile up), reading stops; the trace files are the buffer.
// A stream that ended and was delivered keeps only its position.
// Span ids are a function of the record (ids.go), and the checkpoint
// (checkpoint.go) keeps the position and what is not yet delivered, so a
// restart neither loses nor repeats spans; a crash may repeat the spans
// delivered in its last second, with the same ids. What is not delivered in
// the end (refused by the receiver, or given up after Options.RetryFor) is
// counted in Stats.SpansFailed. Every record read is accounted for: a span
// sent, not delivered or pending, or a record held in a trace not yet ended
// (Stats.RecordsHeld), which the checkpoint carries to the next run.
//
// The mapping and its set-up are documented in docs/export.md.
package export
