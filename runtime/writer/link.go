package writer

import "encoding/binary"

// Link says where a trace came from when it began in a goroutine that a go
// statement of another trace started (format 1.2, docs/trace-format.md,
// "Link"). A trace is a call tree within one goroutine; the link ties the
// child goroutine's first trace to the place in the parent trace where the go
// statement ran, so that tools can show the child as a linked trace or as a
// child span.
//
// EOI and ESS are the parent trace's position at the go statement, taken the
// way a call takes its own at entry: EOI is the order index the parent's next
// call would have had (every call with a smaller EOI had started), ESS the
// depth (the function whose go statement it was runs at ESS-1). Trace.LinkedFrom
// finds the call that ran the go statement.
type Link struct {
	Trace     uint64 // the child trace
	GID       uint64 // the goroutine it runs on
	Parent    uint64 // the trace whose go statement started the goroutine
	ParentGID uint64 // the goroutine that ran the go statement
	EOI       uint32 // Parent's next order index at the go statement
	ESS       uint32 // Parent's depth at the go statement
	Probe     uint32 // probe of the function whose go statement it was; 0 if unknown
	Time      int64  // when the go statement ran (monotonic clock, like Record.TIn)
}

// FlagLink marks a Record that carries a Link (Link.Record) rather than a
// call. A link travels through a Sink like a record, so writers queue it
// without a path of its own; the encoder writes it as a link item, and no
// reader ever returns a Record with FlagLink set. Sinks that keep records
// (tests, custom sinks) should skip records with FlagLink or turn them back
// with Record.Link.
const FlagLink Flags = 1 << 7

// Record packs the link into a Record with FlagLink for Sink.Write: Probe,
// EOI, ESS, Trace and GID keep their meaning where a link has one (the parent
// probe, the parent's position, the child trace and goroutine); Size holds
// Parent, TIn ParentGID and TOut Time, so a lost link is accounted for at the
// time of its go statement like any record.
func (l *Link) Record() Record {
	return Record{
		Probe: l.Probe, Flags: FlagLink, EOI: l.EOI, ESS: l.ESS,
		Trace: l.Trace, GID: l.GID, TIn: int64(l.ParentGID), TOut: l.Time, Size: int64(l.Parent),
	}
}

// Link unpacks a Record made by Link.Record; ok is false for any other record.
func (r *Record) Link() (l Link, ok bool) {
	if r.Flags&FlagLink == 0 {
		return Link{}, false
	}
	return Link{
		Trace: r.Trace, GID: r.GID, Parent: uint64(r.Size), ParentGID: uint64(r.TIn),
		EOI: r.EOI, ESS: r.ESS, Probe: r.Probe, Time: r.TOut,
	}, true
}

// link appends a link item (kind 0x04).
func (e *encoder) link(l *Link) {
	b := e.tmp[:0]
	b = binary.AppendUvarint(b, l.Trace)
	b = binary.AppendUvarint(b, l.GID)
	b = binary.AppendUvarint(b, l.Parent)
	b = binary.AppendUvarint(b, l.ParentGID)
	b = binary.AppendUvarint(b, uint64(l.EOI))
	b = binary.AppendUvarint(b, uint64(l.ESS))
	b = binary.AppendUvarint(b, uint64(l.Probe))
	b = binary.AppendVarint(b, l.Time)
	e.item(wireLink, b)
	e.tmp = b
}

func decodeLink(c *cursor, l *Link) {
	l.Trace = c.uvarint()
	l.GID = c.uvarint()
	l.Parent = c.uvarint()
	l.ParentGID = c.uvarint()
	l.EOI = c.uint32v()
	l.ESS = c.uint32v()
	l.Probe = c.uint32v()
	l.Time = c.varint()
}

// LinkedFrom returns the call of t, the parent trace of link l, that ran the
// go statement: the innermost call on l's parent goroutine that had started
// before it (EOI below l.EOI, ESS below l.ESS) and had not returned yet. It is
// the rule that makes call trees (the nearest preceding record with a smaller
// ESS), applied to the go statement as if it were a call. nil when no recorded
// call of t qualifies (the trace's calls there were not recorded).
func (t *Trace) LinkedFrom(l *Link) *Node {
	var best *Node
	for i := range t.Nodes {
		n := &t.Nodes[i]
		r := &n.Record
		if r.EOI >= l.EOI {
			break // Nodes are in EOI order
		}
		if r.ESS >= l.ESS || r.GID != l.ParentGID || r.TIn > l.Time || r.TOut < l.Time {
			continue
		}
		if best == nil || r.ESS >= best.Record.ESS {
			best = n
		}
	}
	return best
}
