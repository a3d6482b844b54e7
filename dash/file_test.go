package dash

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/internal/human"
	"github.com/tigrisgo/tigris/internal/tracegen"
	"github.com/tigrisgo/tigris/runtime/settings"
	"github.com/tigrisgo/tigris/runtime/writer"
	"github.com/tigrisgo/tigris/traceconv"
)

// shop is a small trace: three call trees,
//
//	trace 1: Handle 0–1000 { Find 100–400 error { decode 150–250 }, Find 500–900 }
//	trace 2: Handle 2000–2600 panic { decode 2100–2200 }
//	trace 3: decode 3000–3100, its caller not recorded
var (
	shopDefs = []writer.ProbeDef{
		{ID: 1, Signature: "example.com/shop.Handle(string) error", File: "handle.go", Line: 10},
		{ID: 2, Signature: "example.com/shop.(*Store).Find(int) ([]string, error)", File: "store.go", Line: 20},
		{ID: 3, Signature: "example.com/shop.decode([]byte)", File: "codec.go", Line: 30},
	}
	shopRecords = []writer.Record{
		{Probe: 3, EOI: 2, ESS: 2, Trace: 1, GID: 7, TIn: 150, TOut: 250},
		{Probe: 2, EOI: 1, ESS: 1, Trace: 1, GID: 7, TIn: 100, TOut: 400, Flags: writer.FlagError},
		{Probe: 2, EOI: 3, ESS: 1, Trace: 1, GID: 7, TIn: 500, TOut: 900, Flags: writer.FlagSize, Size: 3},
		{Probe: 1, EOI: 0, ESS: 0, Trace: 1, GID: 7, TIn: 0, TOut: 1000},
		{Probe: 3, EOI: 1, ESS: 1, Trace: 2, GID: 8, TIn: 2100, TOut: 2200},
		{Probe: 1, EOI: 0, ESS: 0, Trace: 2, GID: 8, TIn: 2000, TOut: 2600, Flags: writer.FlagPanic},
		{Probe: 3, EOI: 1, ESS: 1, Trace: 3, GID: 9, TIn: 3000, TOut: 3100},
	}
)

