package export

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/export/otlptest"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// simItem is what the simulated program's writer writes: a call's record or
// a link.
type simItem struct {
	rec  writer.Record
	link *writer.Link
}

// wantLink is where a linked trace's go statement ran: the nearest recorded
// call running then (eoi -1: none) and the levels between it and the
// function whose go statement it was.
type wantLink struct {
	parent  uint64
	eoi     int32
	missing uint32
}

// simulateGo is simulate with go statements: a running call may start a
// goroutine, which runs after a delay (sometimes long: its first traced call
// is late) and whose first trace is linked to the go statement, its link
// item written when that trace's root begins, as the monitor writes it. It
// returns the items in write order, the calls with their true parents, and
// the true place of every link's go statement, by child trace.
func simulateGo(rng *rand.Rand, goroutines, callsPer int) (items []simItem, calls []simCall, want map[uint64]wantLink) {
	return simulateProgram(rng, goroutines, callsPer, false, true)
}

// simulateProgram is simulate, and simulateGo with spawn.
func simulateProgram(rng *rand.Rand, goroutines, callsPer int, longLived, spawn bool) (items []simItem, calls []simCall, want map[uint64]wantLink) {
	type frame struct {
		eoi      int32 // -1 when not recorded
		ess      uint32
		tin      int64
		recorded bool
	}
	type gstate struct {
		gid          uint64
		trace        uint64
		eoi          uint32
		stack        []frame
		calls, limit int
		wake         int // the step before which it does not run
		link         *writer.Link
		want         wantLink
	}
	want = map[uint64]wantLink{}
	var clock int64 = 1000
	var nextTrace uint64
	var gs []*gstate
	for i := range goroutines {
		gs = append(gs, &gstate{gid: uint64(100 + i), limit: callsPer})
	}
	for step, live := 0, goroutines; live > 0; step++ {
		g := gs[rng.IntN(len(gs))]
		if g.calls >= g.limit && len(g.stack) == 0 || step < g.wake {
			continue
		}
		clock += int64(1 + rng.IntN(5))
		if spawn && len(g.stack) > 0 && len(gs) < 200 && rng.IntN(12) == 0 {
			// A go statement in the running call.
			l := &writer.Link{Parent: g.trace, ParentGID: g.gid, EOI: g.eoi, ESS: uint32(len(g.stack)), Probe: 1, Time: clock}
			w := wantLink{parent: g.trace, eoi: -1}
			for i := len(g.stack) - 1; i >= 0; i-- {
				if g.stack[i].recorded {
					w.eoi, w.missing = g.stack[i].eoi, uint32(len(g.stack)-1-i)
					break
				}
			}
			delay := rng.IntN(30)
			if rng.IntN(8) == 0 {
				delay = rng.IntN(3000)
			}
			gs = append(gs, &gstate{gid: uint64(100 + len(gs)), limit: 1 + rng.IntN(callsPer/4+1), wake: step + delay, link: l, want: w})
			live++
			continue
		}
		long := longLived && g == gs[0]
		enter := g.calls < g.limit && (len(g.stack) == 0 || rng.IntN(3) > 0 && len(g.stack) < 12)
		if long && len(g.stack) == 1 && g.calls >= g.limit {
			// The long-lived root never returns.
			g.calls, live = g.calls+1, live-1
			g.stack = nil
			continue
		}
		if enter {
			g.calls++
			if len(g.stack) == 0 {
				nextTrace++
				g.trace, g.eoi = nextTrace, 0
				if g.link != nil {
					l := *g.link
					l.Trace, l.GID = g.trace, g.gid
					items = append(items, simItem{link: &l})
					want[g.trace] = g.want
					g.link = nil
				}
			}
			rec := len(g.stack) == 0 || rng.IntN(6) > 0
			f := frame{eoi: -1, ess: uint32(len(g.stack)), tin: clock, recorded: rec}
			if rec {
				f.eoi = int32(g.eoi)
				g.eoi++
			}
			g.stack = append(g.stack, f)
			continue
		}
		if len(g.stack) == 0 {
			continue
		}
		f := g.stack[len(g.stack)-1]
		g.stack = g.stack[:len(g.stack)-1]
		if f.recorded {
			parent := int32(-1)
			for i := len(g.stack) - 1; i >= 0; i-- {
				if g.stack[i].recorded {
					parent = g.stack[i].eoi
					break
				}
			}
			c := simCall{recorded: true, parent: parent, rec: writer.Record{
				Probe: uint32(1 + f.ess%3), EOI: uint32(f.eoi), ESS: f.ess, Trace: g.trace, GID: g.gid, TIn: f.tin, TOut: clock,
			}}
			calls = append(calls, c)
			items = append(items, simItem{rec: c.rec})
		}
		if len(g.stack) == 0 && g.calls >= g.limit {
			live--
		}
	}
	return items, calls, want
}

