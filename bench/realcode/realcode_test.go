package realcode

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/internal/moments"
)

func TestParseBench(t *testing.T) {
	out := `goos: linux
goarch: amd64
pkg: github.com/valyala/fastjson
cpu: AMD EPYC
BenchmarkParse/small/fastjson         	  241178	       514.3 ns/op	 369.46 MB/s	       0 B/op	       0 allocs/op
BenchmarkParseRawNumber/-1.32434e+12  	 9345321	        13.08 ns/op	 917.44 MB/s
BenchmarkParseRawString/"abcd"     	11267641	        12.33 ns/op
BenchmarkCompress 	     100	   3429541 ns/op	  12345 outbytes
BenchmarkHuge 	       1	1.5e+10 ns/op
--- BENCH: BenchmarkSomething
    x_test.go:12: a log line
PASS
`
	got := parseBench(out)
	want := map[string]float64{
		"BenchmarkParse/small/fastjson":        514.3,
		"BenchmarkParseRawNumber/-1.32434e+12": 13.08, // a name ending like a -cpu suffix stays whole
		`BenchmarkParseRawString/"abcd"`:       12.33,
		"BenchmarkCompress":                    3429541,
		"BenchmarkHuge":                        1.5e10,
	}
	if len(got) != len(want) {
		t.Errorf("parsed %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v, want %v", k, got[k], v)
		}
	}
}

func TestFailure(t *testing.T) {
	out := "BenchmarkDecode/bool \t 2736\t 3933 ns/op\n--- FAIL: BenchmarkEncode\n    bench_test.go:89: decode \"x.toml\": unexpected EOF\nFAIL\n"
	if got, want := failure(out), `: --- FAIL: BenchmarkEncode bench_test.go:89: decode "x.toml": unexpected EOF`; got != want {
		t.Errorf("failure = %q, want %q", got, want)
	}
	if got := failure("panic: boom\n\ngoroutine 1 [running]:\n"); got != ": panic: boom" {
		t.Errorf("failure of a panic = %q", got)
	}
	if got := failure("signal: killed\n"); got != "" {
		t.Errorf("failure without a FAIL line = %q", got)
	}
}

func TestUnderMonitor(t *testing.T) {
	cfg := "version: 1\npointcuts:\n  module: execution(* m/...*(..))\nmonitor:\n  include:\n    - module\n  mode: coarse\n"
	got, err := underMonitor(cfg, "inlinable: probe", "small: probe")
	if err != nil {
		t.Fatal(err)
	}
	want := "version: 1\npointcuts:\n  module: execution(* m/...*(..))\nmonitor:\n  inlinable: probe\n  small: probe\n  include:\n    - module\n  mode: coarse\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := underMonitor("version: 1\n", "floor: true"); err == nil {
		t.Error("a config without monitor: was accepted")
	}
}

// TestOrderRotates: every variant runs in every position once over as many
// rounds as there are variants, and modules start at different places.
func TestOrderRotates(t *testing.T) {
	p := QuickPlan()
	n := len(p.Variants)
	seen := map[string]map[int]bool{}
	for r := range n {
		o := p.order(r, 0)
		if len(o) != n {
			t.Fatalf("round %d runs %d variants, want %d", r, len(o), n)
		}
		for pos, v := range o {
			if seen[v.Name] == nil {
				seen[v.Name] = map[int]bool{}
			}
			seen[v.Name][pos] = true
		}
	}
	for _, v := range p.Variants {
		if len(seen[v.Name]) != n {
			t.Errorf("%s ran in positions %v over %d rounds, want all", v.Name, seen[v.Name], n)
		}
	}
	if p.order(0, 0)[0].Name == p.order(0, 1)[0].Name {
		t.Error("two modules start a round with the same variant")
	}
}

