package traceconv

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// unfinishedRecords is a trace whose program exited at 5000 while Handle and
// the Find it called were running (unfinished), after a decode and a first
// Find had returned:
//
//	trace 4, goroutine 1: Handle 4000– { decode 4100–4200, Find 4300–4400, Find 4500– }
var unfinishedRecords = []writer.Record{
	{Probe: 3, EOI: 1, ESS: 1, Trace: 4, GID: 1, TIn: 4100, TOut: 4200},
	{Probe: 2, EOI: 2, ESS: 1, Trace: 4, GID: 1, TIn: 4300, TOut: 4400},
	{Probe: 1, EOI: 0, ESS: 0, Trace: 4, GID: 1, TIn: 4000, TOut: 5000, Flags: writer.FlagUnfinished},
	{Probe: 2, EOI: 3, ESS: 1, Trace: 4, GID: 1, TIn: 4500, TOut: 5000, Flags: writer.FlagUnfinished},
}

// TestSummarizeLeavesUnfinishedOut: stats count unfinished calls apart from
// calls and keep them out of every duration; the report counts them apart
// from lost records and says so.
func TestSummarizeLeavesUnfinishedOut(t *testing.T) {
	path := writeStream(t, t.TempDir(), 42, testProbes, unfinishedRecords)
	fs, rep, err := Summarize(openTest(t, path), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]FuncStats{}
	for _, f := range fs {
		got[shortName(f.Signature)] = f
	}
	if h := got["Handle"]; h.Calls != 0 || h.Unfinished != 1 || h.Inclusive != (Dist{}) || h.Exclusive != (Dist{}) {
		t.Errorf("Handle: %+v, want 0 calls, 1 unfinished, no durations", h)
	}
	if f := got["Find"]; f.Calls != 1 || f.Unfinished != 1 || f.Inclusive.Total != 100 || f.Inclusive.Max != 100 {
		t.Errorf("Find: %+v, want 1 call of 100ns and 1 unfinished", f)
	}
	if rep.Unfinished != 2 || rep.Lost != 0 || rep.Records != 4 {
		t.Errorf("report: %d unfinished, %d lost of %d records; want 2, 0, 4", rep.Unfinished, rep.Lost, rep.Records)
	}
	if w := strings.Join(rep.Warnings(), "\n"); !strings.Contains(w, "2 calls had not returned") || strings.Contains(w, "lost") {
		t.Errorf("warnings %q: want the 2 unfinished calls, nothing lost", w)
	}
	var js bytes.Buffer
	if err := WriteStatsJSON(&js, fs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"unfinished": 1`) {
		t.Errorf("stats JSON has no unfinished count:\n%s", js.String())
	}
}

// TestWriteLinesMarksUnfinished: tigris read marks an unfinished record, in
// text and JSON, and its duration as a lower bound.
func TestWriteLinesMarksUnfinished(t *testing.T) {
	path := writeStream(t, t.TempDir(), 42, testProbes, unfinishedRecords)
	var text bytes.Buffer
	if _, err := WriteLines(&text, openTest(t, path), false, Options{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(text.String()), "\n")
	want := "record  " + wallString(clockWall+4000) + " trace=4 eoi=0 ess=0 g=1 >=1µs " + testProbes[0].Signature + " [unfinished]"
	if !slices.Contains(lines, want) {
		t.Errorf("no line %q in\n%s", want, text.String())
	}
	var js bytes.Buffer
	if _, err := WriteLines(&js, openTest(t, path), true, Options{}); err != nil {
		t.Fatal(err)
	}
	var unfinished int
	for _, l := range strings.Split(strings.TrimSpace(js.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if m["unfinished"] == true {
			unfinished++
		}
	}
	if unfinished != 2 {
		t.Errorf("%d JSON records marked unfinished, want 2:\n%s", unfinished, js.String())
	}
}

// TestConvertMarksUnfinished: Chrome's events and OPEN.xtrace's invocations
// of unfinished calls say so (an argument, a label), and the report of
// convert counts them.
func TestConvertMarksUnfinished(t *testing.T) {
	path := writeStream(t, t.TempDir(), 42, testProbes, unfinishedRecords)
	for _, c := range []struct {
		f    *Format
		mark string
	}{{Chrome, `"unfinished":true`}, {OpenXTrace, `"labels":["unfinished"]`}} {
		out, rep := convert(t, c.f, path)
		if n := strings.Count(string(out), c.mark); n != 2 {
			t.Errorf("%s: %d calls marked %s, want 2:\n%s", c.f.Name, n, c.mark, out)
		}
		if rep.Unfinished != 2 {
			t.Errorf("%s: report counts %d unfinished, want 2", c.f.Name, rep.Unfinished)
		}
	}
}
