package dash

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/adminclient"
	"github.com/tigrisgo/tigris/internal/admintest"
	"github.com/tigrisgo/tigris/internal/human"
	"github.com/tigrisgo/tigris/runtime/monitor/admin"
)

// TestLivePageRateInForceAndWhy: while the overhead budget holds sampling
// below the configured rate the page shows both rates and why, and a cycle
// that selected nothing says why (issue 26: every surface shows the rate in
// force; an empty selection explains itself).
func TestLivePageRateInForceAndWhy(t *testing.T) {
	p, addr := newFakeProgram(t, 3)
	const reason = "overhead budget 2% of CPU: 167000 fine calls/s allow 5.4% (lowered)"
	const why = "nothing qualified among 3 functions: least changeable selects none"
	p.mu.Lock()
	p.sampling = admin.SamplingState{Sampling: 1, Percent: "100%", Effective: 0.054, EffectivePercent: "5.4%", Reason: reason}
	p.why = why
	p.mu.Unlock()
	c, _ := adminclient.New(addr, adminclient.Options{})
	l := NewLive(c, addr, LiveOptions{})
	l.Read(context.Background())
	_, page := get(t, dashOf(t, l, Options{})+"/")
	for _, want := range []string{
		"<dd>100% configured, 5.4% in force</dd>",                    // the process
		"100% configured, <strong>5.4% in force</strong> (" + reason, // the modes section, with the reason
		"<strong>Why nothing qualified:</strong> " + why,             // the last cycle
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// TestLivePageNumbersRounded: the page on a program whose overhead budget
// holds sampling down, after cycles that grouped and cut real measurements,
// shows every number rounded to what is meaningful, with its unit: no
// float's raw digits (46.61608583%), no unrounded window (11.039087524s), no
// exponent (1.372e+06).
func TestLivePageNumbersRounded(t *testing.T) {
	addr := admintest.Server(t, "")
	c, err := adminclient.New(addr, adminclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	crit, budget := "most frequent ∪ most expensive ∪ most error-prone", 0.0001
	if _, err := c.SetAnalysis(ctx, adminclient.AnalysisChange{Criteria: &crit, Budget: &budget}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		for i := range 300 {
			admintest.Call(i % 3)
		}
		if _, err := c.RunAnalysis(ctx); err != nil {
			t.Fatal(err)
		}
	}
	l := NewLive(c, addr, LiveOptions{})
	l.Read(ctx)
	_, page := get(t, dashOf(t, l, Options{})+"/")
	if !strings.Contains(page, "Cycle 2") || !strings.Contains(page, "cuts ") {
		t.Fatalf("the page shows no cycle with cuts:\n%s", page)
	}
	if m := human.Unrounded.FindString(page); m != "" {
		i := strings.Index(page, m)
		t.Errorf("unrounded number %q on the page: …%s…", m, page[max(i-200, 0):min(i+100, len(page))])
	}
	if !regexp.MustCompile(`window \d+(\.\d+)?(ns|µs|ms|s)\b`).MatchString(page) {
		t.Error("the page gives no cycle's window as a rounded duration")
	}
}