// linkCheck collects spans and checks records, parents and links.
type linkCheck struct {
	t     *testing.T
	name  string
	got   map[[2]uint64]spanItem
	calls []simCall
	want  map[uint64]wantLink
}

func newLinkCheck(t *testing.T, name string, calls []simCall, want map[uint64]wantLink) *linkCheck {
	return &linkCheck{t: t, name: name, got: map[[2]uint64]spanItem{}, calls: calls, want: want}
}

func (c *linkCheck) emit(_ *stream, spans []spanItem) {
	for _, s := range spans {
		k := [2]uint64{s.rec.Trace, uint64(s.rec.EOI)}
		if _, dup := c.got[k]; dup {
			c.t.Fatalf("%s: record %v sent twice", c.name, k)
		}
		c.got[k] = s
	}
}

// check: every record is one span with its true parent; every linked
// trace's root links to the call that ran its go statement or, counted in
// stats, to nothing, never to another call. It returns the links made.
func (c *linkCheck) check(stats *Stats) (linked int) {
	c.t.Helper()
	if len(c.got) != len(c.calls) {
		c.t.Errorf("%s: %d spans for %d records", c.name, len(c.got), len(c.calls))
	}
	for _, call := range c.calls {
		s, ok := c.got[[2]uint64{call.rec.Trace, uint64(call.rec.EOI)}]
		if !ok {
			continue
		}
		if p := int32(-1); s.hasParent && int32(s.parent) != call.parent || !s.hasParent && call.parent != p {
			c.t.Errorf("%s: trace %d eoi %d: parent %d (%v), want %d", c.name, call.rec.Trace, call.rec.EOI, s.parent, s.hasParent, call.parent)
		}
		w, isChild := c.want[call.rec.Trace]
		switch {
		case s.link == nil:
		case !isChild || s.hasParent:
			c.t.Errorf("%s: trace %d eoi %d has a link %+v; only a linked trace's root may", c.name, call.rec.Trace, call.rec.EOI, *s.link)
		case int32(s.link.eoi) != w.eoi || s.link.trace != w.parent || s.link.missing != w.missing && s.link.missing != 0:
			// A caller found as a call still running has no known depth:
			// missing 0 then says nothing.
			c.t.Errorf("%s: trace %d: link to trace %d call %d (%d missing), want trace %d call %d (%d missing)",
				c.name, call.rec.Trace, s.link.trace, s.link.eoi, s.link.missing, w.parent, w.eoi, w.missing)
		default:
			linked++
		}
	}
	if n := int64(len(c.want)); stats.Links != n || int64(linked)+stats.LinksDropped+stats.LinksUnresolved != n {
		c.t.Errorf("%s: %d links, %d linked, %d dropped, %d unresolved; want %d links, each linked, dropped or unresolved",
			c.name, stats.Links, linked, stats.LinksDropped, stats.LinksUnresolved, n)
	}
	return linked
}

func feed(a *assembler, st *stream, it *simItem, now time.Time) {
	if it.link != nil {
		a.addLink(st, it.link, now)
	} else {
		a.add(st, &it.rec, now)
	}
}