func writeTrace(t testing.TB, defs []writer.ProbeDef, recs []writer.Record) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shop.tgr")
	w, err := writer.NewSync(writer.Options{Path: path, Host: "h", PID: 42, Binary: "/srv/shop", Clock: writer.ClockBase{Wall: 1_700_000_000e9}})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		w.Define(d)
	}
	for i := range recs {
		w.Write(&recs[i])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFile(t *testing.T) {
	a := settings.Default().Analysis
	a.Criteria = "most frequent"
	f, err := OpenFile(writeTrace(t, shopDefs, shopRecords), FileOptions{Analysis: a})
	if err != nil {
		t.Fatal(err)
	}
	v := f.View(context.Background(), Query{Sort: "calls"})
	if v.Live || v.Functions.Count != 3 || v.Functions.Controls.Enabled || v.Functions.Controls.Why == "" {
		t.Fatalf("view: live %v, %d functions, controls %+v", v.Live, v.Functions.Count, v.Functions.Controls)
	}
	want := map[string][3]uint64{ // calls, errors, panics
		shopDefs[0].Signature: {2, 0, 1},
		shopDefs[1].Signature: {2, 1, 0},
		shopDefs[2].Signature: {3, 0, 0},
	}
	for _, r := range v.Functions.Rows {
		w := want[r.Signature]
		if r.Calls != w[0] || r.Errors != w[1] || r.Panics != w[2] || r.Dist == nil || r.Dist.N != r.Calls {
			t.Errorf("%s: calls %d errors %d panics %d dist %+v; want %v", r.Signature, r.Calls, r.Errors, r.Panics, r.Dist, w)
		}
	}
	if r := v.Functions.Rows[0]; r.Signature != shopDefs[2].Signature || r.Dist.Max != 100 || r.MeanNs != 100 {
		t.Errorf("first by calls: %s, max %v, mean %v; want decode, 100ns", r.Signature, r.Dist.Max, r.MeanNs)
	}
	if r := findRow(v, shopDefs[0].Signature); r.TotalNs != 1600 || r.Dist.P50 != 600 || r.Dist.Max != 1000 {
		t.Errorf("Handle: total %v, p50 %v, max %v; want 1600, 600, 1000", r.TotalNs, r.Dist.P50, r.Dist.Max)
	}

	if n := len(v.Traces.List); n != 3 || v.Traces.List[0].ID != 1 || v.Traces.Shown == nil || v.Traces.Shown.ID != 1 || len(v.Traces.Shown.Nodes) != 4 {
		t.Fatalf("traces: %+v, shown %+v", v.Traces.List, v.Traces.Shown)
	}
	if n := v.Traces.Shown.Nodes[2]; n.Depth != 2 || n.Parent != 1 || n.StartNs != 150 || n.DurNs != 100 {
		t.Errorf("trace 1's decode: %+v", n)
	}
	if d := f.View(context.Background(), Query{Trace: 3}).Traces.Shown; d == nil || d.ID != 3 || d.Nodes[0].Missing != 1 {
		t.Errorf("trace 3 shown: %+v", d)
	}

	an := v.Analyzer
	if an.Err != "" || an.Last == nil || len(an.Last.Selected) != 1 || an.Last.Selected[0] != shopDefs[2].Signature {
		t.Fatalf("analysis of the whole run: %+v", an)
	}
	if p := an.Last.Partitions[0]; p.Criterion != "frequent" || len(p.Members[4]) != 1 || p.Members[4][0] != shopDefs[2].Signature {
		t.Errorf("frequent's groups: %+v", p)
	}
	if len(an.Cycles) == 0 || len(an.Timeline.Cycles) != len(an.Cycles) {
		t.Errorf("%d replayed cycles, timeline %+v", len(an.Cycles), an.Timeline)
	}
	if v.Writer.Written != 7 || v.Writer.Dropped != 0 {
		t.Errorf("writer: %+v", v.Writer)
	}
	if fl := f.Act(context.Background(), Action{Kind: "mode"}); !fl.Err {
		t.Error("a trace file was switched")
	}
}

func findRow(v *View, sig string) FuncRow {
	for _, r := range v.Functions.Rows {
		if r.Signature == sig {
			return r
		}
	}
	return FuncRow{}
}

// TestFileDownloads: the whole file and one call tree, converted by
// traceconv as the page's links ask.
func TestFileDownloads(t *testing.T) {
	f, err := OpenFile(writeTrace(t, shopDefs, shopRecords), FileOptions{Analysis: settings.Default().Analysis})
	if err != nil {
		t.Fatal(err)
	}
	base := dashOf(t, f, Options{})
	resp, body := get(t, base+"/download?format=chrome&trace=1")
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Disposition"), `filename=shop-trace-1.chrome.json`) {
		t.Fatalf("download of trace 1: %s %v", resp.Status, resp.Header)
	}
	var ev struct {
		TraceEvents []struct {
			Ph   string
			Args map[string]any
		}
	}
	if err := json.Unmarshal([]byte(body), &ev); err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, e := range ev.TraceEvents {
		if e.Ph == "X" {
			calls++
			if e.Args["trace"] != float64(1) {
				t.Errorf("an event of trace %v in trace 1's download", e.Args["trace"])
			}
		}
	}
	if calls != 4 {
		t.Errorf("%d calls in trace 1's download, want 4", calls)
	}
	resp, body = get(t, base+"/download?format=pprof")
	if resp.StatusCode != 200 || !strings.HasPrefix(body, "\x1f\x8b") {
		t.Errorf("pprof of the file: %s, %d bytes", resp.Status, len(body))
	}
	for _, bad := range []string{"/download?format=kieker", "/download?format=chrome&trace=x", "/download?format=chrome&trace=99"} {
		if resp, _ := get(t, base+bad); resp.StatusCode < 400 {
			t.Errorf("GET %s: %s", bad, resp.Status)
		}
	}
	resp, page := get(t, base+"/")
	if resp.StatusCode != 200 || !strings.Contains(page, "a trace file is a record of a finished run") || strings.Contains(page, `class="mode-btn`) {
		t.Errorf("the file's page: %s; controls shown or not explained", resp.Status)
	}
}

