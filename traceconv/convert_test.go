package traceconv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/pprof/profile"

	"github.com/tigrisgo/tigris/runtime/writer"
)

func convert(t *testing.T, f *Format, paths ...string) ([]byte, Report) {
	t.Helper()
	var out bytes.Buffer
	rep, err := f.Convert(&out, openTest(t, paths...), Options{})
	if err != nil {
		t.Fatalf("%s: %v", f.Name, err)
	}
	return out.Bytes(), rep
}

func TestProfileTreeShapeAndTimes(t *testing.T) {
	path := testFile(t)
	out, rep := convert(t, Pprof, path)
	p, err := profile.ParseData(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	if got, want := strings.Join(types, " "), "calls/count inclusive/nanoseconds exclusive/nanoseconds"; got != want {
		t.Errorf("sample types %q; want %q", got, want)
	}
	if p.DefaultSampleType != SampleExclusive {
		t.Errorf("default sample type %q; want %q", p.DefaultSampleType, SampleExclusive)
	}
	// path (root first) → calls/inclusive/exclusive
	got := map[string]string{}
	for _, s := range p.Sample {
		var names []string
		for i := len(s.Location) - 1; i >= 0; i-- {
			names = append(names, shortName(s.Location[i].Line[0].Function.SystemName))
		}
		got[strings.Join(names, ";")] = fmt.Sprint(s.Value)
	}
	want := map[string]string{
		"Handle":                    "[2 1600 800]",
		"Handle;Find":               "[2 700 600]",
		"Handle;Find;decode":        "[1 100 100]",
		"Handle;decode":             "[1 100 100]",
		"(unrecorded calls);decode": "[1 100 100]",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("samples:\n got %v\nwant %v", got, want)
	}
	for _, f := range p.Function {
		if f.SystemName == testProbes[1].Signature && (f.Filename != "/src/shop/store.go" || f.StartLine != 20) {
			t.Errorf("Find is at %s:%d; want /src/shop/store.go:20", f.Filename, f.StartLine)
		}
	}
	if p.TimeNanos != clockWall || p.DurationNanos != 3100 {
		t.Errorf("time %d+%d; want %d+3100", p.TimeNanos, p.DurationNanos, clockWall)
	}
	if rep.Records != 7 || rep.Traces != 3 || rep.Orphans != 1 {
		t.Errorf("report %+v; want 7 records, 3 traces, 1 orphan", rep)
	}
}

// shortName maps the test signatures to their function names.
func shortName(sig string) string {
	for _, d := range testProbes {
		if d.Signature == sig {
			return d.Name
		}
	}
	return sig
}

// xnode is the part of a MethodInvocation the tests look at.
type xnode struct {
	Type           string
	Signature      string
	MethodName     string
	ClassName      string
	PackageName    string
	ParameterTypes []string
	ReturnType     string
	Timestamp      int64
	ExitTime       int64
	ResponseTime   int64
	ExclusiveTime  int64
	ThreadID       uint64
	Labels         []string
	Additional     map[string]any `json:"additionalInformation"`
	Children       []*xnode
}

type xtrace struct {
	TraceID       uint64
	ResponseTime  int64
	ExclusiveTime int64
	Root          struct {
		SubTraceID    uint64
		Location      map[string]string
		ResponseTime  int64
		ExclusiveTime int64
		SubTraces     []any
		Root          *xnode
	}
}

func (n *xnode) shape() string {
	s := fmt.Sprintf("%s(%d/%d", shortName(n.Signature), n.ResponseTime, n.ExclusiveTime)
	if len(n.Labels) > 0 {
		s += " " + strings.Join(n.Labels, ",")
	}
	s += ")"
	if len(n.Children) > 0 {
		var kids []string
		for _, c := range n.Children {
			kids = append(kids, c.shape())
		}
		s += "[" + strings.Join(kids, " ") + "]"
	}
	return s
}

func TestOpenXTrace(t *testing.T) {
	out, rep := convert(t, OpenXTrace, testFile(t))
	var traces []xtrace
	if err := json.Unmarshal(out, &traces); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, out)
	}
	var shapes []string
	for _, tr := range traces {
		shapes = append(shapes, fmt.Sprintf("%d:%s", tr.TraceID, tr.Root.Root.shape()))
	}
	want := []string{
		"1:Handle(1000/300)[Find(300/200 error)[decode(100/100)] Find(400/400)]",
		"2:Handle(600/500 panic)[decode(100/100)]",
		"3:(unrecorded calls)(100/0 synthetic)[decode(100/100)]",
	}
	if !slices.Equal(shapes, want) {
		t.Errorf("traces:\n got %q\nwant %q", shapes, want)
	}
	tr := traces[0]
	if tr.ResponseTime != 1000 || tr.Root.ResponseTime != 1000 || tr.Root.SubTraceID == 0 {
		t.Errorf("trace times %d, subtrace %d (id %d); want 1000", tr.ResponseTime, tr.Root.ResponseTime, tr.Root.SubTraceID)
	}
	if loc := tr.Root.Location; loc["host"] != "h1" || loc["runtimeEnvironment"] != "pid 42" || loc["application"] != "app" {
		t.Errorf("location %v", loc)
	}
	find := tr.Root.Root.Children[0]
	if find.Type != "MethodInvocation" || find.MethodName != "Find" || find.ClassName != "Store" ||
		find.PackageName != "example.com/shop" || !slices.Equal(find.ParameterTypes, []string{"int"}) ||
		find.ReturnType != "(example.com/shop.Owner, error)" || find.ThreadID != 7 {
		t.Errorf("Find invocation %+v", find)
	}
	if want := int64(clockWall+100) / 1e6; find.Timestamp != want {
		t.Errorf("timestamp %d ms; want %d", find.Timestamp, want)
	}
	if a := find.Additional; a["eoi"] != 1.0 || a["ess"] != 1.0 || a["file"] != "/src/shop/store.go:20" {
		t.Errorf("additionalInformation %v", a)
	}
	if n := traces[2].Root.Root.Children[0]; n.Additional["missingLevels"] != 1.0 {
		t.Errorf("orphan's missingLevels %v; want 1", n.Additional["missingLevels"])
	}
	if rep.Traces != 3 {
		t.Errorf("%d traces reported", rep.Traces)
	}
}