// smallAssembler is an assembler whose spans go to *spans, of a stream read
// to its end; complete traces are sent Settle (hold) after their root.
func smallAssembler(stats *Stats, spans *[]spanItem, hold time.Duration, maxLinks int) (*assembler, *stream) {
	st := newStream(&writer.Header{Stream: 7}, nil)
	st.caughtUp = true
	return &assembler{hold: hold, window: 1 << 20, wait: hold, stats: stats, maxLinks: maxLinks,
		emit: func(_ *stream, s []spanItem) { *spans = append(*spans, s...) }}, st
}

// TestAssembleLinks: the root of every linked trace gets an OTLP link to
// the parent's call that ran the go statement (the writer's LinkedFrom
// agrees), whether the parent is sent before the child or after it. With
// the traces held until the end, every link is made; with traces sent in
// parts, cut for memory and records reordered as the per-P queues do, a link
// is made to that call or, counted, not at all, and never to another.
func TestAssembleLinks(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, seed*11))
		items, calls, want := simulateGo(rng, 1+rng.IntN(4), 40+rng.IntN(200))
		ideal := seed%4 == 0
		shed := seed%4 == 1
		name := fmt.Sprintf("seed %d", seed)
		if ideal {
			// The writer's definition of the call that ran a go statement.
			var b writer.TraceBuilder
			for i := range items {
				if l := items[i].link; l != nil {
					b.AddLink(l)
				} else {
					b.Add(&items[i].rec)
				}
			}
			traces := map[uint64]*writer.Trace{}
			for _, tr := range b.Traces() {
				traces[tr.ID] = tr
			}
			for child, w := range want {
				tr := traces[child]
				n := traces[w.parent].LinkedFrom(tr.Link)
				if n == nil || int32(n.Record.EOI) != w.eoi {
					t.Fatalf("%s: LinkedFrom for trace %d: %v, the simulation says call %d", name, child, n, w.eoi)
				}
			}
		} else if !shed {
			for i := 1; i < len(items); i++ {
				if rng.IntN(10) == 0 {
					items[i-1], items[i] = items[i], items[i-1]
				}
			}
		}
		c := newLinkCheck(t, name, calls, want)
		var stats Stats
		st := newStream(&writer.Header{Stream: 42}, nil)
		st.caughtUp = shed // nothing unread: a missing index is a running call
		a := assembler{hold: time.Second, window: 64, wait: time.Hour, stats: &stats, emit: c.emit, maxLinks: 1 << 16}
		if ideal {
			a.window = 1 << 30
		}
		drive(rng, &a, st, items, !ideal, shed)
		linked := c.check(&stats)
		if ideal && linked != len(want) {
			t.Errorf("%s: %d of %d links made with every trace held whole", name, linked, len(want))
		}
		if a.open != 0 || a.links != 0 || a.waiting != 0 || len(st.links) != 0 {
			t.Errorf("%s: after the end %d records, %d links, %d waiting roots still held", name, a.open, a.links, a.waiting)
		}
		t.Logf("%s: %d links: %d made, %d dropped, %d unresolved", name, len(want), linked, stats.LinksDropped, stats.LinksUnresolved)
	}
}

