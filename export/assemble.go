package export

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// Records become spans when their parents are known. A call's record is
// written when it returns, so children come before their parents and a
// trace's root comes last; Kieker's rule (the parent of a call is the nearest
// call before it in execution order with a smaller stack depth) needs the
// whole trace. So records are held per trace until the root (stack depth 0)
// arrives, and a little longer: the writer drains one queue per P in turn, so
// a record of a goroutine that moved between Ps can be written one drain pass
// after its root ("settling", below).
//
// Some traces never end while the program runs (an instrumented main or
// worker loop; the monitor samples those in pieces) and some run longer than
// memory allows to hold them. Those are sent in parts ("partial flush"): the
// records held so far go out, and their parents are still right. Execution
// order indexes are dense within a trace (every recorded call takes the next
// one at entry), so an index below the highest one seen that has no record
// yet belongs to a call that has not returned (or whose record was lost). A
// call that has not returned and entered before a returned call c is an
// ancestor of c (one goroutine, properly nested calls), so c's nearest
// ancestor is the later of its nearest recorded ancestor among the held
// records and the highest missing index below c's. That parent's span id is
// a function of its index, so the parent span, sent later, matches.

// spanItem is one span to send: a record and the order index of its parent.
type spanItem struct {
	rec       writer.Record
	pe        *probeEnc // the probe's encoding (immutable: workers read it)
	parent    uint32
	hasParent bool
	// missing is the number of call levels between the parent and this call
	// that have no record (sampled out or not instrumented), when known.
	missing uint32
	// link, on a root of a trace a go statement started, is the call that
	// ran the go statement (links.go); immutable, workers read it.
	link *spanLink
	// remote is the remote parent of the span's trace, linkRemote that of
	// the link's trace (remote.go): set when the span is emitted, nil for
	// none; immutable, workers read them.
	remote, linkRemote *writer.Remote
}

// held is a record waiting in an open trace, with its arrival: the
// stream's count of records when it came.
type held struct {
	writer.Record
	at int64
	// pin is the parent a record not yet ripe found among the records a
	// partial flush sent: a record that came before its child (the writer's
	// queues reorder a little) and was sent while the child stayed.
	pin        uint32
	pinMissing uint32
	pinned     bool
}

// openTrace holds the records of a trace not yet sent.
type openTrace struct {
	recs  []held    // in arrival order until a flush sorts them
	since time.Time // when the oldest held record arrived
	// complete: the root has arrived; the trace is sent once settled.
	complete bool
	// After a partial flush: next is one more than the highest order index
	// seen, holes the indexes below it without a record, ascending.
	partial bool
	next    uint32
	holes   []uint32
	sent    sentCalls // the calls sent, for go statements linked later
}

// maxHoles bounds what a partial trace remembers: the open calls of a
// goroutine are few (its stack), more holes are lost records; the oldest go.
const maxHoles = 4096

// settling is a complete trace waiting for late records.
type settling struct {
	trace uint64
	at    int64     // the stream's record count when the root arrived
	when  time.Time // and the time
}

// completedIDs remembers the last traces sent, so a record arriving after its
// trace was sent is recognised as late rather than as a new trace.
type completedIDs struct {
	set  map[uint64]struct{}
	ring []uint64
	next int
}

const completedKeep = 1 << 16

func (c *completedIDs) add(id uint64) {
	// Grown as needed, not sized for completedKeep: most streams are short.
	if c.set == nil {
		c.set = make(map[uint64]struct{})
	}
	if len(c.ring) < completedKeep {
		c.ring = append(c.ring, id)
	} else {
		delete(c.set, c.ring[c.next])
		c.ring[c.next] = id
		c.next = (c.next + 1) % completedKeep
	}
	c.set[id] = struct{}{}
}

func (c *completedIDs) has(id uint64) bool {
	_, ok := c.set[id]
	return ok
}

// sample is the stream's record count at a time.
type sample struct {
	when    time.Time
	records int64
}

