package export

import (
	"encoding/binary"
	"testing"

	"google.golang.org/protobuf/proto"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/tigrisgo/tigris/export/otlptest"
	"github.com/tigrisgo/tigris/runtime/writer"
)

func TestFunctionName(t *testing.T) {
	for sig, want := range map[string]string{
		"example.com/shop.(*Store).Find(int) (string, error)": "example.com/shop.(*Store).Find",
		"example.com/shop.Store.Ping() error":                 "example.com/shop.Store.Ping",
		"example.com/shop.Max[...](T, T) T":                   "example.com/shop.Max[...]",
		"example.com/shop.(*Stack[...]).Pop() (T, bool)":      "example.com/shop.(*Stack[...]).Pop",
		"main.f(func(int) error, map[string]int)":             "main.f",
		"func (*example.com/shop.Store).Find(int)":            "(*example.com/shop.Store).Find",
		"tigris.unknown_probe_7()":                            "tigris.unknown_probe_7",
		"no parameter list":                                   "no parameter list",
	} {
		if got := FunctionName(sig); got != want {
			t.Errorf("FunctionName(%q) = %q, want %q", sig, got, want)
		}
	}
}

// TestSpanEncoding decodes the hand-encoded request with the generated
// types: every field where the schema says.
func TestSpanEncoding(t *testing.T) {
	h := &writer.Header{Stream: 0xabc, Clock: writer.ClockBase{Wall: 1_700_000_000_000_000_000, Mono: 1000}, Host: "h1", PID: 42, Binary: "/srv/shop"}
	st := newStream(h, resourceAttrs(&Options{}, h.Host, h.Host, h.PID, h.Binary))
	st.define(&writer.ProbeDef{ID: 7, Signature: "example.com/shop.(*Store).Find(int) (string, error)", File: "/src/shop/store.go", Line: 12})
	recs := []spanItem{
		{rec: writer.Record{Probe: 7, EOI: 0, ESS: 0, Trace: 3, GID: 9, TIn: 1000, TOut: 5000}},
		{rec: writer.Record{Probe: 7, EOI: 1, ESS: 1, Trace: 3, GID: 9, TIn: 1100, TOut: 1200, Flags: writer.FlagError | writer.FlagSize, Size: 5}, parent: 0, hasParent: true},
		{rec: writer.Record{Probe: 7, EOI: 2, ESS: 3, Trace: 3, GID: 9, TIn: 1300, TOut: 1400, Flags: writer.FlagPanic}, parent: 1, hasParent: true, missing: 1},
	}
	var spans []byte
	for i := range recs {
		recs[i].pe = st.probe(recs[i].rec.Probe)
		spans = appendSpan(spans, st, &recs[i])
	}
	head, tail := wrapSpans(st.resource, encodeScope("v1.2.3"), len(spans))
	body := append(append(append([]byte(nil), head...), spans...), tail...)
	var req tracepb.TracesData
	if err := proto.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	rs := req.ResourceSpans[0]
	res := otlptest.Attrs(rs.Resource.Attributes)
	if res["service.name"] != "shop" || res["host.name"] != "h1" || res["process.pid"] != "42" || res["service.instance.id"] != InstanceID("h1", 42) {
		t.Errorf("resource %v", res)
	}
	if rs.SchemaUrl != SchemaURL || rs.ScopeSpans[0].Scope.Name != ScopeName || rs.ScopeSpans[0].Scope.Version != "v1.2.3" {
		t.Errorf("schema %q, scope %v", rs.SchemaUrl, rs.ScopeSpans[0].Scope)
	}
	got := rs.ScopeSpans[0].Spans
	if len(got) != 3 {
		t.Fatalf("%d spans", len(got))
	}
	root, child, panicked := got[0], got[1], got[2]
	hi, lo := traceID(0xabc, 3)
	if binary.BigEndian.Uint64(root.TraceId) != hi || binary.BigEndian.Uint64(root.TraceId[8:]) != lo {
		t.Errorf("trace id %x", root.TraceId)
	}
	if len(root.ParentSpanId) != 0 || string(child.ParentSpanId) != string(root.SpanId) || string(panicked.ParentSpanId) != string(child.SpanId) {
		t.Errorf("parents: root %x, child %x (root %x), panicked %x (child %x)", root.ParentSpanId, child.ParentSpanId, root.SpanId, panicked.ParentSpanId, child.SpanId)
	}
	if root.Name != "example.com/shop.(*Store).Find" || root.Kind != tracepb.Span_SPAN_KIND_INTERNAL {
		t.Errorf("name %q kind %v", root.Name, root.Kind)
	}
	if root.StartTimeUnixNano != 1_700_000_000_000_000_000 || root.EndTimeUnixNano != 1_700_000_000_000_004_000 {
		t.Errorf("times %d %d", root.StartTimeUnixNano, root.EndTimeUnixNano)
	}
	a := otlptest.Attrs(root.Attributes)
	if a["code.function.name"] != root.Name || a["code.file.path"] != "/src/shop/store.go" || a["code.line.number"] != "12" || a["thread.id"] != "9" || a["tigris.probe.id"] != "7" {
		t.Errorf("root attributes %v", a)
	}
	if root.Status != nil {
		t.Errorf("root status %v", root.Status)
	}
	if c := otlptest.Attrs(child.Attributes); child.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || c["error.type"] != "_OTHER" || c["tigris.result.size"] != "5" {
		t.Errorf("error span: status %v attributes %v", child.Status, c)
	}
	p := otlptest.Attrs(panicked.Attributes)
	if panicked.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || p["error.type"] != "panic" || p["tigris.parent.missing_levels"] != "1" ||
		len(panicked.Events) != 1 || panicked.Events[0].Name != "exception" || panicked.Events[0].TimeUnixNano != panicked.EndTimeUnixNano ||
		otlptest.Attrs(panicked.Events[0].Attributes)["exception.type"] != "panic" {
		t.Errorf("panic span: status %v attributes %v events %v", panicked.Status, p, panicked.Events)
	}
}

