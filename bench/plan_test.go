package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRawFormat(t *testing.T) {
	r := &RunData{Goroutines: 2, Calls: 3, Depth: 10, MethodTime: 500 * time.Microsecond,
		ClockPairNs: 41.5, ClockPairIters: 1 << 20, Elapsed: 123456789, Mallocs: 17, AllocBytes: 4096,
		Timings: []int64{1, 2, 3, 40, 50, 60}}
	b := encodeRaw(r)
	if len(b) != rawHeaderSize+6*8 {
		t.Fatalf("encoded %d bytes", len(b))
	}
	got, err := decodeRaw(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Goroutines != 2 || got.Calls != 3 || got.Depth != 10 || got.MethodTime != r.MethodTime ||
		got.ClockPairNs != 41.5 || got.ClockPairIters != 1<<20 || got.Elapsed != r.Elapsed ||
		got.Mallocs != 17 || got.AllocBytes != 4096 || !slices.Equal(got.Timings, r.Timings) {
		t.Errorf("decoded %+v", got)
	}
	// Version 1: no allocation counts, timings at offset 64.
	v1 := append(append([]byte{}, b[:rawHeaderSizeV1]...), b[rawHeaderSize:]...)
	v1[8] = 1
	old, err := decodeRaw(v1)
	if err != nil {
		t.Fatalf("version 1: %v", err)
	}
	if old.Mallocs != -1 || old.AllocBytes != -1 || !slices.Equal(old.Timings, r.Timings) || old.Elapsed != r.Elapsed {
		t.Errorf("version 1 decoded %+v", old)
	}
	if steady := got.AppendSteady(nil, 0.5); !slices.Equal(steady, []int64{2, 3, 50, 60}) {
		t.Errorf("steady state %v, want [2 3 50 60]", steady)
	}
	for name, bad := range map[string][]byte{
		"short":     b[:10],
		"magic":     append([]byte("NOTMOOBE"), b[8:]...),
		"truncated": b[:len(b)-1],
		"version":   append(append(append([]byte{}, b[:8]...), 3, 0, 0, 0), b[12:]...),
		"v1 size":   append(append(append([]byte{}, b[:8]...), 1, 0, 0, 0), b[12:]...), // 16 bytes too many for version 1
	} {
		if _, err := decodeRaw(bad); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := QuickPlan("/root", nopBuild)
	if err := ok.Validate(); err != nil {
		t.Fatalf("QuickPlan: %v", err)
	}
	if err := FullPlan("/root", nil).Validate(); err != nil {
		t.Fatalf("FullPlan without tigris: %v", err)
	}
	if got := len(QuickPlan("/root", nil).Variants); got != 4 {
		t.Errorf("QuickPlan without tigris has %d configurations, want 4 (baseline and the peers)", got)
	}
	for _, c := range []struct {
		name   string
		mutate func(p *Plan)
		want   string
	}{
		{"duplicate", func(p *Plan) { p.Variants[1].Name = Baseline }, "duplicated"},
		{"unknown over", func(p *Plan) { p.Variants[1].Over = "nope" }, `unknown "nope"`},
		{"cycle", func(p *Plan) { p.Variants[1].Over = Coarse }, "cycle"},
		{"no baseline", func(p *Plan) { p.Variants[0].Adds = PortionI; p.Variants[0].Over = Deactivated }, "0 baseline"},
		{"binary", func(p *Plan) { p.Variants[0].Binary = "nope" }, "unknown binary"},
		{"no build", func(p *Plan) { p.Binaries[0].Build = nil }, "no build function"},
		{"portion", func(p *Plan) { p.Variants[1].Adds = "X" }, "unknown portion"},
		{"params", func(p *Plan) { p.Experiments[0].Params.Warmup = 1 }, "invalid parameters"},
		{"no calls", func(p *Plan) { p.Experiments[0].Params.Calls = 0 }, "invalid parameters"},
	} {
		p := QuickPlan("/root", nopBuild)
		p.Variants = slices.Clone(p.Variants)
		p.Binaries = slices.Clone(p.Binaries)
		p.Experiments = slices.Clone(p.Experiments)
		c.mutate(&p)
		err := p.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// variantNames lists p's configurations, comma-separated, in order.
func variantNames(p Plan) string {
	var names []string
	for _, v := range p.Variants {
		names = append(names, v.Name)
	}
	return strings.Join(names, ",")
}

func TestOnly(t *testing.T) {
	p, err := QuickPlan("/root", nopBuild).Only(FineAsync)
	if err != nil {
		t.Fatal(err)
	}
	if got := variantNames(p); got != "baseline,deactivated,fine-null,fine-async" {
		t.Errorf("Only(fine-async) kept %s", got)
	}
	if _, err := p.Only("nope"); err == nil {
		t.Error("Only(unknown): no error")
	}
}

func TestEstimate(t *testing.T) {
	// 8 configurations × 10 runs × 10,000 calls × 500 µs = 400 s, plus 0.3 s
	// per run (100 at method time 0, 80 at 500 µs, 2 × 5 × 5 of the goroutine
	// series); method time 0 costs only the per-run overhead at a per-call
	// cost of 0.
	d := FullPlan("/root", nopBuild).Estimate(0)
	if want := 400*time.Second + 230*runOverhead; d != want {
		t.Errorf("full plan estimate %v, want %v", d, want)
	}
	// The thesis' literal plan: 2,000,000 calls of 500 µs (otel-lossless
	// capped at 200,000), about 19.7 h.
	d = FullPlan("/root", nopBuild).With(Overrides{Calls: 2_000_000}).Estimate(0)
	if d < 19*time.Hour || d > 20*time.Hour {
		t.Errorf("literal full plan estimate %v, want about 19.7 h", d)
	}
}

func TestMethodTimeName(t *testing.T) {
	for mt, want := range map[time.Duration]string{0: "mt0", 500 * time.Microsecond: "mt500us", time.Millisecond: "mt1ms", 1500 * time.Microsecond: "mt1.5ms"} {
		if got := MethodTimeName(mt); got != want {
			t.Errorf("MethodTimeName(%v) = %q, want %q", mt, got, want)
		}
	}
}

func TestFindRoot(t *testing.T) {
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "bench", "doc.go")); err != nil {
		t.Errorf("FindRoot = %s: %v", root, err)
	}
	if _, err := FindRoot(t.TempDir()); err == nil {
		t.Error("FindRoot outside the module: no error")
	}
}

// The OpenTelemetry example is a module of its own and carries copies of the
// benchmark loop and the raw data writer: they must not drift apart.
func TestExampleCopiesInSync(t *testing.T) {
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"loop.go", "raw.go", "empty.s"} {
		a, err1 := os.ReadFile(filepath.Join(root, ExampleDir, f))
		b, err2 := os.ReadFile(filepath.Join(root, OTelExampleDir, f))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between %s and %s; copy it over", f, ExampleDir, OTelExampleDir)
		}
	}
}