// ripe returns the arrival count up to which held records are old enough to
// send. Records that came later may still see a record of their trace
// written in the writer's next pass (a goroutine that moved between Ps) and
// are held a little longer: window records, or, while the files are read up
// to their end (so whatever the writer had written then has been read
// since), wait.
func (a *assembler) ripe(st *stream, now time.Time) int64 {
	if n := len(st.clock); n == 0 || now.Sub(st.clock[n-1].when) >= 100*time.Millisecond {
		st.clock = append(st.clock, sample{now, st.records})
		if len(st.clock) > 256 {
			st.clock = append(st.clock[:0], st.clock[len(st.clock)-128:]...)
		}
	}
	cut := st.records - a.window
	if !st.caughtUp {
		return cut
	}
	for i := len(st.clock) - 1; i >= 0; i-- {
		if now.Sub(st.clock[i].when) >= a.wait {
			cut = max(cut, st.clock[i].records)
			break
		}
	}
	return cut
}

// probeState is a probe definition and its encoding.
type probeState struct {
	def writer.ProbeDef
	enc probeEnc
}

// stream is the state of one trace stream: one writer, one process, its
// files in sequence.
type stream struct {
	id       uint64
	hdr      writer.Header
	probes   map[uint32]*probeState
	resource []byte // encoded Resource

	traces    map[uint64]*openTrace
	settle    []settling
	clock     []sample // the record count now and then, to turn Settle into a count
	completed completedIDs
	records   int64 // records received
	// caughtUp: the last batch read reached the end of the files.
	caughtUp bool

	// Position: items consumed from file Seq (path).
	path  string
	seq   int
	items int64
	// ended: the last file was read to its end and no more will come (the
	// process is gone).
	ended bool
	// pending: spans of the stream made and not yet delivered; released:
	// the stream ended and everything was delivered, so all it keeps is its
	// position (a shipper that follows a directory for long sees many
	// programs come and go).
	pending  int64
	released bool

	// links are the links read and not done with, by child trace;
	// linkOrder is their order of arrival, for the bound (links.go).
	links     map[uint64]*linkState
	linkOrder []uint64

	// remotes are the remote parents read, by trace; remoteOrder their
	// order of arrival, for the bound (remote.go).
	remotes     map[uint64]*writer.Remote
	remoteOrder []uint64
}

// release lets go of what an ended stream no longer needs, once nothing of
// it is pending.
func (st *stream) release() {
	if !st.ended || st.released || st.pending > 0 || len(st.traces) > 0 || len(st.settle) > 0 || len(st.links) > 0 {
		return
	}
	st.released = true
	st.probes = map[uint32]*probeState{}
	st.traces = map[uint64]*openTrace{}
	st.settle, st.clock = nil, nil
	st.completed = completedIDs{}
	st.links, st.linkOrder = nil, nil
	st.remotes, st.remoteOrder = nil, nil
}

func newStream(h *writer.Header, res []kv) *stream {
	return &stream{
		id:       h.Stream,
		hdr:      *h,
		probes:   make(map[uint32]*probeState),
		resource: encodeResource(res),
		traces:   make(map[uint64]*openTrace),
	}
}

func (st *stream) define(d *writer.ProbeDef) {
	if p := st.probes[d.ID]; p != nil && p.def == *d {
		return
	}
	st.probes[d.ID] = &probeState{def: *d, enc: newProbeEnc(d)}
}

// probe returns the encoding of probe id; a record whose definition was lost
// to damage gets a placeholder name.
func (st *stream) probe(id uint32) *probeEnc {
	p := st.probes[id]
	if p == nil {
		d := writer.ProbeDef{ID: id, Signature: fmt.Sprintf("tigris.unknown_probe_%d()", id)}
		p = &probeState{def: d, enc: newProbeEnc(&d)}
		st.probes[id] = p
	}
	return &p.enc
}

// wall converts a record time to Unix nanoseconds.
func (st *stream) wall(mono int64) uint64 {
	return uint64(st.hdr.Clock.Wall + (mono - st.hdr.Clock.Mono))
}