type chromeEvent struct {
	Name string
	Ph   string
	Ts   float64
	Dur  float64
	Pid  int
	Tid  uint64
	S    string
	Args map[string]any
}

func TestChrome(t *testing.T) {
	path := testFile(t)
	appendLoss(t, path, 120, 5000, 6000)
	out, rep := convert(t, Chrome, path)
	var doc struct {
		TraceEvents     []chromeEvent
		DisplayTimeUnit string
		OtherData       map[string]any
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, out)
	}
	var complete, names []string
	var lossEv *chromeEvent
	for i, e := range doc.TraceEvents {
		switch e.Ph {
		case "X":
			complete = append(complete, fmt.Sprintf("%s@%.3f+%.3f/%d/%d", shortName(e.Name), e.Ts, e.Dur, e.Pid, e.Tid))
		case "M":
			names = append(names, fmt.Sprintf("%s=%v", e.Name, e.Args["name"]))
		case "i":
			lossEv = &doc.TraceEvents[i]
		}
	}
	wantX := []string{
		"decode@0.150+0.100/42/7", "Find@0.100+0.300/42/7", "Find@0.500+0.400/42/7", "Handle@0.000+1.000/42/7",
		"decode@2.100+0.100/42/8", "Handle@2.000+0.600/42/8", "decode@3.000+0.100/42/9",
	}
	if !slices.Equal(complete, wantX) {
		t.Errorf("complete events:\n got %q\nwant %q", complete, wantX)
	}
	wantM := []string{"process_name=app on h1", "thread_name=goroutine 7", "thread_name=goroutine 8", "thread_name=goroutine 9"}
	if !slices.Equal(names, wantM) {
		t.Errorf("metadata events %q; want %q", names, wantM)
	}
	if lossEv == nil || lossEv.Args["count"] != 120.0 || lossEv.Ts != 5 {
		t.Errorf("loss event %+v; want 120 records at 5µs", lossEv)
	}
	for _, e := range doc.TraceEvents {
		if e.Ph == "X" && shortName(e.Name) == "Find" && e.Ts == 0.1 && e.Args["error"] != true {
			t.Errorf("Find's error flag missing: %v", e.Args)
		}
	}
	if doc.OtherData["lost"] != 120.0 || doc.OtherData["startTime"] != wallString(clockWall) {
		t.Errorf("otherData %v", doc.OtherData)
	}
	if rep.Lost != 120 || rep.Losses != 1 || len(rep.Warnings()) != 1 {
		t.Errorf("report %+v, warnings %q; want 120 lost in one loss item", rep, rep.Warnings())
	}
}