// TestLinkCases: the orders a link and the two traces can come in.
func TestLinkCases(t *testing.T) {
	type step struct {
		rec  *writer.Record
		link *writer.Link
		tick bool // past Settle and Hold: send what is due
	}
	// Parent trace 1: root 0 runs 1, which returns, then 2, whose go
	// statement (order index 3, depth 2) starts the goroutine of trace 9.
	p0 := writer.Record{Trace: 1, EOI: 0, ESS: 0, GID: 1, TIn: 10, TOut: 100}
	p1 := writer.Record{Trace: 1, EOI: 1, ESS: 1, GID: 1, TIn: 11, TOut: 20}
	p2 := writer.Record{Trace: 1, EOI: 2, ESS: 1, GID: 1, TIn: 21, TOut: 90}
	l := writer.Link{Trace: 9, GID: 2, Parent: 1, ParentGID: 1, EOI: 3, ESS: 2, Time: 30}
	c0 := writer.Record{Trace: 9, EOI: 0, ESS: 0, GID: 2, TIn: 31, TOut: 40}
	to2 := &spanLink{trace: 1, eoi: 2}
	for _, tc := range []struct {
		name  string
		steps []step
		want  *spanLink
		stats Stats
	}{
		{"child ends first", []step{{link: &l}, {rec: &c0}, {tick: true}, {rec: &p1}, {rec: &p2}, {rec: &p0}}, to2, Stats{Links: 1}},
		{"parent ends first", []step{{rec: &p1}, {link: &l}, {rec: &p2}, {rec: &p0}, {tick: true}, {rec: &c0}}, to2, Stats{Links: 1}},
		{"child record before its link", []step{{rec: &c0}, {link: &l}, {rec: &p1}, {rec: &p2}, {rec: &p0}}, to2, Stats{Links: 1}},
		{"parent in parts: the caller still running", []step{{rec: &p1}, {link: &l}, {tick: true}, {rec: &c0}, {tick: true}, {rec: &p2}, {rec: &p0}}, to2, Stats{Links: 1}},
		// The caller was sent in a part before the link came (the child's
		// first traced call was late): sentCalls still knows it.
		{"caller sent before the link", []step{{rec: &p1}, {rec: &p2}, {tick: true}, {link: &l}, {rec: &c0}, {tick: true}, {rec: &p0}}, to2, Stats{Links: 1}},
		{"child sent before its link", []step{{rec: &c0}, {tick: true}, {link: &l}, {rec: &p1}, {rec: &p2}, {rec: &p0}}, nil, Stats{Links: 1, LinksDropped: 1}},
		{"parent sent before the link", []step{{rec: &p1}, {rec: &p2}, {rec: &p0}, {tick: true}, {link: &l}, {rec: &c0}}, nil, Stats{Links: 1, LinksUnresolved: 1}},
	} {
		var spans []spanItem
		var stats Stats
		a, st := smallAssembler(&stats, &spans, time.Second, 16)
		now := time.Unix(0, 0)
		for _, s := range tc.steps {
			switch {
			case s.rec != nil:
				a.add(st, s.rec, now)
			case s.link != nil:
				a.addLink(st, s.link, now)
			default:
				// Twice: a record is ripe once a later look at the
				// stream's count is Settle old.
				for range 2 {
					a.tick(st, now)
					now = now.Add(10 * time.Second)
					a.expire(st, now)
				}
			}
			a.tick(st, now)
		}
		st.ended = true
		a.expire(st, now)
		a.tick(st, now)
		a.endLinks(st)
		var root *spanItem
		for i := range spans {
			if spans[i].rec.Trace == 9 {
				root = &spans[i]
			}
		}
		if len(spans) != 4 || root == nil {
			t.Errorf("%s: %d spans, child root %v", tc.name, len(spans), root)
			continue
		}
		if (root.link == nil) != (tc.want == nil) || root.link != nil && *root.link != *tc.want {
			t.Errorf("%s: link %+v, want %+v", tc.name, root.link, tc.want)
		}
		stats.TracesSplit = 0
		if stats != tc.stats {
			t.Errorf("%s: stats %+v, want %+v", tc.name, stats, tc.stats)
		}
	}
}

// TestLinkAmbiguous: a parent sent in parts that let go of the calls of a
// depth (more siblings than sentCalls keeps) before a late link came gives
// no link, counted, rather than a link to an outer call.
func TestLinkAmbiguous(t *testing.T) {
	var spans []spanItem
	var stats Stats
	a, st := smallAssembler(&stats, &spans, time.Second, 16)
	now := time.Unix(0, 0)
	// Root 0 runs calls 1..10 at depth 1, one after the other; call 1 ran
	// the go statement (order index 2), and all are sent before the link.
	for i := uint32(1); i <= 10; i++ {
		a.add(st, &writer.Record{Trace: 1, EOI: i, ESS: 1, GID: 1, TIn: int64(10 * i), TOut: int64(10*i + 5)}, now)
	}
	a.tick(st, now)
	now = now.Add(10 * time.Second)
	a.expire(st, now)
	if len(spans) != 10 {
		t.Fatalf("%d of 10 calls sent in the first part", len(spans))
	}
	a.addLink(st, &writer.Link{Trace: 9, GID: 2, Parent: 1, ParentGID: 1, EOI: 2, ESS: 2, Time: 12}, now)
	a.add(st, &writer.Record{Trace: 9, EOI: 0, ESS: 0, GID: 2, TIn: 13, TOut: 14}, now)
	a.add(st, &writer.Record{Trace: 1, EOI: 0, ESS: 0, GID: 1, TIn: 1, TOut: 200}, now)
	st.ended = true
	a.expire(st, now)
	a.tick(st, now)
	for _, s := range spans {
		if s.link != nil {
			t.Errorf("span %+v: a link, though the call that ran the go statement was let go of", s)
		}
	}
	if len(spans) != 12 || stats.LinksUnresolved != 1 {
		t.Errorf("%d spans, stats %+v; want 12 and one unresolved link", len(spans), stats)
	}
}

