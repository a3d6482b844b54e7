package evaluation

import (
	"bytes"
	"context"
	"encoding/hex"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/export/otlptest"
	"github.com/tigrisgo/tigris/internal/tracegen"
	"github.com/tigrisgo/tigris/runtime/tracecontext"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// TestJoinedTraces: each simulated request gets a traceparent of its own; the
// trace file's remote parents find their requests, the trace with the most
// calls is shown in call order under its client span, and the client spans
// reach the Collector as petclinic-load's, in the requests' traces.
func TestJoinedTraces(t *testing.T) {
	var spans clientSpans
	var parents []tracecontext.Parent
	for _, endpoint := range []string{"GET /api/owners/{id}", "GET /api/vets", "GET /api/pettypes"} {
		req := httptest.NewRequest("GET", "/", nil)
		done := spans.trace(req, endpoint)
		p, ok := tracecontext.Parse(req.Header.Get("Traceparent"))
		if !ok || !p.Sampled() || done == nil {
			t.Fatalf("traceparent %q", req.Header.Get("Traceparent"))
		}
		done(200)
		parents = append(parents, p)
	}
	if parents[0].TraceID == parents[1].TraceID {
		t.Fatal("two requests in one trace")
	}

	path := filepath.Join(t.TempDir(), "petclinic.tgr")
	// Trace 1 joined the first request (two calls), trace 2 the second
	// (one call), trace 3 a request the demo does not know, trace 4 none.
	var remotes []writer.Remote
	for i, p := range []tracecontext.Parent{parents[0], parents[1], {TraceID: [16]byte{9}, SpanID: [8]byte{9}, Flags: 1}} {
		remotes = append(remotes, writer.Remote{Trace: uint64(i + 1), GID: 7, TraceID: p.TraceID, SpanID: p.SpanID, Flags: 1, Time: 100})
	}
	err := tracegen.WriteJoined(path,
		[]writer.ProbeDef{
			{ID: 1, Signature: "github.com/tigrisgo/tigris/examples/petclinic/internal/service.(*ClinicService).FindOwnerByID(context.Context, int64) (model.Owner, error)"},
			{ID: 2, Signature: "github.com/tigrisgo/tigris/examples/petclinic/internal/repository.(*Owners).Find(context.Context, int64) (model.Owner, error)"},
		},
		remotes,
		[]writer.Record{
			{Probe: 2, Trace: 1, GID: 7, EOI: 1, ESS: 1, TIn: 110, TOut: 150},
			{Probe: 1, Trace: 1, GID: 7, EOI: 0, ESS: 0, TIn: 100, TOut: 200},
			{Probe: 1, Trace: 2, GID: 8, TIn: 100, TOut: 200},
			{Probe: 1, Trace: 3, GID: 9, TIn: 100, TOut: 200},
			{Probe: 1, Trace: 4, GID: 9, TIn: 300, TOut: 400},
		})
	if err != nil {
		t.Fatal(err)
	}
	joined, top, calls, err := joinedTraces(path, &spans)
	if err != nil {
		t.Fatal(err)
	}
	if len(joined) != 2 || top == nil || top.parent != parents[0] || len(calls) != 2 ||
		!strings.Contains(calls[0].name, "FindOwnerByID") || calls[1].depth != 1 {
		t.Fatalf("joined %d, top %+v, calls %+v", len(joined), top, calls)
	}
	var out bytes.Buffer
	printJoinedTrace(&out, len(joined), top, calls)
	for _, want := range []string{
		"trace " + tracecontext.FormatTraceID(parents[0].TraceID),
		"GET /api/owners/{id}  [petclinic-load, client span " + hex.EncodeToString(parents[0].SpanID[:]) + ", status 200]",
		"    service.(*ClinicService).FindOwnerByID  [petclinic, tigris]",
		"      repository.(*Owners).Find  [petclinic, tigris]",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the demo shows\n%s\nwithout %q", out.String(), want)
		}
	}

	recv := otlptest.New(t)
	if err := sendClientSpans(context.Background(), recv.URL, joined); err != nil {
		t.Fatal(err)
	}
	got := recv.Spans()
	for _, p := range parents[:2] {
		sp, ok := got[otlptest.Key(p.TraceID[:], p.SpanID[:])]
		if !ok || sp.Resource["service.name"] != "petclinic-load" || len(sp.ParentSpanId) != 0 {
			t.Errorf("client span of %s: %+v", p, sp)
		}
	}
	if len(got) != 2 {
		t.Errorf("%d spans received, want the 2 joined requests'", len(got))
	}
}

// TestClientSpansBounded: the demo keeps the latest maxClientSpans requests.
func TestClientSpansBounded(t *testing.T) {
	var spans clientSpans
	var first, last tracecontext.Parent
	for i := 0; i < maxClientSpans+10; i++ {
		req := httptest.NewRequest("GET", "/", nil)
		done := spans.trace(req, "GET /api/vets")
		done(200)
		p, _ := tracecontext.Parse(req.Header.Get("Traceparent"))
		if i == 0 {
			first = p
		}
		last = p
	}
	if spans.of(first.TraceID) != nil || spans.of(last.TraceID) == nil || len(spans.byTrace) != maxClientSpans {
		t.Fatalf("%d requests kept; the first kept %v, the last %v", len(spans.byTrace), spans.of(first.TraceID) != nil, spans.of(last.TraceID) != nil)
	}
}
