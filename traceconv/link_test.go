package traceconv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// testLink: inside trace 1's Find (goroutine 7, eoi 1, ess 1), before its
// decode started, a go statement at 120 started goroutine 12, whose trace 4
// is one decode call, 130–180.
var testLink = writer.Link{Trace: 4, GID: 12, Parent: 1, ParentGID: 7, EOI: 2, ESS: 2, Probe: 2, Time: 120}

// linkedFile writes the standard test stream with trace 4 and its link, the
// link before the child's record, as the monitor writes it.
func linkedFile(t testing.TB) string {
	t.Helper()
	lr := testLink.Record()
	recs := append(slices.Clone(testRecords), lr,
		writer.Record{Probe: 3, EOI: 0, ESS: 0, Trace: 4, GID: 12, TIn: 130, TOut: 180})
	return writeStream(t, t.TempDir(), 42, testProbes, recs)
}

// TestChromeLink: a link is a flow from the go statement, on the parent's
// goroutine at its time, to the child goroutine's next call.
func TestChromeLink(t *testing.T) {
	out, rep := convert(t, Chrome, linkedFile(t))
	var doc struct{ TraceEvents []chromeEvent }
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, out)
	}
	var flows, threads []string
	for _, e := range doc.TraceEvents {
		switch e.Ph {
		case "s", "f":
			flows = append(flows, fmt.Sprintf("%s@%.3f/%d/%d %v", e.Ph, e.Ts, e.Pid, e.Tid, e.Args["parentTrace"]))
		case "M":
			threads = append(threads, fmt.Sprint(e.Args["name"]))
		}
	}
	want := []string{"s@0.120/42/7 1", "f@0.120/42/12 <nil>"}
	if !slices.Equal(flows, want) {
		t.Errorf("flow events %q; want %q", flows, want)
	}
	if !slices.Contains(threads, "goroutine 12") {
		t.Errorf("no thread name for the child goroutine: %q", threads)
	}
	if !bytes.Contains(out, []byte(`"ph":"s","id":4,`)) || !bytes.Contains(out, []byte(`"ph":"f","id":4,`)) {
		t.Errorf("flow ids are not the child trace's:\n%s", out)
	}
	if rep.Links != 1 {
		t.Errorf("report counts %d links", rep.Links)
	}
}

// TestOpenXTraceLink: the child trace's root names the trace, goroutine,
// position and function that started it.
func TestOpenXTraceLink(t *testing.T) {
	out, _ := convert(t, OpenXTrace, linkedFile(t))
	var traces []xtrace
	if err := json.Unmarshal(out, &traces); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, out)
	}
	var child *xtrace
	for i := range traces {
		if traces[i].TraceID == 4 {
			child = &traces[i]
		}
		if lf := traces[i].Root.Root.Additional["linkedFrom"]; traces[i].TraceID != 4 && lf != nil {
			t.Errorf("trace %d is not linked but has linkedFrom %v", traces[i].TraceID, lf)
		}
	}
	if child == nil {
		t.Fatalf("no trace 4 in\n%s", out)
	}
	lf, _ := child.Root.Root.Additional["linkedFrom"].(map[string]any)
	want := map[string]any{
		"traceId": 1.0, "goroutine": 7.0, "eoi": 2.0, "ess": 2.0,
		"function": testProbes[1].Signature, "timestamp": float64((clockWall + 120) / 1e6),
	}
	if fmt.Sprint(lf) != fmt.Sprint(want) {
		t.Errorf("linkedFrom %v; want %v", lf, want)
	}
}

// TestProfileLink: a linked trace's calls are under "(created by F)", F the
// function whose go statement started the goroutine; F's own samples are
// unchanged.
func TestProfileLink(t *testing.T) {
	out, _ := convert(t, Pprof, linkedFile(t))
	p, err := profile.ParseData(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range p.Sample {
		var names []string
		for i := len(s.Location) - 1; i >= 0; i-- {
			names = append(names, shortName(s.Location[i].Line[0].Function.Name))
		}
		got[strings.Join(names, ";")] = fmt.Sprint(s.Value)
	}
	if v := got["(created by example.com/shop.(*Store).Find);example.com/shop.decode"]; v != "[1 50 50]" {
		t.Errorf("the child's decode under its creator: %q; samples %v", v, got)
	}
	if v := got["example.com/shop.Handle;example.com/shop.(*Store).Find"]; v != "[2 700 600]" {
		t.Errorf("Find's own sample %q; samples %v", v, got)
	}
}

// TestWriteLinesLink: read prints the link, in text and JSON.
func TestWriteLinesLink(t *testing.T) {
	path := linkedFile(t)
	var text bytes.Buffer
	if _, err := WriteLines(&text, openTest(t, path), false, Options{}); err != nil {
		t.Fatal(err)
	}
	want := "link    trace=4 g=12 started by trace=1 g=7 eoi=2 ess=2 in " + testProbes[1].Signature + " at " + wallString(clockWall+120)
	if !slices.Contains(strings.Split(strings.TrimSpace(text.String()), "\n"), want) {
		t.Errorf("no line %q in\n%s", want, text.String())
	}
	var js bytes.Buffer
	if _, err := WriteLines(&js, openTest(t, path), true, Options{}); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range strings.SplitAfter(js.String(), "\n") { // strings.Lines needs go1.24
		if l == "" {
			continue // after the last line break
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if m["kind"] == "link" {
			found = true
			if m["trace"] != 4.0 || m["parentTrace"] != 1.0 || m["parentGoroutine"] != 7.0 || m["goroutine"] != 12.0 ||
				m["eoi"] != 2.0 || m["ess"] != 2.0 || m["timeNs"] != float64(clockWall+120) || m["signature"] != testProbes[1].Signature {
				t.Errorf("link %v", m)
			}
		}
	}
	if !found {
		t.Errorf("no link line in\n%s", js.String())
	}
}