func TestPlans(t *testing.T) {
	for _, name := range []string{"tiny", "quick", "full"} {
		p, err := PlanNamed(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if len(Modules) < 6 {
		t.Errorf("%d modules; the workload promises at least six", len(Modules))
	}
	for _, m := range Modules {
		if m.Path == "" || !strings.HasPrefix(m.Version, "v") || len(m.Bench) == 0 {
			t.Errorf("module %+v: want a path, a pinned version and benchmarks", m)
		}
	}
	p, err := QuickPlan().OnlyModules("toml", "fastjson")
	if err != nil || len(p.Modules) != 2 || p.Modules[0].Name != "fastjson" {
		t.Errorf("OnlyModules(toml, fastjson) = %v, %v; want fastjson, toml", p.Modules, err)
	}
	if _, err := QuickPlan().OnlyModules("nosuch"); err == nil {
		t.Error("an unknown module was accepted")
	}
	// The tiny plan keeps its smaller selections.
	p, _ = TinyPlan().OnlyModules("fastjson")
	if m, _ := moduleNamed("fastjson"); !slices.Equal(p.Modules[0].Bench, m.Tiny) {
		t.Errorf("tiny fastjson runs %v, want its tiny selection %v", p.Modules[0].Bench, m.Tiny)
	}
	p, err = QuickPlan().OnlyVariants("fine-all")
	if err != nil || len(p.Variants) != 2 || p.Variants[0].Name != "plain" || p.Variants[1].Name != "fine-all" {
		t.Errorf("OnlyVariants(fine-all) = %v, %v; want plain and fine-all", p.Variants, err)
	}
	if _, err := QuickPlan().OnlyVariants("fast"); err == nil {
		t.Error("an unknown variant was accepted")
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestSummarize checks the statistics on made-up runs: the per-round
// geometric mean over benchmarks, the t-interval over rounds of its
// logarithm, the pairing of each variant with the plain run of its own
// round, and the mean over modules.
func TestSummarize(t *testing.T) {
	p := Plan{Name: "test", Rounds: 3, Variants: []Variant{Variants[0], Variants[2]},
		Modules: []Module{{Name: "a", Bench: []string{"."}}, {Name: "b", Bench: []string{"."}}}}
	r := &Results{Workload: Workload, Plan: p}
	add := func(round int, mod, v string, ns map[string]float64) {
		r.Runs = append(r.Runs, Run{Round: round, Module: mod, Variant: v, NsPerOp: ns})
	}
	// Module a: in round k, X is 1.1·(1+k/10) slower and Y 1.2 times; plain
	// times drift from round to round, which the pairing cancels.
	var aLogs []float64
	for k := range 3 {
		drift := 1 + float64(k)
		add(k, "a", "plain", map[string]float64{"X": 10 * drift, "Y": 100 * drift})
		fx := 1.1 * (1 + float64(k)/10)
		add(k, "a", "off", map[string]float64{"X": 10 * drift * fx, "Y": 100 * drift * 1.2, "Z": 5})
		aLogs = append(aLogs, (math.Log(fx)+math.Log(1.2))/2)
	}
	// Module b: 2 times slower in rounds 0 and 1; its round 2 failed.
	add(0, "b", "plain", map[string]float64{"W": 1})
	add(0, "b", "off", map[string]float64{"W": 2})
	add(1, "b", "plain", map[string]float64{"W": 1})
	add(1, "b", "off", map[string]float64{"W": 2})
	add(2, "b", "plain", map[string]float64{"W": 1})
	r.Runs = append(r.Runs, Run{Round: 2, Module: "b", Variant: "off", Error: "exit status 2"})

	s := Summarize(r)
	a := s.Modules[0].Variants["off"]
	m := moments.Of(aLogs)
	h := moments.Critical95(2) * m.StdDev() / math.Sqrt(3)
	if a.Rounds != 3 || !near(a.Ratio, math.Exp(m.Mean())) || !near(a.Lo, math.Exp(m.Mean()-h)) || !near(a.Hi, math.Exp(m.Mean()+h)) {
		t.Errorf("module a: %+v; want %v [%v, %v] over 3 rounds", a, math.Exp(m.Mean()), math.Exp(m.Mean()-h), math.Exp(m.Mean()+h))
	}
	if len(s.Modules[0].Benchmarks) != 2 {
		t.Errorf("module a: benchmarks %v; Z has no plain time and is left out", s.Modules[0].Benchmarks)
	}
	if y := s.Modules[0].Benchmarks[1]; y.Name != "Y" || !near(y.Variants["off"].Ratio, 1.2) || !near(y.PlainNs, 200) {
		t.Errorf("benchmark Y: %+v; want ratio 1.2, plain median 200", y)
	}
	b := s.Modules[1].Variants["off"]
	if b.Rounds != 2 || !near(b.Ratio, 2) || !near(b.Lo, 2) || !near(b.Hi, 2) || b.Holds1() {
		t.Errorf("module b: %+v; want 2 [2, 2] over 2 rounds", b)
	}
	// Overall: only the rounds where every module ran.
	all := s.Overall["off"]
	l0, l1 := (aLogs[0]+math.Log(2))/2, (aLogs[1]+math.Log(2))/2
	mo := moments.Of([]float64{l0, l1})
	if all.Rounds != 2 || !near(all.Ratio, math.Exp(mo.Mean())) || !near(all.Hi, math.Exp(mo.Mean()+mo.CI95())) {
		t.Errorf("overall: %+v; want %v over 2 rounds", all, math.Exp(mo.Mean()))
	}
	if got := Cell(Interval{Ratio: 1.0612, Lo: 1.031, Hi: 1.0925, Rounds: 5}); got != "1.06 × [1.03, 1.09]" {
		t.Errorf("Cell = %q", got)
	}
	if got := Cell(Interval{Ratio: 1.01, Lo: 0.98, Hi: 1.04, Rounds: 5}); got != "~1.01 × [0.98, 1.04]" {
		t.Errorf("Cell of an interval holding 1 = %q", got)
	}
	if got := Cell(intervalOf([]float64{math.Log(12.345)})); got != "12.3 ×" {
		t.Errorf("Cell of one round = %q", got)
	}
	var sb strings.Builder
	WriteTable(&sb, r, s)
	for _, want := range []string{"off", "geometric mean", "Failed runs (1, left out)", "round 3, b off: exit status 2"} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, sb.String())
		}
	}
}

// TestWriteTargets: the targets table gives each module's shares and
// off-all's overhead over floor-all's, in both the text and the Markdown
// table, and "—" and "n/a" where there is nothing to give.
func TestWriteTargets(t *testing.T) {
	floorAll, offAll := Variants[variantIndex("floor-all")], Variants[variantIndex("off-all")]
	p := Plan{Name: "test", Rounds: 1, Variants: []Variant{Variants[0], floorAll, offAll}, ProfileTime: 1,
		Modules: []Module{{Name: "parser", Bench: []string{"."}}, {Name: "router", Bench: []string{"."}}}}
	r := &Results{Workload: Workload, Plan: p, Modules: []ModuleResult{
		{Name: "parser", Shares: &Shares{Samples: 420, Inclusive: 0.934, Exclusive: 0.612, Measured: 0.991, ExclusiveInlined: 0.25, ExclusiveSmall: 0.1,
			Unprobed: []FuncShare{{"example.com/parser.skipWS", "small", 0.1}, {"example.com/parser.(*T[example.com/x.U]).get", "inlined", 0.05}}}},
		{Name: "router", ProfileError: "exit status 1"},
	}}
	r.Runs = []Run{
		{Module: "parser", Variant: "plain", NsPerOp: map[string]float64{"X": 100}},
		{Module: "parser", Variant: "floor-all", NsPerOp: map[string]float64{"X": 110}},
		{Module: "parser", Variant: "off-all", NsPerOp: map[string]float64{"X": 115}},
		{Module: "router", Variant: "plain", NsPerOp: map[string]float64{"X": 100}},
		{Module: "router", Variant: "floor-all", NsPerOp: map[string]float64{"X": 95}},
		{Module: "router", Variant: "off-all", NsPerOp: map[string]float64{"X": 120}},
	}
	s := Summarize(r)
	var txt, md strings.Builder
	WriteTable(&txt, r, s)
	WriteMarkdown(&md, r, s)
	// The targets' rows, each the first row of its module with a share or
	// n/a, with runs of spaces and bars as one space.
	lines := func(out string) (parser, router string) {
		for _, l := range strings.Split(out, "\n") {
			norm := strings.Join(strings.Fields(strings.ReplaceAll(l, "|", " ")), " ")
			if !strings.Contains(norm, "%") && !strings.HasSuffix(norm, "n/a") {
				continue
			}
			switch {
			case strings.HasPrefix(norm, "parser ") && parser == "":
				parser = norm
			case strings.HasPrefix(norm, "router ") && router == "":
				router = norm
			}
		}
		return parser, router
	}
	for name, out := range map[string]string{"table.txt": txt.String(), "table.md": md.String()} {
		parser, router := lines(out)
		if want := "parser 420 93 % 61 % 99 % 25 % 10 % 1.50"; parser != want {
			t.Errorf("%s: parser's targets %q, want %q:\n%s", name, parser, want, out)
		}
		if want := "router — — — — — — n/a"; router != want {
			t.Errorf("%s: router's targets %q, want %q:\n%s", name, router, want, out)
		}
	}
	if want := "own time without a probe: parser.skipWS (small) 10 %, parser.(*T[example.com/x.U]).get (inlined) 5 %"; !strings.Contains(txt.String(), want) {
		t.Errorf("table.txt lacks %q:\n%s", want, txt.String())
	}
}
