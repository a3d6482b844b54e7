package bench

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRawCSVRoundTrip(t *testing.T) {
	res := syntheticResults(t, 0, stressTimings)
	res.Runs[0].Timings[3] = -7 // a clock going backwards must survive too
	var b bytes.Buffer
	if err := WriteRawCSV(&b, res); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if lines[0] != "experiment,config,run,goroutine,call,warmup,ns" {
		t.Errorf("header %q", lines[0])
	}
	// 10 of 40 calls per goroutine are warm-up; the first goroutine's 11th call is not.
	if lines[1] != "e,baseline,1,0,0,1,1000000" || lines[11] != "e,baseline,1,0,10,0,100" || lines[41] != "e,baseline,1,1,0,1,1000000" {
		t.Errorf("unexpected lines:\n%s\n%s\n%s", lines[1], lines[11], lines[41])
	}
	runs, err := ReadRawCSV(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != len(res.Runs) {
		t.Fatalf("read %d runs, want %d", len(runs), len(res.Runs))
	}
	for i, got := range runs {
		want := res.Runs[i]
		if got.Experiment != want.Experiment || got.Variant != want.Variant || got.Run != want.Run ||
			got.Goroutines != want.Goroutines || got.Calls != want.Calls || !slices.Equal(got.Timings, want.Timings) {
			t.Errorf("run %d: got %s/%s/%d %d×%d, want %s/%s/%d %d×%d (or timings differ)", i,
				got.Experiment, got.Variant, got.Run, got.Goroutines, got.Calls,
				want.Experiment, want.Variant, want.Run, want.Goroutines, want.Calls)
		}
	}
	for _, bad := range []string{
		"",
		"config,run,ns\n",
		"experiment,config,run,goroutine,call,warmup,ns\ne,b,1,0,1,0,5\n",                               // call 1 before call 0
		"experiment,config,run,goroutine,call,warmup,ns\ne,b,1,1,0,0,5\n",                               // goroutine 1 before 0
		"experiment,config,run,goroutine,call,warmup,ns\ne,b,1,0,0,0,five\n",                            // not a number
		"experiment,config,run,goroutine,call,warmup,ns\ne,b,1,0,0,0,5\ne,b,1,0,1,0,5\ne,b,1,1,0,0,5\n", // ragged
	} {
		if _, err := ReadRawCSV(strings.NewReader(bad)); err == nil {
			t.Errorf("ReadRawCSV(%q): no error", bad)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	res := syntheticResults(t, 0, stressTimings)
	res.Env = Environment{GoVersion: "go1.26.8", GOOS: "linux", GOARCH: "amd64", NumCPU: 2, CPU: "AMD EPYC", LoadAvg: 0.5}
	res.Builds = []BuildResult{{Binary: BinPlain, Duration: time.Second, Size: 123}}
	res.Runs[0].Notes = []string{"moobench-otel: spans started=1 exported=1 dropped=0"}
	s, err := Summarize(res)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, s); err != nil {
		t.Fatal(err)
	}
	got, err := ReadJSON(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Errorf("round trip differs:\ngot  %+v\nwant %+v", got, s)
	}
	if _, err := ReadJSON(strings.NewReader("{")); err == nil {
		t.Error("ReadJSON of a broken document: no error")
	}
}

// svgDoc parses an SVG document with encoding/xml and returns its elements' names
// and its text.
func svgDoc(t *testing.T, doc []byte) (elems map[string]int, texts []string) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	elems = map[string]int{}
	depth := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%s", err, doc)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			if depth == 0 && (tk.Name.Local != "svg" || tk.Name.Space != "http://www.w3.org/2000/svg") {
				t.Errorf("root element %v, want svg in the SVG namespace", tk.Name)
			}
			depth++
			elems[tk.Name.Local]++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if s := strings.TrimSpace(string(tk)); s != "" {
				texts = append(texts, s)
			}
		}
	}
	if depth != 0 {
		t.Errorf("unbalanced elements")
	}
	return elems, texts
}