// TestIDs: ids are stable functions of the record, distinct per call.
func TestIDs(t *testing.T) {
	seen := map[uint64]bool{}
	for trace := uint64(1); trace < 100; trace++ {
		for eoi := uint32(0); eoi < 100; eoi++ {
			id := spanID(5, trace, eoi)
			if id == 0 || seen[id] {
				t.Fatalf("span id %x of trace %d eoi %d: zero or repeated", id, trace, eoi)
			}
			seen[id] = true
		}
	}
	if a, b := InstanceID("h", 1), InstanceID("h", 1); a != b || a == InstanceID("h", 2) || len(a) != 36 || a[14] != '5' {
		t.Errorf("instance ids %s %s %s", a, b, InstanceID("h", 2))
	}
}

// BenchmarkAppendSpan is the encoder's cost per span.
func BenchmarkAppendSpan(b *testing.B) {
	h := &writer.Header{Stream: 1}
	st := newStream(h, nil)
	st.define(&writer.ProbeDef{ID: 1, Signature: "example.com/shop.(*Store).Find(int) (string, error)", File: "/src/example.com/shop/store.go", Line: 12})
	it := spanItem{rec: writer.Record{Probe: 1, EOI: 3, ESS: 2, Trace: 77, GID: 12, TIn: 1000, TOut: 2000}, parent: 2, hasParent: true, pe: st.probe(1)}
	var buf []byte
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if len(buf) > 1<<20 {
			buf = buf[:0]
		}
		buf = appendSpan(buf, st, &it)
	}
}

// TestSpanEncodingLinks: a linked trace's root carries one Link whose ids
// are those of the parent trace's call that ran the go statement, and the
// missing levels when that call is an outer one.
func TestSpanEncodingLinks(t *testing.T) {
	h := &writer.Header{Stream: 0xabc}
	st := newStream(h, nil)
	st.define(&writer.ProbeDef{ID: 7, Signature: "example.com/shop.Work(int)"})
	recs := []spanItem{
		{rec: writer.Record{Probe: 7, Trace: 9, GID: 2, TIn: 1000, TOut: 5000}, link: &spanLink{trace: 3, eoi: 4}},
		{rec: writer.Record{Probe: 7, Trace: 10, GID: 3, TIn: 1000, TOut: 5000, Flags: writer.FlagPanic}, link: &spanLink{trace: 3, eoi: 1, missing: 2}},
		{rec: writer.Record{Probe: 7, EOI: 1, ESS: 1, Trace: 10, GID: 3, TIn: 1100, TOut: 1200}, hasParent: true},
	}
	var spans []byte
	for i := range recs {
		recs[i].pe = st.probe(7)
		spans = appendSpan(spans, st, &recs[i])
	}
	head, tail := wrapSpans(st.resource, encodeScope("v1"), len(spans))
	var req tracepb.TracesData
	if err := proto.Unmarshal(append(append(append([]byte(nil), head...), spans...), tail...), &req); err != nil {
		t.Fatal(err)
	}
	got := req.ResourceSpans[0].ScopeSpans[0].Spans
	if len(got) != 3 {
		t.Fatalf("%d spans", len(got))
	}
	for i, want := range []struct {
		eoi     uint32
		missing string
	}{{4, ""}, {1, "2"}} {
		sp := got[i]
		tid, sid := TraceID(0xabc, 3), SpanID(0xabc, 3, want.eoi)
		if len(sp.Links) != 1 || string(sp.Links[0].TraceId) != string(tid[:]) || string(sp.Links[0].SpanId) != string(sid[:]) {
			t.Errorf("span %d: links %v, want one to trace %x span %x", i, sp.Links, tid, sid)
			continue
		}
		if m := otlptest.Attrs(sp.Links[0].Attributes)["tigris.parent.missing_levels"]; m != want.missing || len(sp.Links[0].Attributes) > 1 {
			t.Errorf("span %d: link attributes %v, want missing levels %q", i, sp.Links[0].Attributes, want.missing)
		}
		if ctid := TraceID(0xabc, recs[i].rec.Trace); string(sp.TraceId) != string(ctid[:]) || len(sp.ParentSpanId) != 0 {
			t.Errorf("span %d: trace id %x parent %x; want its own trace %x, no parent", i, sp.TraceId, sp.ParentSpanId, ctid)
		}
	}
	if got[1].Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || len(got[1].Events) != 1 || len(got[2].Links) != 0 {
		t.Errorf("the fields after the link: status %v, events %v; links of an unlinked span %v", got[1].Status, got[1].Events, got[2].Links)
	}
}
