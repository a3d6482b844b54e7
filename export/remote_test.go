package export

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/export/otlptest"
	"github.com/tigrisgo/tigris/runtime/tracecontext"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// TestRemoteShipped ships traces that joined a request's trace and one that
// did not: the first carry the request's trace id, their roots are children
// of the request's span and their other calls of their tigris parents; a go
// statement's link to such a trace names it by the request's trace id; the
// trace without a remote parent keeps tigris's ids.
func TestRemoteShipped(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.tgr")
	w, err := writer.NewSync(writer.Options{Path: path, ChunkBytes: 4096, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	w.Define(writer.ProbeDef{ID: 1, Signature: "example.com/shop.(*Server).ServeHTTP(net/http.ResponseWriter, *net/http.Request)"})
	w.Define(writer.ProbeDef{ID: 2, Signature: "example.com/shop.(*Store).Find(context.Context, int) error"})
	a, _ := tracecontext.Parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	b, _ := tracecontext.Parse("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	write := func(r writer.Record) { w.Write(&r) }
	remote := func(trace uint64, p tracecontext.Parent, t0 int64) {
		m := writer.Remote{Trace: trace, GID: 7, TraceID: p.TraceID, SpanID: p.SpanID, Flags: p.Flags, Time: t0}
		write(m.Record())
	}
	// Trace 1 joined a: ServeHTTP → Find. Trace 2 joined nothing. Trace 3
	// joined b, and its Find ran a go statement whose goroutine's trace 4
	// joined nothing.
	remote(1, a, 100)
	write(writer.Record{Probe: 2, EOI: 1, ESS: 1, Trace: 1, GID: 7, TIn: 110, TOut: 120})
	write(writer.Record{Probe: 1, EOI: 0, ESS: 0, Trace: 1, GID: 7, TIn: 100, TOut: 130})
	write(writer.Record{Probe: 1, EOI: 0, ESS: 0, Trace: 2, GID: 7, TIn: 200, TOut: 230})
	remote(3, b, 300)
	l := writer.Link{Trace: 4, GID: 9, Parent: 3, ParentGID: 7, EOI: 2, ESS: 2, Probe: 2, Time: 315}
	write(l.Record())
	write(writer.Record{Probe: 2, EOI: 0, ESS: 0, Trace: 4, GID: 9, TIn: 316, TOut: 340})
	write(writer.Record{Probe: 2, EOI: 1, ESS: 1, Trace: 3, GID: 7, TIn: 310, TOut: 320})
	write(writer.Record{Probe: 1, EOI: 0, ESS: 0, Trace: 3, GID: 7, TIn: 300, TOut: 330})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := otlptest.New(t)
	o := testOptions(r, dir)
	o.Once = true
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := Run(ctx, o); err != nil {
		t.Fatal(err)
	}
	stream := streamOf(t, path)
	spans := r.Spans()
	if len(spans) != 6 {
		t.Fatalf("%d spans received; want 6", len(spans))
	}
	span := func(tid [16]byte, trace uint64, eoi uint32) otlptest.Span {
		t.Helper()
		sid := SpanID(stream, trace, eoi)
		s, ok := spans[otlptest.Key(tid[:], sid[:])]
		if !ok {
			t.Fatalf("no span of trace %d call %d under trace id %x", trace, eoi, tid)
		}
		return s
	}
	parentIs := func(s otlptest.Span, want []byte) {
		t.Helper()
		if string(s.ParentSpanId) != string(want) {
			t.Errorf("span %s: parent %x, want %x", s.Name, s.ParentSpanId, want)
		}
	}
	root1, find1 := span(a.TraceID, 1, 0), span(a.TraceID, 1, 1)
	parentIs(root1, a.SpanID[:])
	parentIs(find1, root1.SpanId)
	root2 := span(TraceID(stream, 2), 2, 0)
	parentIs(root2, nil)
	root3, find3 := span(b.TraceID, 3, 0), span(b.TraceID, 3, 1)
	parentIs(root3, b.SpanID[:])
	parentIs(find3, root3.SpanId)
	root4 := span(TraceID(stream, 4), 4, 0)
	if len(root4.Links) != 1 || string(root4.Links[0].TraceId) != string(b.TraceID[:]) || string(root4.Links[0].SpanId) != string(find3.SpanId) {
		t.Errorf("the go statement's link: %v; want one to %x/%x", root4.Links, b.TraceID, find3.SpanId)
	}
}

// TestRemoteWindow: a stream keeps the latest remoteWindow remote parents,
// and a span takes its own trace's.
func TestRemoteWindow(t *testing.T) {
	st := newStream(&writer.Header{Stream: 1}, nil)
	for i := uint64(1); i <= remoteWindow+10; i++ {
		m := writer.Remote{Trace: i, TraceID: [16]byte{15: 1}, SpanID: [8]byte{7: 1}}
		binary.BigEndian.PutUint64(m.TraceID[:8], i)
		st.addRemote(&m)
	}
	if len(st.remotes) != remoteWindow || len(st.remoteOrder) != remoteWindow || st.remotes[10] != nil || st.remotes[11] == nil {
		t.Fatalf("%d remote parents kept (order %d); trace 10 %v, 11 %v", len(st.remotes), len(st.remoteOrder), st.remotes[10], st.remotes[11])
	}
	spans := []spanItem{{rec: writer.Record{Trace: 11}}, {rec: writer.Record{Trace: 5}}}
	st.withRemotes(spans)
	if spans[0].remote != st.remotes[11] || spans[1].remote != nil {
		t.Fatalf("remotes of spans: %v, %v", spans[0].remote, spans[1].remote)
	}
}
