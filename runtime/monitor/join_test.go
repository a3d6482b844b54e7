package monitor

import (
	gocontext "context"
	"testing"

	"github.com/tigrisgo/tigris/runtime/tracecontext"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// The example of the W3C Trace Context specification, and a second position.
const (
	headerParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	otelParent   = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
)

// fakeSpanContext stands for OpenTelemetry's trace.SpanContext, with its
// methods' named result types.
type (
	fakeSpanContext struct{ p tracecontext.Parent }
	fakeTraceID     [16]byte
	fakeSpanID      [8]byte
	fakeFlags       byte
	fakeKey         struct{}
)

func (s fakeSpanContext) TraceID() fakeTraceID { return fakeTraceID(s.p.TraceID) }
func (s fakeSpanContext) SpanID() fakeSpanID   { return fakeSpanID(s.p.SpanID) }
func (s fakeSpanContext) Flags() fakeFlags     { return fakeFlags(s.p.Flags) }

func fakeFromContext(ctx gocontext.Context) fakeSpanContext {
	sc, _ := ctx.Value(fakeKey{}).(fakeSpanContext)
	return sc
}

// withOTel sets the bridge as a program's one line does, for the test.
func withOTel(t testing.TB) {
	JoinOpenTelemetry(fakeFromContext, fakeSpanContext.TraceID, fakeSpanContext.SpanID, fakeSpanContext.Flags)
	t.Cleanup(func() { spanContextOf.Store(nil) })
}

func otelContext(t testing.TB, traceparent string) gocontext.Context {
	p, ok := tracecontext.Parse(traceparent)
	if !ok {
		t.Fatalf("bad traceparent %q", traceparent)
	}
	return gocontext.WithValue(gocontext.Background(), fakeKey{}, fakeSpanContext{p})
}

// requestCall is the prologue the rewriter generates for a function with an
// *http.Request parameter, and the function's body: inner.
func requestCall(p *Probe, ctx gocontext.Context, h map[string][]string, inner func()) {
	if p.On() {
		c := Start(p)
		if c.Joins() {
			JoinRequest(&c, ctx, h)
		}
		defer c.Exit(nil)
	}
	if inner != nil {
		inner()
	}
}

// remotes returns the sink's remote parents and its call records; it
// panics when a remote parent comes after a record of its trace.
func (s *recordSink) remotes() (remotes []writer.Remote, calls []writer.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[uint64]bool{}
	for i := range s.records {
		if m, ok := s.records[i].Remote(); ok {
			if seen[m.Trace] {
				panic("a remote parent after a record of its trace")
			}
			remotes = append(remotes, m)
		} else {
			calls = append(calls, s.records[i])
			seen[s.records[i].Trace] = true
		}
	}
	return remotes, calls
}

func header(v ...string) map[string][]string { return map[string][]string{"Traceparent": v} }

// TestJoinRequest: a recorded root whose request carries a position joins
// that trace once, before its records; a call below it with a request does
// not look (only roots do); the OpenTelemetry context comes before the
// header; an invalid header, two headers, or neither join nothing.
func TestJoinRequest(t *testing.T) {
	ps, sink := fineProbes(t, "test.example/join", 2)
	hp, _ := tracecontext.Parse(headerParent)
	op, _ := tracecontext.Parse(otelParent)
	run := func(ctx gocontext.Context, h map[string][]string) ([]writer.Remote, []writer.Record) {
		sink.mu.Lock()
		sink.records = nil
		sink.mu.Unlock()
		requestCall(&ps[0], ctx, h, func() {
			requestCall(&ps[1], otelContext(t, otelParent), header(otelParent), nil)
		})
		return sink.remotes()
	}
	check := func(name string, remotes []writer.Remote, calls []writer.Record, want *tracecontext.Parent) {
		t.Helper()
		if len(calls) != 2 {
			t.Fatalf("%s: %d calls recorded; want 2", name, len(calls))
		}
		if want == nil {
			if len(remotes) != 0 {
				t.Fatalf("%s: remote parents %+v; want none", name, remotes)
			}
			return
		}
		if len(remotes) != 1 {
			t.Fatalf("%s: %d remote parents; want 1", name, len(remotes))
		}
		m := remotes[0]
		if m.Trace != calls[0].Trace || m.GID != calls[0].GID || m.TraceID != want.TraceID || m.SpanID != want.SpanID || m.Flags != want.Flags {
			t.Fatalf("%s: remote parent %+v for trace %d on goroutine %d; want %+v", name, m, calls[0].Trace, calls[0].GID, *want)
		}
		root := calls[len(calls)-1]
		if root.ESS != 0 || m.Time > root.TIn {
			t.Fatalf("%s: remote parent at %d, root %+v", name, m.Time, root)
		}
	}
	rs, cs := run(gocontext.Background(), header(headerParent))
	check("header", rs, cs, &hp)
	rs, cs = run(nil, header(headerParent))
	check("header, nil context", rs, cs, &hp)
	rs, cs = run(otelContext(t, otelParent), header(headerParent))
	check("context without the bridge", rs, cs, &hp)
	withOTel(t)
	rs, cs = run(otelContext(t, otelParent), header(headerParent))
	check("context and header", rs, cs, &op)
	rs, cs = run(otelContext(t, otelParent), nil)
	check("context", rs, cs, &op)
	rs, cs = run(gocontext.Background(), header(headerParent))
	check("context without a span", rs, cs, &hp)
	rs, cs = run(gocontext.Background(), nil)
	check("neither", rs, cs, nil)
	rs, cs = run(gocontext.Background(), header("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"))
	check("invalid header", rs, cs, nil)
	rs, cs = run(gocontext.Background(), header(headerParent, otelParent))
	check("two headers", rs, cs, nil)
}

// TestJoinContext: the context.Context form, and the trace context's
// remote trace id, which names the running trace only.
func TestJoinContext(t *testing.T) {
	ps, sink := fineProbes(t, "test.example/joinctx", 1)
	withOTel(t)
	var during, after bool
	var id [16]byte
	if ps[0].On() {
		c := Start(&ps[0])
		if c.Joins() {
			JoinContext(&c, otelContext(t, otelParent))
		}
		id, during = context().remoteTraceID()
		c.Exit(nil)
	}
	call(&ps[0], nil) // a later trace of the goroutine joins nothing
	if ps[0].On() {
		c := Start(&ps[0])
		_, after = context().remoteTraceID()
		c.Exit(nil)
	}
	op, _ := tracecontext.Parse(otelParent)
	if !during || id != op.TraceID || after {
		t.Fatalf("remote trace id %x (%v) during the trace, %v in a later one", id, during, after)
	}
	if rs, cs := sink.remotes(); len(rs) != 1 || len(cs) != 3 || rs[0].Trace != cs[0].Trace || rs[0].TraceID != op.TraceID {
		t.Fatalf("remote parents %+v, calls %+v", rs, cs)
	}
}

// TestJoinsOnlyRecordedRoots: a coarse call, a call below a root and a root
// that is not recorded do not look for a remote parent (follow-parent off):
// the lookup runs once per recorded trace.
func TestJoinsOnlyRecordedRoots(t *testing.T) {
	ps, _ := fineProbes(t, "test.example/joins", 2)
	c := Start(&ps[0])
	inner := Start(&ps[1])
	if !c.Joins() || inner.Joins() {
		t.Errorf("root joins %v, inner call joins %v; want true, false", c.Joins(), inner.Joins())
	}
	inner.Exit(nil)
	c.Exit(nil)
	if err := SetSampling(0); err != nil {
		t.Fatal(err)
	}
	if c := Start(&ps[0]); c.Joins() {
		t.Error("a root that is not recorded joins")
	}
	coarse := newProbes(t, "test.example/joinscoarse", 1)
	if c := Start(&coarse[0]); !coarse[0].On() || c.Joins() {
		t.Errorf("a coarse call joins (on %v)", coarse[0].On())
	}
}

// TestFollowParent: under follow-parent a root with a remote parent is
// recorded as its sampled flag says, whatever the rate; a root without one
// draws; off, the rate decides alone.
func TestFollowParent(t *testing.T) {
	ps, sink := fineProbes(t, "test.example/follow", 2)
	unsampled := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"
	count := func(rate float64, follow bool, h map[string][]string) (remotes, calls int) {
		t.Helper()
		if err := SetSampling(rate); err != nil {
			t.Fatal(err)
		}
		followParent.Store(follow)
		defer followParent.Store(false)
		sink.mu.Lock()
		sink.records = nil
		sink.mu.Unlock()
		for i := 0; i < 10; i++ {
			requestCall(&ps[0], nil, h, func() { call(&ps[1], nil) })
		}
		rs, cs := sink.remotes()
		return len(rs), len(cs)
	}
	for _, c := range []struct {
		name           string
		rate           float64
		follow         bool
		h              map[string][]string
		remotes, calls int
	}{
		{"off, rate 0, sampled parent", 0, false, header(headerParent), 0, 0},
		{"off, rate 1, unsampled parent", 1, false, header(unsampled), 10, 20},
		{"on, rate 0, sampled parent", 0, true, header(headerParent), 10, 20},
		{"on, rate 1, unsampled parent", 1, true, header(unsampled), 0, 0},
		{"on, rate 1, no parent", 1, true, nil, 0, 20},
		{"on, rate 0, no parent", 0, true, nil, 0, 0},
	} {
		if r, n := count(c.rate, c.follow, c.h); r != c.remotes || n != c.calls {
			t.Errorf("%s: %d remote parents and %d calls; want %d and %d", c.name, r, n, c.remotes, c.calls)
		}
	}
}

// BenchmarkJoin is what a recorded root pays to look for its remote parent:
// a fine root and one call below it, with the lookup's forms. The lookup
// runs once per recorded trace, never on the off or coarse paths.
func BenchmarkJoin(b *testing.B) {
	ps := newProbes(b, "bench.example/join", 1)
	if _, err := AddRule(Rule{Pattern: "execution(* bench.example/join.*(..))", Mode: "fine"}); err != nil {
		b.Fatal(err)
	}
	defer SetRules(nil)
	prev := SetSink(&writer.Null{})
	defer SetSink(prev)
	JoinOpenTelemetry(fakeFromContext, fakeSpanContext.TraceID, fakeSpanContext.SpanID, fakeSpanContext.Flags)
	defer spanContextOf.Store(nil)
	// The context otelhttp hands a handler holds a few values above the span.
	otel := otelContext(b, otelParent)
	for i := 0; i < 4; i++ {
		otel = gocontext.WithValue(otel, &i, i)
	}
	for _, c := range []struct {
		name string
		ctx  gocontext.Context
		h    map[string][]string
		join bool
	}{
		{"root", nil, nil, false},
		{"neither", gocontext.Background(), map[string][]string{"Accept": {"*/*"}}, true},
		{"traceparent", gocontext.Background(), header(headerParent), true},
		{"otel", otel, header(headerParent), true},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				cl := Start(&ps[0])
				if c.join && cl.Joins() {
					JoinRequest(&cl, c.ctx, c.h)
				}
				cl.Exit(nil)
			}
		})
	}
}
