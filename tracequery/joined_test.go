package tracequery

import (
	"context"
	"path/filepath"
	"strings"
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

// queryRows runs text over the file at path and returns its rows.
func queryRows(t *testing.T, path, text string) rows {
	t.Helper()
	var out rows
	if _, err := Run(context.Background(), []string{path}, text, Options{}, &out); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return out
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
	run := func(text string) rows { t.Helper(); return queryRows(t, path, text) }
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

// TestTraceIDInterleaved: the asynchronous writer drains one ring per P, so
// records of a trace whose goroutine changed P reach the file before the
// trace's remote parent, at any distance. Every record of a joined trace
// still carries its trace_id, WHERE trace_id finds all of a trace's calls,
// whatever the case of the id, and a malformed id is an error.
func TestTraceIDInterleaved(t *testing.T) {
	rs := tracegen.Concurrent(600, 100, 4, 1)
	const far = 7 // its remote parent comes after every record
	rs.DelayRemote(far)
	t.Logf("%d of %d joined traces have %d records before their remote parent", rs.EarlyTraces, len(rs.IDs), rs.Early)
	if rs.EarlyTraces < 30 {
		t.Fatalf("only %d traces have records before their remote parent; the test needs many", rs.EarlyTraces)
	}
	path := filepath.Join(t.TempDir(), "rings.tgr")
	if err := rs.Write(path); err != nil {
		t.Fatal(err)
	}
	run := func(text string) rows { t.Helper(); return queryRows(t, path, text) }
	got := run(`SELECT trace, trace_id FROM calls`)
	if len(got) != 2400 {
		t.Fatalf("%d rows, want 2,400", len(got))
	}
	wrong := map[int64]bool{}
	for _, r := range got {
		want := ""
		if id, ok := rs.IDs[uint64(r[0].I)]; ok {
			want = tracecontext.FormatTraceID(id)
		}
		if r[1].S != want {
			wrong[r[0].I] = true
		}
	}
	if len(wrong) > 0 {
		t.Errorf("%d of %d joined traces have calls with a wrong trace_id (%d traces have records before their remote parent)", len(wrong), len(rs.IDs), rs.EarlyTraces)
	}
	id := strings.ToUpper(tracecontext.FormatTraceID(rs.IDs[far]))
	got = run(`SELECT trace FROM calls WHERE trace_id = '` + id + `'`)
	if len(got) != 4 {
		t.Errorf("WHERE trace_id = '%s' (upper case): %d rows, want trace %d's 4", id, len(got), far)
	}
	got = run(`SELECT trace FROM calls WHERE trace_id IN ('` + id + `', '')`)
	if len(got) != 1200+4 {
		t.Errorf("WHERE trace_id IN ('%s', ''): %d rows, want 1,204", id, len(got))
	}
	got = run(`SELECT trace FROM calls WHERE trace_id LIKE '4BF92F3577B34DA6%'`)
	if len(got) != 1200 {
		t.Errorf("WHERE trace_id LIKE '4BF92F3577B34DA6%%': %d rows, want the joined traces' 1,200", len(got))
	}
	for _, bad := range []string{"4bf92f35", "4bf92f3577b34da6a3ce929d0e0e47zz", "00000000000000000000000000000000"} {
		_, err := Run(context.Background(), []string{path}, `SELECT trace FROM calls WHERE trace_id = '`+bad+`'`, Options{}, &rows{})
		if err == nil || !strings.Contains(err.Error(), "query:1:42: comparing trace_id with '"+bad+"': ") {
			t.Errorf("trace_id = '%s': %v, want an error at the literal", bad, err)
		}
	}
}

// TestTraceIDBound: past Options.MaxJoined joined traces, the query says how
// many traces keep no trace_id rather than answering as if they joined none.
func TestTraceIDBound(t *testing.T) {
	rs := tracegen.Concurrent(40, 10, 2, 2)
	path := filepath.Join(t.TempDir(), "rings.tgr")
	if err := rs.Write(path); err != nil {
		t.Fatal(err)
	}
	var out rows
	sum, err := Run(context.Background(), []string{path}, `SELECT trace, trace_id FROM calls`, Options{MaxJoined: 5}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if sum.JoinedDropped != 15 || stats(sum)["traceIdsNotKept"] != 15 {
		t.Errorf("JoinedDropped %d, stats %v; want 15 of the 20 joined traces", sum.JoinedDropped, stats(sum))
	}
	// Without trace_id in the query nothing is kept, nothing is dropped.
	sum, err = Run(context.Background(), []string{path}, `SELECT trace FROM calls`, Options{MaxJoined: 5}, &out)
	if err != nil || sum.JoinedDropped != 0 {
		t.Errorf("a query without trace_id: %v, JoinedDropped %d", err, sum.JoinedDropped)
	}
}

// TestTraceIDPerStream: each process numbers its traces from 1, so over the
// files of two processes only the trace of the one that joined carries the
// trace id.
func TestTraceIDPerStream(t *testing.T) {
	dir := t.TempDir()
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	p, _ := tracecontext.Parse("00-" + id + "-00f067aa0ba902b7-01")
	defs := []writer.ProbeDef{{ID: 1, Package: "example.com/shop", Name: "Serve", Signature: "example.com/shop.Serve()"}}
	joinedPath, otherPath := filepath.Join(dir, "a.tgr"), filepath.Join(dir, "b.tgr")
	err := tracegen.WriteJoined(joinedPath, defs,
		[]writer.Remote{{Trace: 1, GID: 7, TraceID: p.TraceID, SpanID: p.SpanID, Flags: p.Flags, Time: 100}},
		[]writer.Record{{Probe: 1, Trace: 1, GID: 7, TIn: 100, TOut: 200}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tracegen.WriteJoined(otherPath, defs, nil, []writer.Record{{Probe: 1, Trace: 1, GID: 9, TIn: 300, TOut: 400}}); err != nil {
		t.Fatal(err)
	}
	var out rows
	if _, err := Run(context.Background(), []string{joinedPath, otherPath}, `SELECT goroutine, trace_id FROM calls`, Options{}, &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 {
		t.Fatalf("rows %v", out)
	}
	for _, r := range out {
		if want := map[int64]string{7: id, 9: ""}[r[0].I]; r[1].S != want {
			t.Errorf("goroutine %d: trace_id %q, want %q", r[0].I, r[1].S, want)
		}
	}
}