func TestKieker(t *testing.T) {
	out, rep := convert(t, Kieker, testFile(t))
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 8 {
		t.Fatalf("%d lines; want a metadata record and 7 executions:\n%s", len(lines), out)
	}
	// $0;loggingTimestamp (the file's start, now);version;controller;host;experiment;debug;offset;unit;count
	if meta := strings.Split(lines[0], ";"); len(meta) != 10 || meta[0] != "$0" ||
		strings.Join(meta[2:], ";") != KiekerVersion+";tigris-app;h1;1;false;0;NANOSECONDS;0" {
		t.Errorf("metadata line %q", lines[0])
	}
	w := func(ns int64) int64 { return clockWall + ns }
	wantFind := fmt.Sprintf("$1;%d;public example.com/shop.Owner,error example.com/shop.Store.Find(int);<no-session-id>;1;%d;%d;h1;1;1", w(400), w(100), w(400))
	if lines[2] != wantFind {
		t.Errorf("Find line\n got %s\nwant %s", lines[2], wantFind)
	}
	wantDecode := fmt.Sprintf("$1;%d;private void example.com/shop.decode([]byte);<no-session-id>;3;%d;%d;h1;1;1", w(3100), w(3000), w(3100))
	if lines[7] != wantDecode {
		t.Errorf("decode line\n got %s\nwant %s", lines[7], wantDecode)
	}
	for _, l := range lines[1:] {
		if n := strings.Count(l, ";"); n != 9 {
			t.Errorf("%d fields in %q; want 10", n+1, l)
		}
	}
	if rep.Records != 7 {
		t.Errorf("%d records reported", rep.Records)
	}
}

