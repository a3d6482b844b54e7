package export

import "encoding/binary"

// Trace and span ids are functions of the record, not random: a shipper that
// resumes from its checkpoint, or re-sends a batch whose reply it did not see,
// sends the same ids again, so the backend holds one span, not two (and a
// duplicate is at least recognisable). The trace id is the stream id and the
// trace number mixed; the span id mixes in the execution order index, which is
// unique within a trace.

// mix64 is SplitMix64's finaliser: a bijection on 64 bits that scatters
// consecutive inputs, so ids of consecutive traces look random (W3C trace ids
// are expected to be).
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// traceID is the 128-bit trace id of trace in stream, never zero. The low
// half is a bijection of trace for a given stream, so two traces of a stream
// never share an id; the high half mixes both, so that no part of the id is
// the same for every trace (W3C trace ids look random throughout).
func traceID(stream, trace uint64) (hi, lo uint64) {
	lo = mix64(trace ^ mix64(stream))
	hi = mix64(lo ^ stream ^ 0x7469677269732d74) // "tigris-t"
	if hi == 0 && lo == 0 {
		lo = 1
	}
	return hi, lo
}

// spanID is the 64-bit span id of the call with order index eoi, never zero;
// within a trace it is a bijection of eoi.
func spanID(stream, trace uint64, eoi uint32) uint64 {
	_, lo := traceID(stream, trace)
	return spanIDOf(lo, eoi)
}

// spanIDOf is spanID given the low half of the trace id.
func spanIDOf(lo uint64, eoi uint32) uint64 {
	id := mix64(lo + uint64(eoi) + 1)
	if id == 0 {
		id = 1
	}
	return id
}

// TraceID is the OTLP trace id export gives the records of trace in stream
// (writer.Header.Stream, writer.Record.Trace).
func TraceID(stream, trace uint64) [16]byte {
	hi, lo := traceID(stream, trace)
	var id [16]byte
	binary.BigEndian.PutUint64(id[:], hi)
	binary.BigEndian.PutUint64(id[8:], lo)
	return id
}

// SpanID is the OTLP span id export gives the call with order index eoi
// (writer.Record.EOI) of trace in stream.
func SpanID(stream, trace uint64, eoi uint32) [8]byte {
	var id [8]byte
	binary.BigEndian.PutUint64(id[:], spanID(stream, trace, eoi))
	return id
}