// TestAggWiden: a run longer than the buckets merges them in pairs and
// keeps every call.
func TestAggWiden(t *testing.T) {
	var recs []writer.Record
	for i := range 1000 {
		t0 := int64(i) * int64(50*time.Millisecond)
		recs = append(recs, writer.Record{Probe: 1, Trace: uint64(i + 1), GID: 1, TIn: t0, TOut: t0 + 1000})
	}
	f, err := OpenFile(writeTrace(t, shopDefs[:1], recs), FileOptions{Analysis: settings.Default().Analysis})
	if err != nil {
		t.Fatal(err)
	}
	a := f.agg
	if a.used > maxSeries || a.width <= firstWidth {
		t.Errorf("%d buckets of %v for 50 s", a.used, time.Duration(a.width))
	}
	var n uint64
	for _, b := range a.funcs[0].series {
		n += b.time.n
	}
	if n != 1000 {
		t.Errorf("the buckets hold %d calls, want 1000", n)
	}
}

// TestFileMatchesStats: the table agrees with tigris stats on a bigger
// trace.
func TestFileMatchesStats(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gen.tgr")
	if err := tracegen.Write(path, 50_000); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(path, FileOptions{Analysis: settings.Default().Analysis})
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := traceconv.Open([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fs, _, err := traceconv.Summarize(r, traceconv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := f.View(context.Background(), Query{All: true})
	if len(fs) != v.Functions.Count {
		t.Fatalf("%d functions on the page, tigris stats has %d", v.Functions.Count, len(fs))
	}
	for _, s := range fs {
		r := findRow(v, s.Signature)
		p95 := float64(s.Inclusive.P95)
		if r.Calls != uint64(s.Calls) || r.TotalNs != float64(s.Inclusive.Total) || r.Dist.P95 < p95*0.96 || r.Dist.P95 > p95*1.04 {
			t.Errorf("%s: calls %d total %v p95 %v; tigris stats: %d %v %v", s.Signature, r.Calls, r.TotalNs, r.Dist.P95, s.Calls, s.Inclusive.Total, p95)
		}
	}
}

// bigTrace writes the million-record trace of the benchmarks once.
func bigTrace(b *testing.B) string {
	path := filepath.Join(b.TempDir(), "big.tgr")
	if err := tracegen.Write(path, 1_000_000); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkOpenFile1M is tigris dash's start on a trace of a million
// records: reading and summarizing it, once.
func BenchmarkOpenFile1M(b *testing.B) {
	path := bigTrace(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := OpenFile(path, FileOptions{Analysis: settings.Default().Analysis})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(f.Records())/f.Took().Seconds(), "records/s")
	}
}

// BenchmarkPage1M is one page load of that trace: the view and its HTML.
func BenchmarkPage1M(b *testing.B) {
	f, err := OpenFile(bigTrace(b), FileOptions{Analysis: settings.Default().Analysis})
	if err != nil {
		b.Fatal(err)
	}
	srv := NewServer(f, &fakeAddr{}, Options{})
	var size int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
		size = rec.Body.Len()
		io.Copy(io.Discard, bytes.NewReader(rec.Body.Bytes()))
	}
	b.ReportMetric(float64(size), "page-bytes")
}

type fakeAddr struct{}

func (fakeAddr) Network() string { return "tcp" }
func (fakeAddr) String() string  { return "example.com:80" }

// TestFileConcurrentPages: pages of one file render at once (the race
// detector checks that they share the summary read-only).
func TestFileConcurrentPages(t *testing.T) {
	f, err := OpenFile(writeTrace(t, shopDefs, shopRecords), FileOptions{Analysis: settings.Default().Analysis})
	if err != nil {
		t.Fatal(err)
	}
	base := dashOf(t, f, Options{})
	done := make(chan string)
	for i := range 8 {
		go func() {
			resp, err := http.Get(base + "/?sort=p99&trace=" + strconv.Itoa(1+i%3))
			if err != nil {
				done <- err.Error()
				return
			}
			resp.Body.Close()
			done <- resp.Status
		}()
	}
	for range 8 {
		if s := <-done; s != "200 OK" {
			t.Error(s)
		}
	}
}

// TestFileWindowsFromDuration: the sparklines' window is chosen from the
// run's span, a round width giving at most 60 windows and about 30 at least,
// however the calls come: a 352 ms run that is one call tree (its calls end
// before its root, which the reader may give first) gets 36 windows of 10ms,
// not 2. Every call stays in the windows, and the page says the width.
func TestFileWindowsFromDuration(t *testing.T) {
	oneTree := func(span, step time.Duration) []writer.Record {
		var recs []writer.Record
		for i := int64(1); i*int64(step) < int64(span); i++ {
			t0 := i * int64(step)
			recs = append(recs, writer.Record{Probe: 2, EOI: uint32(i), ESS: 1, Trace: 1, GID: 1, TIn: t0, TOut: t0 + int64(step)/2})
		}
		return append(recs, writer.Record{Probe: 1, EOI: 0, ESS: 0, Trace: 1, GID: 1, TIn: 0, TOut: int64(span)})
	}
	manyTrees := func(span, step time.Duration) []writer.Record {
		var recs []writer.Record
		for i := int64(0); i*int64(step) < int64(span); i++ {
			t0 := i * int64(step)
			recs = append(recs, writer.Record{Probe: 1, Trace: uint64(i + 1), GID: 1, TIn: t0, TOut: t0 + int64(step)/2})
		}
		return recs
	}
	round := map[int64]bool{}
	for p := int64(1); p <= 1e12; p *= 10 {
		round[p], round[2*p], round[5*p] = true, true, true
	}
	for _, c := range []struct {
		name  string
		recs  []writer.Record
		width time.Duration // 0: any round width
	}{
		{"352ms, one tree", oneTree(352*time.Millisecond, time.Millisecond), 10 * time.Millisecond},
		{"352ms, many trees", manyTrees(352*time.Millisecond, time.Millisecond), 10 * time.Millisecond},
		{"3.1µs", manyTrees(3100*time.Nanosecond, 100*time.Nanosecond), 100 * time.Nanosecond},
		{"50s", manyTrees(50*time.Second, 50*time.Millisecond), time.Second},
		{"2h, one tree", oneTree(2*time.Hour, time.Second), 0},
		{"1.23s", manyTrees(1230*time.Millisecond, 10*time.Millisecond), 0},
	} {
		f, err := OpenFile(writeTrace(t, shopDefs[:2], c.recs), FileOptions{Analysis: settings.Default().Analysis})
		if err != nil {
			t.Fatal(err)
		}
		a := f.agg
		if a.used < 24 || a.used > maxSeries || !round[a.width] || c.width != 0 && a.width != int64(c.width) {
			t.Errorf("%s: %d windows of %v; want 24 to %d of a round width (%v)", c.name, a.used, time.Duration(a.width), maxSeries, c.width)
		}
		var n uint64
		for _, fa := range a.funcs {
			for _, b := range fa.series {
				n += b.time.n
			}
		}
		if n != uint64(len(c.recs)) {
			t.Errorf("%s: the windows hold %d calls, want %d", c.name, n, len(c.recs))
		}
		v := f.View(context.Background(), Query{})
		want := fmt.Sprintf("calls per %s window of the run: %d windows", human.Duration(time.Duration(a.width)), a.used)
		if !strings.Contains(v.Functions.Series, want) {
			t.Errorf("%s: the page says %q, want it to say %q", c.name, v.Functions.Series, want)
		}
		if r := v.Functions.Rows[0]; len(r.Series) != a.used {
			t.Errorf("%s: a sparkline of %d points for %d windows", c.name, len(r.Series), a.used)
		}
	}
}