func TestStandardPlanPeers(t *testing.T) {
	p := QuickPlan("/root", nil)
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := variantNames(p); got != "baseline,otel-lossless,otel,exectrace" {
		t.Errorf("configurations without tigris: %s", got)
	}
	p = QuickPlan("/root", nopBuild)
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := variantNames(p); got != "baseline,deactivated,coarse,fine-null,fine-async,fine-async-drop,fine-sync,otel-lossless,otel,exectrace" {
		t.Errorf("configurations %s", got)
	}
	// The targets compare with the lossless span; the OpenTelemetry peers are capped.
	l := p.Variant(OTelLossless)
	if p.Peer() != l || !slices.Contains(l.Args, "-otel-blocking") || l.Calls != 10_000 || p.Variant(OTel).Calls != 100_000 || p.Variant(ExecTrace).Calls != 0 {
		t.Errorf("peer %+v, otel-lossless %+v", p.Peer(), l)
	}
	d, a := p.Variant(FineAsyncDrop), p.Variant(FineAsync)
	if !slices.Contains(d.Env, "TIGRIS_ON_FULL=drop") || slices.ContainsFunc(a.Env, func(kv string) bool { return strings.HasPrefix(kv, "TIGRIS_ON_FULL") }) ||
		d.Trace == "" || d.Over != FineNull {
		t.Errorf("fine-async-drop %+v, fine-async %+v", d, a)
	}
	if x := p.Variant(ExecTrace); x.Binary != BinExecTrace || !slices.Contains(x.Args, "-trace-out") {
		t.Errorf("exectrace %+v", x)
	}
	// The goroutine series runs the writers and what they stack on; the
	// 500 µs experiment leaves out what drops nothing there.
	var got []string
	for _, e := range p.Experiments {
		var ns []string
		for _, v := range p.InExperiment(e) {
			ns = append(ns, v.Name)
		}
		got = append(got, fmt.Sprintf("%s g%d: %s", e.Name, e.Params.Goroutines, strings.Join(ns, ",")))
	}
	want := []string{
		"mt0 g1: baseline,deactivated,coarse,fine-null,fine-async,fine-async-drop,fine-sync,otel-lossless,otel,exectrace",
		"mt500us g1: baseline,deactivated,coarse,fine-null,fine-async,fine-sync,otel-lossless,exectrace",
		"mt0-g2 g2: baseline,deactivated,fine-null,fine-async,fine-async-drop",
		"mt0-g8 g8: baseline,deactivated,fine-null,fine-async,fine-async-drop",
	}
	if !slices.Equal(got, want) {
		t.Errorf("experiments:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// --goroutines and --method-time drop the series; --only keeps what it names.
	if n := len(p.With(Overrides{Goroutines: 4}).Experiments); n != 2 {
		t.Errorf("--goroutines 4: %d experiments, want 2", n)
	}
	o, err := p.Only(Coarse)
	if err != nil || len(o.Experiments) != 2 {
		t.Errorf("--only coarse: %d experiments (%v), want the two without a configuration list", len(o.Experiments), err)
	}
	o, err = p.Only(FineAsync)
	if err != nil || len(o.Experiments) != 4 || !slices.Equal(o.Experiments[2].Configs, []string{FineNull, FineAsync}) {
		t.Errorf("--only fine-async: %+v (%v)", o.Experiments, err)
	}
}

func TestVariantCallCap(t *testing.T) {
	q := Params{Calls: 1000}
	for _, c := range []struct{ cap, want int }{{0, 1000}, {10, 10}, {5000, 1000}} {
		v := Variant{Calls: c.cap}
		if got := v.CallsFor(q); got != c.want {
			t.Errorf("cap %d: %d calls, want %d", c.cap, got, c.want)
		}
	}
	p := TinyPlan("/root", nopBuild)
	p.Variants[0].Calls = -1
	if err := p.Validate(); err == nil {
		t.Error("a negative cap validated")
	}
	p = TinyPlan("/root", nopBuild)
	p.Experiments[0].Configs = []string{"nonesuch"}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "nonesuch") {
		t.Errorf("an unknown configuration in an experiment: %v", err)
	}
}

func TestWith(t *testing.T) {
	p := FullPlan("/root", nopBuild)
	got := p.With(Overrides{Runs: 2, Depth: 5})
	if len(got.Experiments) != 4 || got.Experiments[0].Params.Runs != 2 || got.Experiments[1].Params.Depth != 5 ||
		got.Experiments[0].Params.Calls != 2_000_000 || got.Experiments[1].Params.Calls != FullPlanLongCalls {
		t.Errorf("With(runs 2, depth 5): %+v", got.Experiments)
	}
	if p.Experiments[0].Params.Runs != 10 {
		t.Error("With changed the original plan")
	}
	// One experiment per method time, each with the parameters of the plan's
	// experiment with that method time, or of the first.
	got = p.With(Overrides{MethodTimes: []time.Duration{500 * time.Microsecond, time.Millisecond, 0}, Calls: 7})
	var names []string
	for _, e := range got.Experiments {
		names = append(names, e.Name)
		if e.Params.Calls != 7 {
			t.Errorf("%s: calls %d, want 7", e.Name, e.Params.Calls)
		}
	}
	if strings.Join(names, ",") != "mt500us,mt1ms,mt0" || got.Experiments[1].Params.MethodTime != time.Millisecond {
		t.Errorf("experiments %+v", got.Experiments)
	}
	got = p.With(Overrides{MethodTimes: []time.Duration{500 * time.Microsecond}})
	if c := got.Experiments[0].Params.Calls; c != FullPlanLongCalls {
		t.Errorf("mt500us took %d calls, want the plan's %d", c, FullPlanLongCalls)
	}
	if err := p.With(Overrides{MethodTimes: []time.Duration{0, 0}}).Validate(); err == nil || !strings.Contains(err.Error(), "duplicated") {
		t.Errorf("two experiments of the same method time: %v", err)
	}
}