// assembler turns records into spans with parents.
type assembler struct {
	hold   time.Duration // a trace whose root has not come is sent in parts after this
	window int64         // records a complete trace waits for late records
	wait   time.Duration // or this long
	emit   func(st *stream, spans []spanItem)

	open    int64 // records held in open traces (go records included)
	goHeld  int64 // go records among them (links.go)
	scratch []spanItem
	keep    []held
	free    []*openTrace
	stats   *Stats

	// maxLinks bounds the links pending per stream; links and waiting count
	// them and the roots that wait for them (links.go).
	maxLinks       int
	links, waiting int64
}

// held is how many records read are no span yet: the calls held in open
// traces (not their go records, which are links, not records read) and the
// roots waiting for a link.
func (a *assembler) held() int64 { return a.open - a.goHeld + a.waiting }

// newTrace returns an empty trace, reusing one sent before: a trace a
// request is the common case, and allocating each was a tenth of the cost.
func (a *assembler) newTrace(now time.Time) *openTrace {
	if n := len(a.free); n > 0 {
		t := a.free[n-1]
		a.free = a.free[:n-1]
		t.since = now
		return t
	}
	return &openTrace{since: now, recs: make([]held, 0, 16)}
}

func (a *assembler) freeTrace(t *openTrace) {
	if cap(t.recs) > 256 || len(a.free) >= 1024 {
		return
	}
	*t = openTrace{recs: t.recs[:0]}
	a.free = append(a.free, t)
}

// add takes one record of st.
func (a *assembler) add(st *stream, r *writer.Record, now time.Time) {
	st.records++
	t := st.traces[r.Trace]
	if t == nil {
		if st.completed.has(r.Trace) {
			// Its trace was sent: the parent is unknown now.
			a.stats.LateRecords++
			a.emit(st, []spanItem{{rec: *r, pe: st.probe(r.Probe), missing: r.ESS}})
			return
		}
		t = a.newTrace(now)
		st.traces[r.Trace] = t
	}
	if len(t.recs) == 0 {
		t.since = now
	}
	t.recs = append(t.recs, held{Record: *r, at: st.records})
	a.open++
	if r.ESS == 0 && !t.complete {
		t.complete = true
		st.settle = append(st.settle, settling{trace: r.Trace, at: st.records, when: now})
	}
}

// tick sends the settled complete traces and, after hold, parts of the
// traces still open. It is called after each batch of records and by the
// shipper's timer.
func (a *assembler) tick(st *stream, now time.Time) {
	n := 0
	cut := a.ripe(st, now)
	for _, s := range st.settle {
		if s.at > cut && !st.ended {
			break
		}
		a.flush(st, s.trace, flushComplete)
		n++
	}
	st.settle = st.settle[n:]
	if len(st.settle) == 0 {
		st.settle = nil
	}
}

// expire sends in parts the traces held longer than hold, and every open
// trace when the stream has ended (their roots will never come).
func (a *assembler) expire(st *stream, now time.Time) {
	for id, t := range st.traces {
		switch {
		case t.complete:
		case st.ended:
			a.flush(st, id, flushFinal)
		case st.caughtUp && len(t.recs) > 0 && now.Sub(t.since) >= a.hold:
			// Only while the files are read up to their end: then an index
			// without a record is a call still running (or a record the
			// writer has not flushed yet, which ripeness waits for).
			a.flushPartial(st, id, a.ripe(st, now), now)
		}
	}
}

// drain sends every record st holds, as if ripe: complete traces whole,
// the others in parts that stay open (their holes remembered), for a run
// that stops reading a stream before its end.
func (a *assembler) drain(st *stream) {
	for _, s := range st.settle {
		a.flush(st, s.trace, flushComplete)
	}
	st.settle = nil
	for id, t := range st.traces {
		if len(t.recs) > 0 {
			a.send(st, id, flushPartial, math.MaxInt64, time.Now())
		}
	}
}

