package traceconv

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/internal/tracegen"
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

// TestStatsRemote: tigris stats names the request trace of each function's
// slowest call when traces joined request traces, and keeps only the traces
// of one request trace with Options.TraceID.
func TestStatsRemote(t *testing.T) {
	path := filepath.Join(t.TempDir(), "joined.tgr")
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	p, _ := tracecontext.Parse("00-" + id + "-00f067aa0ba902b7-01")
	// Trace 1 joined the request trace and holds Find's slowest call;
	// trace 2 joined none; trace 3 (hash only) joined none.
	err := tracegen.WriteJoined(path,
		[]writer.ProbeDef{{ID: 1, Signature: "example.com/shop.(*Store).Find(int) error"}, {ID: 2, Signature: "example.com/shop.hash(string) uint64"}},
		[]writer.Remote{{Trace: 1, GID: 7, TraceID: p.TraceID, SpanID: p.SpanID, Flags: p.Flags, Time: 100}},
		[]writer.Record{
			{Probe: 1, Trace: 1, GID: 7, TIn: 100, TOut: 900},
			{Probe: 1, Trace: 2, GID: 8, TIn: 100, TOut: 200},
			{Probe: 2, Trace: 3, GID: 8, TIn: 300, TOut: 400},
		})
	if err != nil {
		t.Fatal(err)
	}
	fs, _, err := Summarize(openTest(t, path), Options{})
	if err != nil {
		t.Fatal(err)
	}
	SortStats(fs, "function")
	if len(fs) != 2 || fs[0].Calls != 2 || fs[0].MaxTraceID != id || fs[1].MaxTraceID != "" {
		t.Fatalf("stats %+v", fs)
	}
	var table bytes.Buffer
	if err := WriteStatsTable(&table, fs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(table.String(), "\n")
	if !strings.Contains(lines[0], "MAX-TRACE-ID") || !strings.Contains(lines[1], "  "+id+"  example.com/shop.(*Store).Find") || !strings.Contains(lines[2], "  -  example.com/shop.hash") {
		t.Errorf("table:\n%s", table.String())
	}
	tid, err := ParseTraceID(id)
	if err != nil {
		t.Fatal(err)
	}
	j, err := FindJoined(openTest(t, path), tid)
	if err != nil {
		t.Fatal(err)
	}
	fs, _, err = Summarize(openTest(t, path), Options{Joined: j})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].Calls != 1 || fs[0].Inclusive.Max != 800 {
		t.Fatalf("stats of request trace %s: %+v, want trace 1's call of Find", id, fs)
	}
	for _, bad := range []string{"", "4bf92f", "00000000000000000000000000000000", "4bf92f3577b34da6a3ce929d0e0e47zz"} {
		if _, err := ParseTraceID(bad); err == nil {
			t.Errorf("ParseTraceID(%q) accepted", bad)
		}
	}
}

// TestJoinedInterleaved: the asynchronous writer drains one ring per P, so
// records of a trace whose goroutine changed P reach the file before the
// trace's remote parent, at any distance (trace 7's comes after every
// record, further than Options.Lag). stats and read with Options.Joined
// still find all of a joined trace's calls, by an id in either case.
func TestJoinedInterleaved(t *testing.T) {
	rs := tracegen.Concurrent(600, 100, 4, 3)
	const far = 7
	rs.DelayRemote(far)
	path := filepath.Join(t.TempDir(), "rings.tgr")
	if err := rs.Write(path); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for trace, id := range rs.IDs {
		if trace != far && checked > 20 {
			continue
		}
		checked++
		tid, err := ParseTraceID(strings.ToUpper(tracecontext.FormatTraceID(id)))
		if err != nil || tid != id {
			t.Fatalf("ParseTraceID of the upper-case id: %x, %v", tid, err)
		}
		j, err := FindJoined(openTest(t, path), tid)
		if err != nil || j.Len() != 1 {
			t.Fatalf("FindJoined(%x): %d traces, %v", id, j.Len(), err)
		}
		opt := Options{Joined: j, Lag: 16}
		fs, _, err := Summarize(openTest(t, path), opt)
		if err != nil {
			t.Fatal(err)
		}
		calls := 0
		for _, f := range fs {
			calls += int(f.Calls)
		}
		if calls != rs.Records[trace] {
			t.Errorf("stats of trace %d's request trace: %d calls, want %d", trace, calls, rs.Records[trace])
		}
		var lines bytes.Buffer
		if _, err := WriteLines(&lines, openTest(t, path), false, opt); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(" trace=%d ", trace)
		if n := strings.Count(lines.String(), "record  "); n != rs.Records[trace] || strings.Count(lines.String(), want) != n+1 || !strings.Contains(lines.String(), "remote  trace=") {
			t.Errorf("read of trace %d's request trace: %d records, want %d and the remote parent:\n%s", trace, n, rs.Records[trace], lines.String())
		}
	}
}
