package tracequery

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tigrisgo/tigris/internal/tracegen"
	"github.com/tigrisgo/tigris/runtime/query"
	"github.com/tigrisgo/tigris/runtime/tracecontext"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// rows is a queryout.Printer that keeps the rows of schema 0.
type rows [][]query.Value

func (r *rows) Schema(int, query.Schema) error { return nil }
func (r *rows) Note(string) error              { return nil }
func (r *rows) End(string, map[string]uint64) error {
	return nil
}
func (r *rows) Row(schema int, vals []query.Value) error {
	if schema == 0 {
		*r = append(*r, append([]query.Value(nil), vals...))
	}
	return nil
}

// TestTraceIDColumn: over a file, trace_id is the W3C trace id of the
// remote parent written before a trace's records, "" for a trace without
// one, and WHERE trace_id finds a trace by the id a tracing backend shows.
func TestTraceIDColumn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "joined.tgr")
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	p, _ := tracecontext.Parse("00-" + id + "-00f067aa0ba902b7-01")
	// Trace 1 joined the request's trace; trace 2, on another goroutine
	// and interleaved with it, joined none.
	err := tracegen.WriteJoined(path,
		[]writer.ProbeDef{
			{ID: 1, Package: "example.com/shop", Recv: "Server", Name: "ServeHTTP", Signature: "example.com/shop.(*Server).ServeHTTP(net/http.ResponseWriter, *net/http.Request)"},
			{ID: 2, Package: "example.com/shop", Recv: "Store", Name: "Find", Signature: "example.com/shop.(*Store).Find(int) error"},
		},
		[]writer.Remote{{Trace: 1, GID: 7, TraceID: p.TraceID, SpanID: p.SpanID, Flags: p.Flags, Time: 100}},
		[]writer.Record{
			{Probe: 2, Trace: 1, GID: 7, EOI: 1, ESS: 1, TIn: 110, TOut: 150},
			{Probe: 2, Trace: 2, GID: 8, EOI: 1, ESS: 1, TIn: 120, TOut: 160},
			{Probe: 1, Trace: 1, GID: 7, TIn: 100, TOut: 200},
			{Probe: 1, Trace: 2, GID: 8, TIn: 105, TOut: 210},
		})
	if err != nil {
		t.Fatal(err)
	}
	run := func(text string) rows {
		t.Helper()
		var out rows
		if _, err := Run(context.Background(), []string{path}, text, Options{}, &out); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		return out
	}
	got := run(`SELECT trace, name, trace_id FROM calls`)
	if len(got) != 4 {
		t.Fatalf("rows %v", got)
	}
	for _, r := range got {
		want := ""
		if r[0].I == 1 {
			want = id
		}
		if r[2].T != query.String || r[2].S != want {
			t.Errorf("row %v: trace_id %v, want %q", r, r[2], want)
		}
	}
	got = run(`SELECT name FROM calls WHERE trace_id = '` + id + `' AND depth = 0`)
	if len(got) != 1 || got[0][0].S != "ServeHTTP" {
		t.Fatalf("WHERE trace_id = %q AND depth = 0: rows %v, want the joined trace's root", id, got)
	}
}