// shed sends in parts the largest open traces until at most limit records are
// held, so a trace that never ends cannot hold memory without bound.
func (a *assembler) shed(streams []*stream, limit int64) {
	for a.open > limit {
		var best *stream
		var bestID uint64
		bestN := 0
		for _, st := range streams {
			for id, t := range st.traces {
				if !t.complete && len(t.recs) > bestN {
					best, bestID, bestN = st, id, len(t.recs)
				}
			}
		}
		if best == nil {
			return
		}
		// The records whose parents are certain go; if none is, every held
		// record goes, ripe or not: memory comes first.
		if a.send(best, bestID, flushShed, math.MaxInt64, time.Time{}) == 0 {
			a.send(best, bestID, flushPartial, math.MaxInt64, time.Time{})
		}
		a.stats.TracesSplit++
	}
}

// flushMode says how much of a trace is known when it is sent.
type flushMode int

const (
	// flushComplete: the root has returned, every call has: parents by
	// Kieker's rule among the records.
	flushComplete flushMode = iota
	// flushPartial: calls are still running; the missing order indexes (those
	// calls) are parent candidates too, and the trace stays open with its
	// holes remembered. Only records that arrived up to the ripe count go.
	flushPartial
	// flushFinal: as partial, but no more records will come (the process is
	// gone): everything goes and the trace is forgotten. Calls that never
	// returned have no span; their children keep the parent ids that earlier
	// parts of the trace got.
	flushFinal
	// flushShed: memory is short. Only the records whose parent is certain
	// (a held record one level up) go; the roots of the held subtrees stay.
	// While a backlog is read, an index without a record may be a record not
	// read yet rather than a call still running, so the missing indexes are
	// no evidence then.
	flushShed
)

// flush sends a trace whole (complete or final).
func (a *assembler) flush(st *stream, id uint64, mode flushMode) {
	a.send(st, id, mode, math.MaxInt64, time.Time{})
}

// flushPartial sends the ripe records of a trace still running.
func (a *assembler) flushPartial(st *stream, id uint64, ripe int64, now time.Time) {
	a.send(st, id, flushPartial, ripe, now)
}

func (a *assembler) send(st *stream, id uint64, mode flushMode, ripe int64, now time.Time) (sent int) {
	t := st.traces[id]
	if t == nil {
		return 0
	}
	recs := t.recs
	// Order indexes are unique within a trace (a go record shares one with
	// the call after it, and byOrder puts it first), so the sort need not be
	// stable; pdqsort also spots the common case, records at exit being in
	// reverse order of entry.
	slices.SortFunc(recs, byOrder)
	var holes []uint32
	if mode != flushComplete {
		holes = mergeHoles(t, recs)
	}
	out := a.scratch[:0]
	stack := make([]int, 0, 16) // indexes into recs
	h := 0                      // holes[:h] are below the current record
	// The records that stay are collected apart: the stack points into recs.
	keep := a.keep[:0]
	for i := range recs {
		c := &recs[i].Record
		for h < len(holes) && holes[h] < c.EOI {
			h++
		}
		if isGo(c) {
			// A go statement: where it ran is the child's link, not a span.
			if to, done := a.goCaller(t, id, recs, i, stack, holes[:h], mode, ripe); done {
				out = a.resolved(st, c, to, out)
				a.goHeld--
			} else {
				keep = append(keep, recs[i])
			}
			continue
		}
		for len(stack) > 0 && !mayContain(&recs[stack[len(stack)-1]].Record, c) {
			stack = stack[:len(stack)-1]
		}
		s := spanItem{rec: *c}
		// definite: the parent is a record one level up, so no call can be
		// between them, whatever has not been read yet.
		definite := false
		if len(stack) > 0 {
			p := &recs[stack[len(stack)-1]].Record
			s.parent, s.hasParent, s.missing = p.EOI, true, c.ESS-p.ESS-1
			definite = s.missing == 0
		}
		if r := &recs[i]; r.pinned && (!s.hasParent || r.pin > s.parent) {
			s.parent, s.hasParent, s.missing, definite = r.pin, true, r.pinMissing, r.pinMissing == 0
		}
		stack = append(stack, i)
		if recs[i].at > ripe || mode == flushShed && !definite {
			// It stays, and is sent (with a parent decided then) by a later
			// flush. A parent found among the records is kept, since that
			// record may go now.
			r := recs[i]
			if s.hasParent {
				r.pin, r.pinMissing, r.pinned = s.parent, s.missing, true
			}
			keep = append(keep, r)
			continue
		}
		if !definite && h > 0 && (!s.hasParent || holes[h-1] > s.parent) {
			s.parent, s.hasParent, s.missing = holes[h-1], true, 0
		}
		s.pe = st.probe(c.Probe)
		if !s.hasParent {
			s.missing = c.ESS
			if len(st.links) > 0 && !a.root(st, id, &s) {
				continue
			}
		}
		out = append(out, s)
	}
	kept := len(keep)
	a.open -= int64(len(recs) - kept)
	a.scratch = out[:0]
	if len(out) > 0 {
		a.emit(st, out)
	}
	if mode == flushComplete || mode == flushFinal {
		delete(st.traces, id)
		if len(st.links) == 0 {
			// Its spans are made; a root waiting for a link would need it.
			delete(st.remotes, id)
		}
		st.completed.add(id)
		a.freeTrace(t)
		if len(st.links) > 0 {
			a.childSent(st, id)
		}
		return len(out)
	}
	for i := range out {
		if r := &out[i].rec; r.Trace == id {
			t.sent.add(r)
		}
	}
	t.next = max(t.next, nextAfter(recs))
	t.partial, t.holes = true, holes
	t.recs = append(recs[:0], keep...)
	a.keep = keep[:0]
	if mode == flushPartial {
		t.since = now
	}
	if kept == 0 && cap(t.recs) > 1024 {
		t.recs = nil
	}
	return len(out)
}

