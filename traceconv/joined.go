package traceconv

import (
	"github.com/tigrisgo/tigris/runtime/writer"
)

// Joined is the traces of an input that joined the request trace of one W3C
// trace id (remote-parent items, format 1.4), found by FindJoined for
// Options.Joined: tigris read and tigris stats --trace-id.
//
// A trace's remote parent is handed to the writer before any of its
// records, but the asynchronous writer drains one ring per P, each on its
// own, so records of a trace whose goroutine changed P can reach the file
// before the remote parent, at a distance only the writer's scheduling
// bounds. A filter that learnt a trace's id on the way would miss those
// records, so FindJoined reads the input once before the filtering read.
// It keeps one entry per trace that joined that one id: a few (one per
// service that recorded the request), whatever the size of the input.
type Joined struct {
	// ID is the W3C trace id.
	ID     [16]byte
	traces map[joinedTrace]struct{}
}

// joinedTrace is a trace of a stream (stream.index, the process's trace id).
type joinedTrace struct {
	stream int
	trace  uint64
}

// FindJoined reads r to its end and returns the traces that joined the
// request trace id. r must read the same files, in the same order, as the
// Reader of the conversion that applies the result (traceconv.Open of the
// same paths): traces are told apart by their stream's place in the input.
// Damage is skipped as a conversion skips it; the error is a read error
// that stopped the read early.
func FindJoined(r *writer.Reader, id [16]byte) (*Joined, error) {
	j := &Joined{ID: id, traces: make(map[joinedTrace]struct{})}
	var rep Report
	sc := scanner{rep: &rep, onRemote: func(s *stream, m *writer.Remote) error {
		if m.TraceID == id {
			j.traces[joinedTrace{s.index, m.Trace}] = struct{}{}
		}
		return nil
	}}
	if err := sc.run(r); err != nil {
		return nil, err
	}
	return j, rep.ReadErr
}

// Len is the number of traces that joined the request trace.
func (j *Joined) Len() int { return len(j.traces) }

// has reports whether trace (the process's id) of stream s joined; a nil
// Joined keeps every trace.
func (j *Joined) has(s *stream, trace uint64) bool {
	if j == nil {
		return true
	}
	_, ok := j.traces[joinedTrace{s.index, trace}]
	return ok
}

// keeps reports whether WriteLines writes item it of stream s: a record, a
// remote parent or a link of a trace that joined.
func (j *Joined) keeps(s *stream, it *writer.Item) bool {
	switch it.Kind {
	case writer.KindRecord:
		return j.has(s, it.Record.Trace)
	case writer.KindRemote:
		return j.has(s, it.Remote.Trace)
	case writer.KindLink:
		return j.has(s, it.Link.Trace)
	}
	return false
}