func TestSVG(t *testing.T) {
	for _, c := range []struct {
		name   string
		mt     time.Duration
		timing map[string]int64
		broken bool
	}{
		{"stress", 0, stressTimings, false},
		// 500 µs per call: T (50 µs per monitored call) dwarfs the overheads, so the
		// chart breaks T.
		{"long", 500 * time.Microsecond, map[string]int64{
			Baseline: 500_100, Deactivated: 500_110, Coarse: 500_150, FineNull: 500_200,
			FineAsync: 500_260, FineAsyncDrop: 500_250, FineSync: 500_300, OTelLossless: 505_100, OTel: 502_100, ExecTrace: 501_100}, true},
		// Noise can make a portion negative.
		{"negative", 0, map[string]int64{
			Baseline: 100, Deactivated: 95, Coarse: 150, FineNull: 200,
			FineAsync: 260, FineAsyncDrop: 250, FineSync: 300, OTelLossless: 5100, OTel: 2100, ExecTrace: 1100}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Summarize(syntheticResults(t, c.mt, c.timing))
			if err != nil {
				t.Fatal(err)
			}
			e := &s.Experiments[0]
			e.Name = `e <&> "quoted"` // must be escaped
			var b bytes.Buffer
			if err := WriteSVG(&b, e); err != nil {
				t.Fatal(err)
			}
			elems, texts := svgDoc(t, b.Bytes())
			// One rect per segment (1+2+3+3+4+4+4+2+2+2 = 27), 5 legend boxes, the background.
			if elems["rect"] != 27+5+1 {
				t.Errorf("%d rects, want 33", elems["rect"])
			}
			all := strings.Join(texts, "\n")
			for _, want := range []string{"baseline", "fine-async", "otel", "I instrumentation", `MooBench e <&> "quoted"`} {
				if !strings.Contains(all, want) {
					t.Errorf("no text %q in the chart", want)
				}
			}
			if hasBreak := strings.Contains(all, "T+"); hasBreak != c.broken {
				t.Errorf("axis broken: %v, want %v", hasBreak, c.broken)
			}
			for _, want := range []string{"1.00 % of the records lost", "50.00 % of the spans lost"} {
				if !strings.Contains(all, want) {
					t.Errorf("no text %q in the chart", want)
				}
			}
			if strings.Count(all, "% of the") != 2 {
				t.Errorf("loss shares under bars other than fine-async and otel:\n%s", all)
			}
			if c.name == "negative" && !strings.Contains(all, "I -0.50 ns") {
				t.Errorf("negative portion not labelled with its value:\n%s", all)
			}
		})
	}
}

func TestTable(t *testing.T) {
	res := syntheticResults(t, 0, stressTimings)
	res.Env.NumCPU = 2
	res.Runs[3].LoadAvg = 7.5
	s, err := Summarize(res)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteTable(&b, s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// Columns are aligned with runs of spaces; compare single-spaced lines.
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	flat := strings.Join(lines, "\n")
	for _, want := range []string{"== e: depth 10", "clock pair 20.00 ns", "fine-async", "vs otel-lossless vs otel vs exectrace",
		"16.0 ns 0.80× 31.25× cheaper 12.50× cheaper 6.25× cheaper", "500 ns",
		"WARNING: load average up to 7.5 on 2 CPU(s)",
		"records or spans", "fine-async 2400 2376 24 1.00 0 0.000 0.0", // record counts, no allocations
		"otel 2400 1200 1200 50.00 0 3.000 300.0",
		"exectrace not counted none¹", "¹ The execution tracer does not drop events",
		"Targets (docs/performance.md", "C+W fine record through the async writer", "missed", "peer",
		"Kieker's published MooBench figures", "W writing (async ASCII writer, blocking queue: nothing lost) mean 2472 ns median 242 ns"} {
		if !strings.Contains(flat, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestReport(t *testing.T) {
	res := syntheticResults(t, 0, stressTimings)
	dir := t.TempDir()
	// Keep the timings in raw data files, as the driver does.
	for i := range res.Runs {
		r := &res.Runs[i]
		r.File = filepath.Join(dir, "raw", r.Variant+"-"+string(rune('0'+r.Run))+".bin")
		os.MkdirAll(filepath.Dir(r.File), 0o755)
		if err := os.WriteFile(r.File, encodeRaw(r), 0o644); err != nil {
			t.Fatal(err)
		}
		r.Timings = nil
	}
	s, err := Report(dir, res, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"results.json", "summary.json", "table.txt", "chart-e.svg", "raw.csv.gz"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	again, err := ReadResults(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	s2, err := Summarize(again)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Experiments, s2.Experiments) {
		t.Errorf("summarizing results.json again differs:\n%+v\n%+v", s.Experiments, s2.Experiments)
	}
}

// A results directory that moved still summarizes: the raw data files are
// found under its raw/ by the driver's layout.
func TestReadResultsMoved(t *testing.T) {
	res := syntheticResults(t, 0, stressTimings)
	old, moved := t.TempDir(), t.TempDir()
	for i := range res.Runs {
		r := &res.Runs[i]
		rel := runName(r.Experiment, r.Variant, r.Run) + ".bin"
		r.File = filepath.Join(old, "raw", rel)
		f := filepath.Join(moved, "raw", rel)
		os.MkdirAll(filepath.Dir(f), 0o755)
		if err := os.WriteFile(f, encodeRaw(r), 0o644); err != nil {
			t.Fatal(err)
		}
		r.Timings = nil
	}
	if err := writeFile(filepath.Join(moved, "results.json"), func(w io.Writer) error {
		return json.NewEncoder(w).Encode(res)
	}); err != nil {
		t.Fatal(err)
	}
	again, err := ReadResults(filepath.Join(moved, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Summarize(again); err != nil {
		t.Fatal(err)
	}
}