// TestLinksBounded: links pending are bounded; the oldest go (counted), and
// the roots that waited for them are sent without a link.
func TestLinksBounded(t *testing.T) {
	var spans []spanItem
	var stats Stats
	a, st := smallAssembler(&stats, &spans, time.Hour, 8)
	a.window, a.wait, st.caughtUp = 0, time.Hour, false
	now := time.Unix(0, 0)
	// Trace 1 never returns; its go statements start 100 goroutines whose
	// traces end at once and wait for the parent to say where they began.
	for i := uint64(0); i < 100; i++ {
		a.addLink(st, &writer.Link{Trace: 10 + i, GID: 2 + i, Parent: 1, ParentGID: 1, EOI: 1, ESS: 1, Time: int64(i)}, now)
		a.add(st, &writer.Record{Trace: 10 + i, EOI: 0, ESS: 0, GID: 2 + i, TIn: int64(i), TOut: int64(i)}, now)
		a.tick(st, now)
		if len(st.links) > 8 || a.links > 8 || a.waiting > 8 {
			t.Fatalf("%d links, %d waiting roots held; the bound is 8", a.links, a.waiting)
		}
	}
	if len(spans) != 92 || stats.LinksDropped != 92 {
		t.Errorf("%d roots sent, %d links dropped; want 92 and 92", len(spans), stats.LinksDropped)
	}
	// The parent's part: the 8 kept resolve to its root, still running.
	st.caughtUp = true
	a.expire(st, now.Add(2*time.Hour))
	linked := 0
	for _, s := range spans {
		if s.link != nil && *s.link == (spanLink{trace: 1, eoi: 0}) {
			linked++
		}
	}
	if len(spans) != 100 || linked != 8 || a.waiting != 0 {
		t.Errorf("%d roots sent, %d linked to the parent's root, %d waiting; want 100, 8, 0", len(spans), linked, a.waiting)
	}
	if len(st.linkOrder) > 64 {
		t.Errorf("the order of arrival keeps %d ids for %d links", len(st.linkOrder), len(st.links))
	}
}

