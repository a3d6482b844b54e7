package traceconv

import (
	"github.com/tigrisgo/tigris/runtime/writer"
)

// assembler turns a record stream into call trees while reading it, holding only
// the traces that may still grow.
//
// A trace lives on one goroutine and its root call (ESS 0) exits last, so its
// record is normally the trace's last one in the file. The asynchronous writer
// drains one queue per P, though, so a few records of a trace can follow its
// root; a trace is therefore built only once Lag more records have been read
// after its root. A trace whose root never comes (lost, or a root that runs for
// the whole program) is held until the stream ends, or until more than
// MaxPending records are held, when the oldest such trace is built as it is.
// Popping from the front of a slice and appending at its end keeps each queue's
// memory proportional to what it holds: append reallocates only the live part.
type assembler struct {
	lag, maxPending int
	rep             *Report
	emit            func(t *writer.Trace) error

	pending map[uint64]*pendingTrace
	links   map[uint64]writer.Link   // by child trace, until the trace is built
	remotes map[uint64]writer.Remote // by trace, until the trace is built
	order   []queued                 // traces in the order they were first seen; stale entries are skipped
	ready   []queued                 // traces whose root has been read, with the record count then
	held    int                      // records in pending
	seen    int64                    // records added
	gen     uint64
	free    []*pendingTrace // built traces, kept for their record slices
}

type pendingTrace struct {
	recs []writer.Record
	gen  uint64 // tells this trace from an earlier one with the same id, already built
	root bool
}

type queued struct {
	id, gen uint64
	at      int64
}

func newAssembler(opt Options, rep *Report, emit func(t *writer.Trace) error) *assembler {
	opt = opt.withDefaults()
	return &assembler{lag: opt.Lag, maxPending: opt.MaxPending, rep: rep, emit: emit, pending: make(map[uint64]*pendingTrace)}
}

// add takes a copy of r and builds whatever traces are due.
func (a *assembler) add(r *writer.Record) error {
	p := a.pending[r.Trace]
	if p == nil {
		a.gen++
		if n := len(a.free); n > 0 {
			p = a.free[n-1]
			a.free = a.free[:n-1]
			*p = pendingTrace{recs: p.recs[:0], gen: a.gen}
		} else {
			p = &pendingTrace{gen: a.gen}
		}
		a.pending[r.Trace] = p
		a.order = append(a.order, queued{id: r.Trace, gen: p.gen})
	}
	p.recs = append(p.recs, *r)
	a.held++
	a.seen++
	if r.ESS == 0 && !p.root {
		p.root = true
		a.ready = append(a.ready, queued{id: r.Trace, gen: p.gen, at: a.seen})
	}
	for len(a.ready) > 0 && a.ready[0].at+int64(a.lag) <= a.seen {
		q := a.ready[0]
		a.ready = a.ready[1:]
		if err := a.build(q, false); err != nil {
			return err
		}
	}
	for a.held > a.maxPending && len(a.order) > 0 {
		q := a.order[0]
		a.order = a.order[1:]
		if err := a.build(q, true); err != nil {
			return err
		}
	}
	if len(a.order) > 2*len(a.pending)+1024 {
		a.prune()
	}
	return nil
}

// link keeps l for its trace: a link comes before the trace's records, and
// the trace built from them carries it (Trace.Link).
func (a *assembler) link(l *writer.Link) {
	if a.links == nil {
		a.links = make(map[uint64]writer.Link)
	}
	a.links[l.Trace] = *l
}

// remote keeps the remote parent of trace m.Trace for its Trace.Remote: it
// comes before the trace's records.
func (a *assembler) remote(m *writer.Remote) {
	if a.remotes == nil {
		a.remotes = make(map[uint64]writer.Remote)
	}
	a.remotes[m.Trace] = *m
}

// flush builds every trace held, in the order they were first seen. Links
// and remote parents whose trace has no record (it was lost) are dropped.
func (a *assembler) flush() error {
	for _, q := range a.order {
		if err := a.build(q, false); err != nil {
			return err
		}
	}
	a.order, a.ready = a.order[:0], a.ready[:0]
	clear(a.links)
	clear(a.remotes)
	return nil
}

// build builds trace q if it is still pending. early says it is built to bound
// memory, before the stream ended.
func (a *assembler) build(q queued, early bool) error {
	p := a.pending[q.id]
	if p == nil || p.gen != q.gen {
		return nil // built already
	}
	delete(a.pending, q.id)
	a.held -= len(p.recs)
	a.rep.Traces++
	if !p.root {
		a.rep.Orphans++
		if early {
			a.rep.Split++
		}
	}
	traces := writer.BuildTraces(p.recs) // copies the records
	if len(a.free) < 1024 && cap(p.recs) <= 4096 {
		a.free = append(a.free, p)
	}
	if l, ok := a.links[q.id]; ok {
		delete(a.links, q.id)
		for _, t := range traces {
			t.Link = &l
		}
	}
	if m, ok := a.remotes[q.id]; ok {
		delete(a.remotes, q.id)
		for _, t := range traces {
			t.Remote = &m
		}
	}
	for _, t := range traces {
		if err := a.emit(t); err != nil {
			return err
		}
	}
	return nil
}

// prune drops the entries of traces already built from the first-seen queue:
// most traces are built through the ready queue, and one long trace at the head
// would otherwise keep every later entry.
func (a *assembler) prune() {
	live := a.order[:0]
	for _, q := range a.order {
		if p := a.pending[q.id]; p != nil && p.gen == q.gen {
			live = append(live, q)
		}
	}
	a.order = live
}
