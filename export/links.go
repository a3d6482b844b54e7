package export

import (
	"time"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// Goroutines. A trace is a call tree within one goroutine; a goroutine that
// a go statement of a recorded trace started begins a trace of its own, whose
// link item (format 1.2) names the parent trace and its position at the go
// statement: EOI, the parent's next order index, and ESS, its depth. The
// child trace keeps its own OTLP trace id, and its root span carries an OTLP
// link to the span of the parent's call that ran the go statement
// (docs/export.md, "Goroutines", says why a link and not a parent span).
//
// That call is found as a call's parent is: the go statement is put into the
// parent trace as a record of its own (a "go record": FlagLink, at EOI and ESS,
// entered and left at the link's time) and the assembler gives it the parent
// Kieker's rule gives a call there, when the parent trace is sent, whole or in
// parts. Its span id is a function of that call's order index, as every span
// id is. The child's root usually comes first (a go statement's goroutine
// often ends before its spawner): it waits, bounded, for the parent's answer.
//
// A parent trace sent in parts forgets the records it sent, and a link can
// come long after the go statement (the goroutine's first traced call may be
// late), when the call that ran it has already been sent. So a trace sent in
// parts keeps, per depth, the last few calls it sent (sentCalls); a go
// statement whose caller could be one it let go of gets no link rather than a
// wrong one (Stats.LinksUnresolved).

// spanLink is the OTLP link a span carries: to the call of trace (of the
// span's stream) with order index eoi.
type spanLink struct {
	trace uint64
	eoi   uint32
	// missing is the number of call levels between that call and the function
	// whose go statement it was that have no record (not sampled).
	missing uint32
}

// linkState is a link read and not done with: where its go statement ran is
// not known yet, or its child trace is still to be sent.
type linkState struct {
	parent    uint64
	resolved  bool
	to        *spanLink // nil when resolved without a call to link to
	childDone bool      // the child trace was sent (its roots took the link)
	// waiting are the child's roots sent before the link was resolved.
	waiting []spanItem
}

// maxWaiting bounds the roots one link holds back; a trace has one root,
// more come only from lost records.
const maxWaiting = 16

// goRecord is the go statement of l as a record of the parent trace: it ran
// at depth ESS after the calls below EOI began, at the link's time. Size
// holds the child trace.
func goRecord(l *writer.Link) writer.Record {
	return writer.Record{Probe: l.Probe, Flags: writer.FlagLink, EOI: l.EOI, ESS: l.ESS,
		Trace: l.Parent, GID: l.ParentGID, TIn: l.Time, TOut: l.Time, Size: int64(l.Trace)}
}

func isGo(r *writer.Record) bool { return r.Flags&writer.FlagLink != 0 }

// addLink takes a link item of st.
func (a *assembler) addLink(st *stream, l *writer.Link, now time.Time) {
	a.stats.Links++
	switch {
	case st.completed.has(l.Trace) || st.links[l.Trace] != nil:
		// The child's roots went without it (or a damaged file repeats it).
		a.stats.LinksDropped++
		return
	case st.completed.has(l.Parent) || l.ESS == 0:
		// The parent's records are gone; ESS 0 is no go statement.
		a.stats.LinksUnresolved++
		return
	}
	for len(st.links) >= max(a.maxLinks, 1) && a.evictLink(st) {
	}
	if st.links == nil {
		st.links = make(map[uint64]*linkState)
	}
	st.links[l.Trace] = &linkState{parent: l.Parent}
	st.linkOrder = append(st.linkOrder, l.Trace)
	a.links++
	t := st.traces[l.Parent]
	if t == nil {
		t = a.newTrace(now)
		st.traces[l.Parent] = t
	}
	if len(t.recs) == 0 {
		t.since = now
	}
	t.recs = append(t.recs, held{Record: goRecord(l), at: st.records})
	a.open++
	a.goHeld++
}

// evictLink lets go of st's oldest link: the bound on links pending.
func (a *assembler) evictLink(st *stream) bool {
	for len(st.linkOrder) > 0 {
		id := st.linkOrder[0]
		st.linkOrder = st.linkOrder[1:]
		if ls := st.links[id]; ls != nil {
			a.stats.LinksDropped++
			a.dropLink(st, id, ls)
			return true
		}
	}
	return false
}

// dropLink forgets the link of child trace id; roots that waited for it go
// without it.
func (a *assembler) dropLink(st *stream, id uint64, ls *linkState) {
	delete(st.links, id)
	a.links--
	if len(ls.waiting) > 0 {
		a.waiting -= int64(len(ls.waiting))
		a.emit(st, ls.waiting)
	}
	// Ids of links done with stay in linkOrder until eviction passes them.
	if n := len(st.linkOrder); n > 64 && n > 2*len(st.links) {
		order := st.linkOrder[:0]
		for _, c := range st.linkOrder {
			if st.links[c] != nil {
				order = append(order, c)
			}
		}
		st.linkOrder = append([]uint64(nil), order...)
	}
}

// resolved records where the go statement g (a go record) ran and releases
// the child's roots that waited, appending them to out.
func (a *assembler) resolved(st *stream, g *writer.Record, to *spanLink, out []spanItem) []spanItem {
	child := uint64(g.Size)
	ls := st.links[child]
	if ls == nil || ls.resolved {
		return out // dropped for the bound meanwhile
	}
	ls.resolved, ls.to = true, to
	if to == nil {
		a.stats.LinksUnresolved++
	}
	for _, s := range ls.waiting {
		s.link = to
		out = append(out, s)
	}
	a.waiting -= int64(len(ls.waiting))
	ls.waiting = nil
	if ls.childDone {
		a.dropLink(st, child, ls)
	}
	return out
}

// root gives s, a span of trace id without a parent, the link of its trace;
// false when s waits for the link to be resolved.
func (a *assembler) root(st *stream, id uint64, s *spanItem) bool {
	ls := st.links[id]
	switch {
	case ls == nil:
	case ls.resolved:
		s.link = ls.to
	case len(ls.waiting) < maxWaiting:
		ls.waiting = append(ls.waiting, *s)
		a.waiting++
		return false
	}
	return true
}

// childSent: trace id was sent whole; its link is done with once resolved.
func (a *assembler) childSent(st *stream, id uint64) {
	if ls := st.links[id]; ls != nil {
		ls.childDone = true
		if ls.resolved {
			a.dropLink(st, id, ls)
		}
	}
}

// endLinks: st has ended and every trace was sent, so every go record was
// resolved; links whose child trace never came are dropped.
func (a *assembler) endLinks(st *stream) {
	for id, ls := range st.links {
		if !ls.resolved || ls.to != nil {
			// Resolved without a call, it was counted as unresolved.
			a.stats.LinksDropped++
		}
		a.dropLink(st, id, ls)
	}
	st.linkOrder = nil
}

// goCaller finds the call of trace id (t) that ran the go statement recs[i]
// as send finds a call's parent: among the held records on stack, the
// missing order indexes below it (calls still running; none when the trace
// is complete) and the calls t sent before. done is false when the go record
// must wait (not ripe, or memory is short and the answer is not certain).
func (a *assembler) goCaller(t *openTrace, id uint64, recs []held, i int, stack []int, below []uint32, mode flushMode, ripe int64) (to *spanLink, done bool) {
	g := &recs[i].Record
	var p *writer.Record
	for j := len(stack) - 1; j >= 0; j-- {
		if r := &recs[stack[j]].Record; mayContain(r, g) {
			p = r
			break
		}
	}
	if p != nil && p.ESS+1 == g.ESS {
		// The call one level up that was running then: the function whose
		// go statement it was, whatever else is missing.
		return &spanLink{trace: id, eoi: p.EOI}, true
	}
	if recs[i].at > ripe || mode == flushShed {
		return nil, false
	}
	best, missing := int64(-1), uint32(0)
	if p != nil {
		best, missing = int64(p.EOI), g.ESS-p.ESS-1
	}
	if n := len(below); n > 0 && int64(below[n-1]) > best {
		best, missing = int64(below[n-1]), 0 // a call still running; its depth is not known
	}
	e, d, ok := t.sent.caller(g, best)
	switch {
	case !ok:
		return nil, true
	case e > best:
		best, missing = e, g.ESS-d-1
	}
	if best < 0 {
		return nil, true
	}
	return &spanLink{trace: id, eoi: uint32(best), missing: missing}, true
}

// sentCalls summarises the calls a trace sent in parts, by depth: the few
// with the highest order indexes, enough to find a later go statement's
// caller among them. Deeper calls are only noted.
type sentCalls struct {
	depths []sentDepth // by ESS, below maxSentDepth
	deep   bool        // a call at maxSentDepth or deeper was sent
}

const (
	maxSentDepth = 64
	sentKeep     = 4
)

// sentDepth holds the sent calls of one depth with the highest order
// indexes; every call let go of has a lower index than every call kept.
type sentDepth struct {
	calls      [sentKeep]sentCall
	n          uint8
	evicted    bool
	evictedMax uint32
}

type sentCall struct {
	eoi  uint32
	tout int64
}

// add notes the sent call r.
func (s *sentCalls) add(r *writer.Record) {
	if r.ESS >= maxSentDepth {
		s.deep = true
		return
	}
	for len(s.depths) <= int(r.ESS) {
		s.depths = append(s.depths, sentDepth{})
	}
	d := &s.depths[r.ESS]
	c := sentCall{r.EOI, r.TOut}
	if int(d.n) < sentKeep {
		d.calls[d.n] = c
		d.n++
		return
	}
	low := 0
	for k := 1; k < sentKeep; k++ {
		if d.calls[k].eoi < d.calls[low].eoi {
			low = k
		}
	}
	if c.eoi < d.calls[low].eoi {
		d.noteEvicted(c.eoi) // older than every call kept
		return
	}
	d.noteEvicted(d.calls[low].eoi)
	d.calls[low] = c
}

func (d *sentDepth) noteEvicted(eoi uint32) {
	if !d.evicted || eoi > d.evictedMax {
		d.evicted, d.evictedMax = true, eoi
	}
}

// caller returns the deepest sent call that was running when the go
// statement g ran, if it is deeper than the candidate with order index
// floor (-1 for none): its index and depth. ok is false when a call let go
// of may be it.
func (s *sentCalls) caller(g *writer.Record, floor int64) (eoi int64, depth uint32, ok bool) {
	if s.deep && g.ESS > maxSentDepth {
		return -1, 0, false
	}
	for d := min(int(g.ESS), len(s.depths)) - 1; d >= 0; d-- {
		sd := &s.depths[d]
		// The only call of depth d that can have been running then is the
		// last one that began before the go statement: a later one began
		// after it returned.
		best, found := sentCall{}, false
		for _, c := range sd.calls[:sd.n] {
			if c.eoi < g.EOI && (!found || c.eoi > best.eoi) {
				best, found = c, true
			}
		}
		if !found && sd.evicted && int64(sd.evictedMax) > floor {
			return -1, 0, false
		}
		if found && int64(best.eoi) > floor && best.tout >= g.TIn {
			return int64(best.eoi), uint32(d), true
		}
	}
	return -1, 0, true
}