// TestLinksAcrossRestarts runs the simulated program's items through
// shippers that stop at random points: each writes its checkpoint with some
// batches delivered and some not, the next loads it and reads on. Every
// record is one span, every link is made where one shipper would make it,
// and nothing pending (go records, links, roots waiting for them, spans
// with links in batches) is lost or sent twice.
func TestLinksAcrossRestarts(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		rng := rand.New(rand.NewPCG(seed, 77))
		items, calls, want := simulateGo(rng, 1+rng.IntN(3), 60+rng.IntN(150))
		name := fmt.Sprintf("seed %d", seed)
		c := newLinkCheck(t, name, calls, want)
		ckpt := filepath.Join(t.TempDir(), "ckpt")
		h := &writer.Header{Stream: 42}
		start := func() *shipper {
			s := &shipper{o: Options{Checkpoint: ckpt, BatchSpans: 50, MaxMemory: 64 << 20, Logf: func(string, ...any) {}},
				streams: map[uint64]*stream{}, inflight: map[*batch]bool{}}
			s.asm = assembler{hold: time.Second, window: 32, wait: time.Hour, emit: s.emit, stats: &s.stats, maxLinks: 1 << 10}
			if _, err := s.loadCheckpoint(); err != nil {
				t.Fatal(err)
			}
			return s
		}
		// deliver acknowledges the batches made, all or about half.
		deliver := func(s *shipper, all bool) {
			s.flushForming()
			var kept []*batch
			for _, b := range s.ready {
				if !all && rng.IntN(2) == 0 {
					kept = append(kept, b)
					continue
				}
				for _, g := range b.groups {
					c.emit(g.st, g.spans)
				}
				b.settled()
				s.pending -= int64(b.n)
			}
			s.ready = kept
		}
		s := start()
		now := time.Unix(0, 0)
		restarts := 0
		for i := range items {
			st := s.streamOf(h)
			st.caughtUp = true
			feed(&s.asm, st, &items[i], now)
			if rng.IntN(40) == 0 {
				now = now.Add(2 * time.Second)
				s.asm.expire(st, now)
			}
			s.asm.tick(st, now)
			if rng.IntN(150) == 0 {
				deliver(s, false)
				if err := s.writeCheckpoint(); err != nil {
					t.Fatal(err)
				}
				s = start()
				restarts++
			}
		}
		st := s.streamOf(h)
		st.ended = true
		s.asm.expire(st, now)
		s.asm.tick(st, now)
		s.asm.endLinks(st)
		deliver(s, true)
		c.check(&s.stats)
		if s.asm.links != 0 || s.asm.waiting != 0 || s.pending != 0 {
			t.Errorf("%s: %d links, %d waiting roots, %d spans pending after the end", name, s.asm.links, s.asm.waiting, s.pending)
		}
		t.Logf("%s: %d restarts, %d links: %d dropped, %d unresolved", name, restarts, len(want), s.stats.LinksDropped, s.stats.LinksUnresolved)
	}
}

// TestLinksShipped writes the simulated program's trace file, links
// included, and ships it with shippers stopped and started again: every
// record arrives once, and a linked trace's root carries an OTLP link to
// the span of the call that ran its go statement (or, counted, none).
func TestLinksShipped(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.tgr")
	items, calls, want := simulateGo(rand.New(rand.NewPCG(21, 22)), 3, 400)
	w, err := writer.NewSync(writer.Options{Path: path, ChunkBytes: 4096, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for p := uint32(1); p <= 3; p++ {
		w.Define(writer.ProbeDef{ID: p, Signature: fmt.Sprintf("example.com/sim.F%d(int) error", p)})
	}
	for i := range items {
		if l := items[i].link; l != nil {
			r := l.Record()
			w.Write(&r)
		} else {
			w.Write(&items[i].rec)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := otlptest.New(t)
	o := testOptions(r, dir)
	runFor(t, o, 0, func() bool { n, _ := r.Count(); return n > len(calls)/3 })
	st := runFor(t, o, 0, func() bool { n, _ := r.Count(); return n >= len(calls) })
	stream := streamOf(t, path)
	checkDelivered(t, r, stream, calls)
	spans := r.Spans()
	linked := 0
	for child, wl := range want {
		tid, sid := TraceID(stream, child), SpanID(stream, child, 0)
		root := spans[otlptest.Key(tid[:], sid[:])]
		if root.Span == nil || len(root.Links) == 0 {
			continue
		}
		ptid, psid := TraceID(stream, wl.parent), SpanID(stream, wl.parent, uint32(wl.eoi))
		if l := root.Links[0]; len(root.Links) != 1 || string(l.TraceId) != string(ptid[:]) || string(l.SpanId) != string(psid[:]) {
			t.Errorf("trace %d: links %v, want one to trace %d call %d", child, root.Links, wl.parent, wl.eoi)
			continue
		}
		if _, ok := spans[otlptest.Key(ptid[:], psid[:])]; !ok {
			t.Errorf("trace %d: the linked span (trace %d call %d) was not sent", child, wl.parent, wl.eoi)
		}
		linked++
	}
	if st.Links != int64(len(want)) || int64(linked)+st.LinksDropped+st.LinksUnresolved != st.Links || linked == 0 {
		t.Errorf("%d links in the file, %d made; stats %+v", len(want), linked, st)
	}
	t.Logf("%d links: %d made, %d dropped, %d unresolved", len(want), linked, st.LinksDropped, st.LinksUnresolved)
}