func TestSummarize(t *testing.T) {
	fs, rep, err := Summarize(openTest(t, testFile(t)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := SortStats(fs, "self"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, fmt.Sprintf("%s calls=%d err=%d panic=%d incl=%d/%d/%d/%d/%d excl=%d/%d/%d/%d/%d",
			shortName(f.Signature), f.Calls, f.Errors, f.Panics,
			f.Inclusive.Total, f.Inclusive.Mean, f.Inclusive.P50, f.Inclusive.P95, f.Inclusive.Max,
			f.Exclusive.Total, f.Exclusive.Mean, f.Exclusive.P50, f.Exclusive.P95, f.Exclusive.Max))
	}
	want := []string{
		"Handle calls=2 err=0 panic=1 incl=1600/800/600/1000/1000 excl=800/400/300/500/500",
		"Find calls=2 err=1 panic=0 incl=700/350/300/400/400 excl=600/300/200/400/400",
		"decode calls=3 err=0 panic=0 incl=300/100/100/100/100 excl=300/100/100/100/100",
	}
	if !slices.Equal(got, want) {
		t.Errorf("stats:\n got %q\nwant %q", got, want)
	}
	if rep.Traces != 3 || rep.Records != 7 {
		t.Errorf("report %+v", rep)
	}
}

func TestSortStatsAndTable(t *testing.T) {
	fs, _, err := Summarize(openTest(t, testFile(t)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	order := func() string {
		var s []string
		for _, f := range fs {
			s = append(s, shortName(f.Signature))
		}
		return strings.Join(s, " ")
	}
	for col, want := range map[string]string{
		"calls":    "decode Find Handle", // 3, then 2 and 2 by signature: "….(*Store)" < "….Handle"
		"errors":   "Find Handle decode",
		"max":      "Handle Find decode",
		"self-p50": "Handle Find decode",
		"function": "Find Handle decode",
	} {
		if err := SortStats(fs, col); err != nil {
			t.Fatal(err)
		}
		if got := order(); got != want {
			t.Errorf("sorted by %s: %s; want %s", col, got, want)
		}
	}
	if err := SortStats(fs, "bogus"); err == nil || !strings.Contains(err.Error(), "self-p95") {
		t.Errorf("SortStats(bogus) = %v; want an error listing the columns", err)
	}
	SortStats(fs, "self")
	var b bytes.Buffer
	if err := WriteStatsTable(&b, fs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	head := "CALLS ERRORS PANICS TOTAL MEAN P50 P95 MAX SELF SELF-MEAN SELF-P50 SELF-P95 SELF-MAX FUNCTION"
	if len(lines) != 4 || strings.Join(strings.Fields(lines[0]), " ") != head {
		t.Fatalf("table:\n%s", b.String())
	}
	row := "2 0 1 1.6µs 800ns 600ns 1µs 1µs 800ns 400ns 300ns 500ns 500ns " + testProbes[0].Signature
	if strings.Join(strings.Fields(lines[1]), " ") != row {
		t.Errorf("first row %q; want %q", lines[1], row)
	}
	// Columns are right-aligned by characters, not bytes (µ is two bytes).
	if i, j := utf8.RuneCountInString(lines[0][:strings.Index(lines[0], "MEAN")]), utf8.RuneCountInString(lines[1][:strings.Index(lines[1], "800ns")]); i != j+1 {
		t.Errorf("MEAN column misaligned:\n%s\n%s", lines[0], lines[1])
	}
	b.Reset()
	if err := WriteStatsJSON(&b, fs); err != nil {
		t.Fatal(err)
	}
	var back []FuncStats
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back) != 3 || back[0].Exclusive.Total != 800 {
		t.Errorf("JSON round trip: %v, %+v", err, back)
	}
}

// TestStatsDurations: the table's durations read as everywhere else
// (internal/human): three significant digits, minutes past 100 seconds.
func TestStatsDurations(t *testing.T) {
	fs := []FuncStats{{Signature: "f", Calls: 1, Inclusive: Dist{Total: time_(125_400_000_000)}}}
	var b bytes.Buffer
	if err := WriteStatsTable(&b, fs); err != nil {
		t.Fatal(err)
	}
	if row := strings.Fields(strings.Split(b.String(), "\n")[1]); row[3] != "2m5s" {
		t.Errorf("TOTAL of 125.4 s printed as %q, want 2m5s", row[3])
	}
}

func TestWriteLines(t *testing.T) {
	path := testFile(t)
	appendLoss(t, path, 5, 4000, 4100)
	var text bytes.Buffer
	if _, err := WriteLines(&text, openTest(t, path), false, Options{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(text.String()), "\n")
	kinds := map[string]int{}
	for _, l := range lines {
		kinds[strings.Fields(l)[0]]++
	}
	if kinds["header"] != 1 || kinds["probe"] != 3 || kinds["record"] != 7 || kinds["loss"] != 1 {
		t.Errorf("line kinds %v:\n%s", kinds, text.String())
	}
	wantFind := "record  " + wallString(clockWall+100) + " trace=1 eoi=1 ess=1 g=7 300ns " + testProbes[1].Signature + " [error]"
	if !slices.Contains(lines, wantFind) {
		t.Errorf("no line %q in\n%s", wantFind, text.String())
	}
	if !slices.Contains(lines, "probe   3 example.com/shop.decode([]byte)  /src/shop/codec.go:30") {
		t.Errorf("probe line missing:\n%s", text.String())
	}

	var js bytes.Buffer
	if _, err := WriteLines(&js, openTest(t, path), true, Options{}); err != nil {
		t.Fatal(err)
	}
	var n int
	for _, l := range strings.SplitAfter(js.String(), "\n") { // strings.Lines needs go1.24
		if l == "" {
			continue // after the last line break
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if m["kind"] == "record" && m["eoi"] == 2.0 {
			if m["tin"] != float64(clockWall+150) || m["durationNs"] != 100.0 || m["goroutine"] != 7.0 {
				t.Errorf("decode record %v", m)
			}
		}
		if m["kind"] == "loss" && m["count"] != 5.0 {
			t.Errorf("loss %v", m)
		}
		n++
	}
	if n != len(lines) {
		t.Errorf("%d JSON lines, %d text lines", n, len(lines))
	}
}

// TestWriteLinesClock: the header line names the clock the probes read, as
// the file's header does: nanotime for a writer given nanoseconds, and for
// one given Ticks readings the clock Ticks reads with its rate.
func TestWriteLinesClock(t *testing.T) {
	for _, ticks := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "c.tgr")
		w, err := writer.NewSync(writer.Options{Path: path, TickTimes: ticks})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		want, wantHz := "nanotime", uint64(0)
		if ticks && writer.TickSource() == writer.ClockTSC {
			want, wantHz = "tsc", writer.TickHz()
		}
		var text, js bytes.Buffer
		if _, err := WriteLines(&text, openTest(t, path), false, Options{}); err != nil {
			t.Fatal(err)
		}
		suffix := " clock=" + want
		if wantHz != 0 {
			suffix += "@" + strconv.FormatUint(wantHz, 10) + "Hz"
		}
		if line := strings.TrimSpace(text.String()); !strings.HasPrefix(line, "header  ") || !strings.HasSuffix(line, suffix) {
			t.Errorf("tick times %v: header line %q; want it to end with %q", ticks, line, suffix)
		}
		if _, err := WriteLines(&js, openTest(t, path), true, Options{}); err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(js.Bytes(), &m); err != nil || m["clock"] != want || m["tickHz"] != float64(wantHz) {
			t.Errorf("tick times %v: JSON header %v (%v); want clock %q, tickHz %d", ticks, m, err, want, wantHz)
		}
	}
}

// Damage never fails a conversion: the reader skips what it cannot read, the
// report says so, and everything before and after is converted.
func TestDamagedInput(t *testing.T) {
	path := testFile(t)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A torn tail: half of a second copy of the records' chunk.
	torn := append(slices.Clone(good), good[len(good)-40:len(good)-10]...)
	if err := os.WriteFile(path, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range Formats {
		out, rep := convert(t, f, path)
		if rep.Records != 7 || rep.Gaps != 1 || rep.Torn != 1 || len(out) == 0 {
			t.Errorf("%s: report %+v, %d bytes out; want 7 records and one torn gap", f.Name, rep, len(out))
		}
		if w := strings.Join(rep.Warnings(), "\n"); !strings.Contains(w, "skipped 30 unreadable bytes") || !strings.Contains(w, "crash") {
			t.Errorf("%s: warnings %q", f.Name, w)
		}
	}

	// Not a trace file at all: nothing usable, which callers report as an error.
	junk := path + ".junk"
	os.WriteFile(junk, bytes.Repeat([]byte("not a trace "), 100), 0o644)
	_, rep := convert(t, Chrome, junk)
	if !rep.Empty() || rep.SkippedBytes != 1200 {
		t.Errorf("junk: report %+v; want empty with 1200 bytes skipped", rep)
	}
}

func TestOpenSkipsMissingFiles(t *testing.T) {
	path := testFile(t)
	r, skipped, err := Open([]string{path + ".missing", path})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if len(skipped) != 1 || !os.IsNotExist(skipped[0]) || !strings.Contains(skipped[0].Error(), ".missing") {
		t.Errorf("skipped %v; want the missing file", skipped)
	}
	if _, _, err := Open([]string{path + ".missing"}); err == nil {
		t.Error("Open of only a missing file succeeded")
	}
	if _, _, err := Open([]string{t.TempDir()}); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("Open(dir) = %v; want a directory error", err)
	}
}

// Two processes' files are two streams: trace ids stay apart, probe tables too.
func TestSeveralStreams(t *testing.T) {
	dir := t.TempDir()
	a := writeStream(t, dir, 1, testProbes, testRecords)
	other := []writer.ProbeDef{{ID: 1, Signature: "example.com/other.Run()", Package: "example.com/other", Name: "Run", File: "/o.go", Line: 1}}
	b := writeStream(t, dir, 2, other, []writer.Record{{Probe: 1, Trace: 1, GID: 1, TIn: 10, TOut: 20}})
	out, rep := convert(t, OpenXTrace, a, b)
	var traces []xtrace
	if err := json.Unmarshal(out, &traces); err != nil {
		t.Fatal(err)
	}
	if rep.Streams != 2 || len(traces) != 4 {
		t.Fatalf("%d streams, %d traces; want 2 and 4", rep.Streams, len(traces))
	}
	last := traces[3]
	if last.TraceID != 1+1<<40 || last.Root.Root.Signature != "example.com/other.Run()" || last.Root.Location["runtimeEnvironment"] != "pid 2" {
		t.Errorf("second stream's trace: id %d, %s at %v", last.TraceID, last.Root.Root.Signature, last.Root.Location)
	}
}

// Records of a trace may follow its root in the file (the async writer's per-P
// queues); within Options.Lag they still join their tree.
func TestLateRecordsJoinTheirTree(t *testing.T) {
	recs := []writer.Record{
		{Probe: 1, EOI: 0, ESS: 0, Trace: 1, GID: 1, TIn: 0, TOut: 100},
		{Probe: 3, EOI: 0, ESS: 0, Trace: 2, GID: 2, TIn: 0, TOut: 10},
		{Probe: 2, EOI: 1, ESS: 1, Trace: 1, GID: 1, TIn: 10, TOut: 50}, // late, 2 records after its root
	}
	path := writeStream(t, t.TempDir(), 1, testProbes, recs)
	for _, c := range []struct {
		lag               int
		traces, orphans   int64
		handleExclusiveNs int64
	}{{lag: 4, traces: 2, orphans: 0, handleExclusiveNs: 60}, {lag: 1, traces: 3, orphans: 1, handleExclusiveNs: 100}} {
		fs, rep, err := Summarize(openTest(t, path), Options{Lag: c.lag})
		if err != nil {
			t.Fatal(err)
		}
		SortStats(fs, "function")
		if rep.Traces != c.traces || rep.Orphans != c.orphans || fs[1].Exclusive.Total != time_(c.handleExclusiveNs) {
			t.Errorf("lag %d: %d traces, %d orphans, Handle exclusive %v; want %d, %d, %dns",
				c.lag, rep.Traces, rep.Orphans, fs[1].Exclusive.Total, c.traces, c.orphans, c.handleExclusiveNs)
		}
	}
}

// A trace whose root never comes is built early once MaxPending records are held.
func TestMaxPendingSplitsLongTraces(t *testing.T) {
	var recs []writer.Record
	for i := range 10 {
		recs = append(recs, writer.Record{Probe: 3, EOI: uint32(i + 1), ESS: 1, Trace: 1, GID: 1, TIn: int64(10 * i), TOut: int64(10*i + 5)})
	}
	recs = append(recs, writer.Record{Probe: 1, EOI: 0, ESS: 0, Trace: 1, GID: 1, TIn: 0, TOut: 1000})
	path := writeStream(t, t.TempDir(), 1, testProbes, recs)
	_, rep, err := Summarize(openTest(t, path), Options{MaxPending: 4})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Split == 0 || rep.Traces < 2 || !strings.Contains(strings.Join(rep.Warnings(), "\n"), "built early") {
		t.Errorf("report %+v; want the long trace split", rep)
	}
	_, rep, _ = Summarize(openTest(t, path), Options{})
	if rep.Split != 0 || rep.Traces != 1 {
		t.Errorf("default MaxPending: %+v; want one whole trace", rep)
	}
}

func TestProgress(t *testing.T) {
	var calls []Progress
	_, err := Chrome.Convert(&bytes.Buffer{}, openTest(t, testFile(t)), Options{ProgressEvery: 3, Progress: func(p Progress) { calls = append(calls, p) }})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range calls {
		got = append(got, fmt.Sprint(p.Records, p.Done))
	}
	if want := []string{"3 false", "6 false", "7 true"}; !slices.Equal(got, want) {
		t.Errorf("progress %q; want %q", got, want)
	}
}

func TestFormatByNameAndDefaultOutput(t *testing.T) {
	f, err := FormatByName("PPROF")
	if err != nil || f != Pprof {
		t.Fatalf("FormatByName(PPROF) = %v, %v", f, err)
	}
	if _, err := FormatByName("svg"); err == nil || !strings.Contains(err.Error(), "openxtrace, chrome, pprof, kieker") {
		t.Errorf("FormatByName(svg) = %v", err)
	}
	for f, want := range map[*Format]string{Pprof: "out/app-1.pb.gz", Kieker: "out/app-1-kieker", OpenXTrace: "out/app-1.xtrace.json"} {
		if got := f.DefaultOutput("out/app-1.tgr"); got != want {
			t.Errorf("%s: DefaultOutput = %q; want %q", f.Name, got, want)
		}
	}
}

func time_(ns int64) time.Duration { return time.Duration(ns) }

// TestDamagedFirstChunkKeepsNames: the writer repeats a file's header and
// probe definitions in a second chunk (docs/trace-format.md, "Anchors"), so a
// damaged first chunk costs no function name and no wall time. Before, every
// record became "probe#N".
func TestDamagedFirstChunkKeepsNames(t *testing.T) {
	path := testFile(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[8+12+3] ^= 0xFF // inside the first chunk's payload: the header
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fs, rep, err := Summarize(openTest(t, path), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range fs {
		names = append(names, shortName(f.Signature))
	}
	slices.Sort(names)
	if got := strings.Join(names, " "); got != "Find Handle decode" || rep.Undefined != 0 || rep.Gaps != 1 || rep.Records != 7 {
		t.Errorf("functions %q, %d undefined, %d gaps, %d records; want Find Handle decode, 0, 1, 7", got, rep.Undefined, rep.Gaps, rep.Records)
	}
	out, _ := convert(t, Pprof, path)
	p, err := profile.ParseData(out)
	if err != nil {
		t.Fatal(err)
	}
	if p.TimeNanos != clockWall {
		t.Errorf("profile time %d; want %d (the header's clock, from its second copy)", p.TimeNanos, clockWall)
	}
}
