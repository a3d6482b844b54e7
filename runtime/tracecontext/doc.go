// Package tracecontext parses and formats the traceparent header of W3C Trace
// Context. The header is the trace position a request carries from one
// service to the next.
//
// The monitor reads it from an *http.Request's headers at the root of a
// fine-sampled trace (monitor.JoinRequest), so that tigris's spans of that
// request join the caller's trace; tools format it to show where a trace
// joined. It imports only the standard library and never allocates.
//
// # Format
//
// A traceparent is four fields of lowercase hex separated by dashes:
//
//	00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
//	version-trace id (16 bytes)-parent span id (8 bytes)-trace flags
//
// [Parse] follows the specification's rules for a receiver: version ff is
// invalid; version 00 is exactly 55 characters; a later version may append
// fields after a dash, which are ignored; a trace id or span id of zeros is
// invalid; an invalid header is ignored (ok false), never an error. Parse
// reads at most the first 56 bytes of its input, whatever its length.
package tracecontext
