package evaluation

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/adminclient"
	"github.com/tigrisgo/tigris/internal/admintest"
	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/monitor/analyzer"
)

// TestDemoReport prints step 4 of the demo from a program's admin endpoint:
// the test binary's, with three probes and one analysis cycle.
func TestDemoReport(t *testing.T) {
	ctx := context.Background()
	c, err := adminclient.New(admintest.Server(t, ""), adminclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := demoReport(ctx, &out, c); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "(no cycle yet: run longer than --interval)") {
		t.Errorf("before a cycle:\n%s", out.String())
	}
	crit := "most frequent"
	if _, err := c.SetAnalysis(ctx, adminclient.AnalysisChange{Criteria: &crit}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RunAnalysis(ctx); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := demoReport(ctx, &out, c); err != nil {
		t.Fatal(err)
	}
	for _, re := range []string{
		`(?m)^== 4\. Phase 1: coarse statistics, top 3 of 3 functions by total time$`,
		`(?m)^   MODE +CALLS +MEAN +TOTAL +ERRORS +FUNCTION$`,
		`(?m)^   \w+ +30 +\S+ +\S+ +0 +shop\.example/shop\.\(\*Store\)\.Find\(\) error$`,
		`(?m)^   Phase 2: \d+ analysis cycle\(s\); the last selection is traced in detail\.$`,
		`(?m)^   selected now \([1-9]\): .*Find`,
		`(?m)^   trace writer: 0 records written, 0 dropped, 0 queued, 0 B in `,
	} {
		if !regexp.MustCompile(re).MatchString(out.String()) {
			t.Errorf("the report lacks /%s/:\n%s", re, out.String())
		}
	}
}

// TestPrintDemoCycle: a cycle as the demo prints it, its measured and worked
// out numbers rounded to three significant digits, with units.
func TestPrintDemoCycle(t *testing.T) {
	sig := "github.com/tigrisgo/tigris/examples/petclinic/internal/service.(*ClinicService).FindVets() []model.Vet"
	cy := adminclient.Cycle{Cycle: analyzer.Cycle{Seq: 3, At: time.Date(2026, 1, 2, 15, 4, 5, 0, time.Local), Candidates: 40,
		Selected: []string{sig}, Added: []string{sig}, Removed: []string{"x.Gone()"}, Sampling: 0.4661608583,
		Reasons: map[string][]string{sig: {"frequent: most (count 200)", "expensive: more (mean-time 271µs)"}},
		Budget: &analyzer.Budget{Budget: 0.01, Cost: monitor.FineCost{CallNs: 40.26, RecordNs: 60}, Procs: 2,
			FineCallsPerSec: 167043.2, RecordsPerSec: 512.7, Share: 0.0040123, Rate: 0.4661608583, Action: "lowered"}}}
	var out bytes.Buffer
	printDemoCycle(&out, &cy)
	want := `   cycle 3 at 15:04:05: 40 candidates → 1 selected (+1 −1), sampling 46.6%
     budget 1% of CPU: 167k fine calls/s at 40.3ns + 60ns per record → predicted 0.401%, sampling lowered (46.6%)
     measured since the previous cycle: 513 records/s → records took 0.00154% of CPU
     + service.(*ClinicService).FindVets() []model.Vet  (frequent: most (count 200); expensive: more (mean-time 271µs))
     − x.Gone()
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	printDemoCycle(&out, &adminclient.Cycle{Cycle: analyzer.Cycle{Seq: 4, Err: "no candidates"}})
	if out.String() != "   cycle 4: failed: no candidates\n" {
		t.Errorf("a failed cycle: %q", out.String())
	}
}

func TestDemoHelpers(t *testing.T) {
	if got := errorStatuses(map[int]int64{200: 9, 404: 30, 400: 5}); got != "(400: 5, 404: 30; the users look up and validate some records that do not exist)" {
		t.Errorf("errorStatuses: %q", got)
	}
	if got := errorStatuses(map[int]int64{200: 9}); got != "" {
		t.Errorf("errorStatuses without errors: %q", got)
	}
	if got := bar(30*time.Second, time.Minute); got != "[############............]" {
		t.Errorf("bar: %q", got)
	}
}