// mergeHoles returns the order indexes below the highest seen that have no
// record, given the trace's earlier holes and the held records (sorted).
func mergeHoles(t *openTrace, recs []held) []uint32 {
	var holes []uint32
	// Earlier holes filled by a held record are gone (a go record at the
	// index fills none: it ran before that call began); indexes from t.next
	// up to the highest seen that no held record has are new holes.
	j := 0
	for _, x := range t.holes {
		for j < len(recs) && (recs[j].EOI < x || recs[j].EOI == x && isGo(&recs[j].Record)) {
			j++
		}
		if j < len(recs) && recs[j].EOI == x {
			continue
		}
		holes = append(holes, x)
	}
	want := t.next
	for i := range recs {
		e := recs[i].EOI
		if e < t.next {
			continue
		}
		// Only the last maxHoles are kept (below): a gap of millions of
		// indexes (records lost) must not be listed first.
		if e-want > maxHoles {
			holes = holes[:0]
			want = e - maxHoles
		}
		for ; want < e; want++ {
			holes = append(holes, want)
		}
		if e >= want && !isGo(&recs[i].Record) {
			want = e + 1
		}
	}
	if len(holes) > maxHoles {
		holes = append([]uint32(nil), holes[len(holes)-maxHoles:]...)
	}
	return holes
}

// byOrder orders held records by order index; a go record comes before the
// call with its index, which began after the go statement.
func byOrder(x, y held) int {
	if c := cmp.Compare(x.EOI, y.EOI); c != 0 {
		return c
	}
	return cmp.Compare(y.Flags&writer.FlagLink, x.Flags&writer.FlagLink)
}

// nextAfter is one more than the highest order index recs (sorted) show
// begun: a go record at index e shows that the calls below e began.
func nextAfter(recs []held) uint32 {
	n := len(recs)
	if n == 0 {
		return 0
	}
	if r := &recs[n-1].Record; isGo(r) {
		return r.EOI
	}
	return recs[n-1].EOI + 1
}

// mayContain reports whether p, before r in execution order, can be an
// ancestor of r: a smaller depth, and not a call of the same goroutine that
// had returned before r began (writer.BuildTraces's rule).
func mayContain(p, r *writer.Record) bool {
	if p.ESS >= r.ESS {
		return false
	}
	return p.GID != r.GID || p.TOut >= r.TIn
}
