package admin

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/runtime/monitor/analyzer"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// resetAnalysis restores the analysis settings after a test; disabling analysis
// also drops the modes a cycle chose.
func resetAnalysis(t *testing.T) {
	t.Helper()
	orig := analyzer.Analysis()
	t.Cleanup(func() {
		if err := analyzer.SetAnalysis(orig); err != nil {
			t.Error(err)
		}
	})
}

// cycle decodes an analyzer.Cycle; its partitions stay raw, as no test here
// looks at them.
type cycle struct {
	analyzer.Cycle
	Partitions json.RawMessage `json:"partitions"`
}

type history struct {
	Cycles []cycle `json:"cycles"`
}

func TestAnalysisSettings(t *testing.T) {
	resetAnalysis(t)
	a := decode[settings.Analysis](t, do(t, h, "GET", Prefix+"analysis", ""), 200)
	if a.Enabled || a.Interval != settings.Duration(60e9) || a.Metrics["frequent"] != "count" {
		t.Fatalf("initial analysis %+v", a)
	}

	// Fields left out keep their values; metrics merge.
	got := decode[settings.Analysis](t, do(t, h, "PUT", Prefix+"analysis", `{"criteria": "most frequent ∪ more expensive", "window": "5m", "metrics": {"expensive": "errors"}}`), 200)
	if got.Criteria != "most frequent ∪ more expensive" || got.Window != settings.Duration(300e9) || got.Interval != a.Interval ||
		got.Metrics["expensive"] != "errors" || got.Metrics["frequent"] != "count" || got.Enabled {
		t.Errorf("after PUT: %+v", got)
	}
	if m := analyzer.Analysis(); m.Criteria != got.Criteria {
		t.Errorf("monitor has criteria %q", m.Criteria)
	}

	for _, c := range []struct {
		body, field string
		column      int
		want        string
	}{
		{`{"criteria": "most frequnt"}`, "criteria", 6, "expected a criterion"},
		{`{"criteria": "(most frequent"}`, "criteria", 15, ""},
		{`{"enabled": true, "criteria": " "}`, "criteria", 0, "empty filter"},
		{`{"interval": "-1s"}`, "interval", 0, "shorter than the minimum 100ms"},
		{`{"interval": "1ns"}`, "interval", 0, "1ns is shorter than the minimum 100ms"},
		{`{"budget": -0}`, "budget", 0, "-0 is negative zero"},
		{`{"budget": 1e-320}`, "budget", 0, "below the smallest positive share"},
		{`{"budget": 1.5}`, "budget", 0, "out of range"},
		{`{"metrics": {"frequent": "loudness"}}`, "metrics", 0, "loudness"},
		{`{"interval": 5}`, "", 0, "is not a duration"},
		{`{"every": "1m"}`, "", 0, `unknown field "every"`},
		{`["most frequent"]`, "", 0, "not a JSON object"},
		{``, "", 0, "empty request body"},
	} {
		wantError(t, do(t, h, "PUT", Prefix+"analysis", c.body), 400, c.field, c.column, c.want)
	}
	if after := analyzer.Analysis(); after.Criteria != got.Criteria || after.Interval != got.Interval || after.Metrics["frequent"] != "count" {
		t.Errorf("a bad request changed the analysis settings: %+v", after)
	}
}

