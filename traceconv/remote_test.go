package traceconv

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/runtime/tracecontext"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// TestWriteLinesRemote: tigris read shows a trace's remote parent, as text
// and as JSON, so a trace id from Jaeger finds tigris's trace.
func TestWriteLinesRemote(t *testing.T) {
	path := filepath.Join(t.TempDir(), "joined.tgr")
	w, err := writer.NewSync(writer.Options{Path: path, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	p, _ := tracecontext.Parse(tp)
	w.Define(writer.ProbeDef{ID: 1, Signature: "example.com/shop.(*Server).ServeHTTP(net/http.ResponseWriter, *net/http.Request)"})
	m := writer.Remote{Trace: 1, GID: 7, TraceID: p.TraceID, SpanID: p.SpanID, Flags: p.Flags, Time: 100}
	rr := m.Record()
	w.Write(&rr)
	w.Write(&writer.Record{Probe: 1, Trace: 1, GID: 7, TIn: 100, TOut: 200})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var text, js bytes.Buffer
	if _, err := WriteLines(&text, openTest(t, path), false, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteLines(&js, openTest(t, path), true, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "remote  trace=1 g=7 joined traceparent "+tp+" at ") {
		t.Errorf("text lines:\n%s", text.String())
	}
	if !strings.Contains(js.String(), `"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","parentSpanId":"00f067aa0ba902b7","sampled":true`) {
		t.Errorf("JSON lines:\n%s", js.String())
	}
}
