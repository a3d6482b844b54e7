package dash

import (
	"context"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/adminclient"
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