func TestAnalysisRunAndHistory(t *testing.T) {
	reset(t)
	resetAnalysis(t)
	decode[settings.Analysis](t, do(t, h, "PUT", Prefix+"analysis", `{"criteria": "most frequent"}`), 200)
	for left := 500; left > 0; left-- {
		call(find, nil)
	}
	for i := 0; i < 5; i++ {
		call(save, nil)
		call(weird, nil)
		for k := 0; k < i; k++ {
			call(weird, nil)
		}
	}
	c := decode[cycle](t, do(t, h, "POST", Prefix+"analysis/run", ""), 200)
	if c.Seq == 0 || c.Trigger != "manual" || c.Candidates < 3 || c.Criteria == "" {
		t.Errorf("cycle %+v", c)
	}
	findSig := "test.example/shop.(*Store).Find(int) (string, error)"
	if !slices.Contains(c.Selected, findSig) {
		t.Errorf("most frequent did not select Find: %v", c.Selected)
	}
	hist := decode[history](t, do(t, h, "GET", Prefix+"analysis/history", ""), 200)
	if n := len(hist.Cycles); n == 0 || hist.Cycles[n-1].Seq != c.Seq {
		t.Errorf("history does not end with cycle %d: %+v", c.Seq, hist.Cycles)
	}

	// Criteria that name an unbound criterion cannot run: 409, kept in history.
	if err := analyzer.SetAnalysis(settings.Analysis{Criteria: "", Interval: settings.Duration(60e9)}); err != nil {
		t.Fatal(err)
	}
	wantError(t, do(t, h, "POST", Prefix+"analysis/run", ""), 409, "", 0, "analysis cycle failed")
	hist = decode[history](t, do(t, h, "GET", Prefix+"analysis/history", ""), 200)
	if last := hist.Cycles[len(hist.Cycles)-1]; last.Err == "" {
		t.Errorf("the failed cycle is not in the history: %+v", last)
	}
}

// TestSamplingUnderBudget: while the overhead budget holds the rate below the
// configured one, every surface shows both rates and why.
func TestSamplingUnderBudget(t *testing.T) {
	reset(t)
	resetAnalysis(t)
	// 0.01 % of the CPU cannot pay for hundreds of fine calls a second: the
	// budget lowers the rate as far as it goes.
	decode[settings.Analysis](t, do(t, h, "PUT", Prefix+"analysis", `{"criteria": "most frequent", "budget": 0.0001}`), 200)
	for left := 500; left > 0; left-- {
		call(find, nil)
	}
	call(save, nil)
	c := decode[cycle](t, do(t, h, "POST", Prefix+"analysis/run", ""), 200)
	if c.Budget == nil || c.Sampling >= 1 {
		t.Fatalf("cycle did not lower the rate: sampling %v, budget %+v", c.Sampling, c.Budget)
	}
	s := decode[SamplingState](t, do(t, h, "GET", Prefix+"sampling", ""), 200)
	if s.Sampling != 1 || s.Percent != "100%" || s.Effective != c.Sampling || s.EffectivePercent != settings.FormatPercent(c.Sampling) ||
		!strings.Contains(s.Reason, "overhead budget 0.01% of CPU") {
		t.Errorf("GET sampling %+v; want configured 100%%, effective %v and the budget's reason", s, c.Sampling)
	}
	hl := decode[Health](t, do(t, h, "GET", Prefix+"health", ""), 200)
	if hl.Sampling != 1 || hl.EffectiveSampling != c.Sampling || hl.SamplingReason != s.Reason {
		t.Errorf("GET health: sampling %v, effective %v, reason %q; want 1, %v, %q", hl.Sampling, hl.EffectiveSampling, hl.SamplingReason, c.Sampling, s.Reason)
	}
	m := do(t, h, "GET", "/metrics", "").Body.String()
	for _, want := range []string{"\ntigris_sampling_ratio 1\n", "\ntigris_sampling_effective_ratio " + strconv.FormatFloat(c.Sampling, 'g', -1, 64) + "\n", "\ntigris_overhead_budget_ratio 0.0001\n"} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %q", strings.TrimSpace(want))
		}
	}
	// Without a budget the two agree and there is nothing to explain.
	decode[settings.Analysis](t, do(t, h, "PUT", Prefix+"analysis", `{"budget": 0}`), 200)
	if s := decode[SamplingState](t, do(t, h, "GET", Prefix+"sampling", ""), 200); s.Effective != 1 || s.Reason != "" {
		t.Errorf("budget off: %+v; want effective 1, no reason", s)
	}
}
