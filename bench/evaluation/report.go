package evaluation

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tigrisgo/tigris/bench"
)

// ReadSummary reads the summary.json in dir that Report wrote and summarizes
// its runs again with this version's analysis (Summarize).
func ReadSummary(dir string) (*Summary, error) {
	path := filepath.Join(dir, "summary.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var sum Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if sum.Workload != Workload {
		return nil, fmt.Errorf("%s: not a petclinic evaluation (workload %q)", path, sum.Workload)
	}
	Summarize(&sum)
	return &sum, nil
}

// Report writes sum into dir: summary.json (everything), table.txt (what
// WriteTable writes) and throughput.svg (Chart).
func Report(dir string, sum *Summary) error {
	js, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the summary: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), append(js, '\n'), 0o666); err != nil {
		return err
	}
	var tb strings.Builder
	if err := WriteTable(&tb, sum); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "table.txt"), []byte(tb.String()), 0o666); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "throughput.svg"))
	if err != nil {
		return err
	}
	if err := bench.WriteLineChart(f, Chart(sum)); err != nil {
		f.Close()
		return fmt.Errorf("writing the chart: %w", err)
	}
	return f.Close()
}

// Chart is the paper's Fig. 4 for sum: no monitoring, full monitoring and
// phase 1 as levels, the two filters by sampling rate.
func Chart(sum *Summary) *bench.LineChart {
	p := sum.Plan
	c := &bench.LineChart{
		Title: "PetClinic throughput by sampling rate",
		Subtitle: fmt.Sprintf("%d run(s) × %s per configuration (mean, 95 %% CI); 5–20 users without think time; load generator on the same %d-CPU machine",
			p.Runs, p.Duration, sum.Env.NumCPU),
		XTitle: "sampling rate of the two-phase configurations",
		YTitle: "throughput, requests/s",
		Unit:   "req/s",
	}
	for _, s := range p.Sampling {
		c.X = append(c.X, fmt.Sprintf("%g%%", s))
	}
	series := map[string]*bench.ChartSeries{}
	for _, kind := range []string{KindRestricted, KindExpanded} {
		s := &bench.ChartSeries{Values: make([]float64, len(c.X)), CIs: make([]float64, len(c.X))}
		for i := range s.Values {
			s.Values[i] = math.NaN()
		}
		series[kind] = s
	}
	for _, cs := range sum.Configs {
		switch cs.Kind {
		case KindNone, KindPhase1, KindFull, KindOff, KindQuery, KindFineOne:
			c.Levels = append(c.Levels, bench.ChartLevel{Name: cs.Label, Value: cs.Throughput, CI: cs.CI95})
			if cs.Kind == KindNone {
				c.RelativeTo, c.RelativeToTitle = cs.Throughput, "% of no monitoring"
			}
		case KindRestricted, KindExpanded:
			s := series[cs.Kind]
			s.Name = cs.Label + ": " + cs.Filter
			if i := slices.Index(p.Sampling, cs.Sampling); i >= 0 {
				s.Values[i], s.CIs[i] = cs.Throughput, cs.CI95
			}
		}
	}
	for _, kind := range []string{KindRestricted, KindExpanded} {
		if s := series[kind]; s.Name != "" {
			c.Series = append(c.Series, *s)
		}
	}
	return c
}

// WriteTable writes the results table: a line per configuration, then what
// the columns mean and how busy the rest of the machine was.
func WriteTable(w io.Writer, sum *Summary) error {
	p := sum.Plan
	fmt.Fprintf(w, "PetClinic throughput (plan %s): %d run(s) per configuration, %s measured after %s of load, interleaved;\n",
		p.Name, p.Runs, p.Duration, p.Warmup)
	fmt.Fprintf(w, "5–20 users without think time; load generator and service on one machine (%d CPUs, %s); analysis every %s.\n",
		sum.Env.NumCPU, cmp.Or(sum.Env.CPU, sum.Env.GOARCH), p.Interval)
	fmt.Fprintf(w, "restricted: %s\nexpanded:   %s\n", p.Restricted, p.Expanded)
	if !sum.Complete {
		fmt.Fprintln(w, "INCOMPLETE: the plan stopped early; these are the runs done.")
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	hasRef := slices.ContainsFunc(sum.Configs, func(cs ConfigSummary) bool { return cs.Ratio != 0 })
	pct := func(x float64) string {
		if !hasRef {
			return "-"
		}
		return fmt.Sprintf("%.1f%%", 100*x)
	}
	fmt.Fprintln(tw, "configuration\tsampling\truns\treq/s\t± 95% CI\tvs none\t± 95% CI\toverhead\tCPU µs/req\tcalls/req\trecords/s\tdropped\tselected\t")
	for _, cs := range sum.Configs {
		sampling, selected := "-", "-"
		if cs.Sampling > 0 {
			sampling = fmt.Sprintf("%g%%", cs.Sampling)
		}
		if cs.Candidates > 0 {
			selected = fmt.Sprintf("%.1f of %.0f", cs.Selected, cs.Candidates)
		}
		records, dropped, calls := "-", "-", "-"
		if cs.Kind != KindNone {
			calls = fmt.Sprintf("%.1f", cs.CallsPerRequest)
		}
		if cs.RecordsPerSec > 0 {
			records = fmt.Sprintf("%.0f", cs.RecordsPerSec)
			dropped = fmt.Sprintf("%.2f%%", 100*cs.DroppedShare)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%s\t%s\t%s\t%s\t%.0f\t%s\t%s\t%s\t%s\t\n",
			cs.Name, sampling, cs.Runs, cs.Throughput, ciText(cs.CI95, cs.Runs, "%.1f"),
			pct(cs.Ratio), ciText(100*cs.RatioCI, cs.Runs, "%.1f%%"), pct(cs.Overhead),
			cs.CPUPerRequestUs, calls, records, dropped, selected)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var noAnswer int64
	for _, cs := range sum.Configs {
		noAnswer += cs.NoAnswer
	}
	var other, otherMax, runSecs float64
	for _, r := range sum.Runs {
		other += r.OtherCPUSeconds
		otherMax = max(otherMax, r.OtherCPUSeconds)
	}
	if n := len(sum.Runs); n > 0 {
		other /= float64(n)
		runSecs = float64(time.Duration(p.Warmup + p.Duration).Seconds())
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "vs none: mean throughput over the no-monitoring mean; overhead: 1 − that. CPU µs/req: the service's")
	fmt.Fprintln(w, "CPU time per request over its whole life. records/s: fine records made in the window; selected: functions")
	fmt.Fprintln(w, "the analyzer selected per cycle in the window, of the candidates.")
	if noAnswer > 0 {
		fmt.Fprintf(w, "warning: %d request(s) got no answer (timeouts or connection errors)\n", noAnswer)
	}
	if runSecs > 0 {
		fmt.Fprintf(w, "Other processes used %.2f CPU-s per run on average, %.2f at most, of the %.0f CPU-s a run has (%d CPUs × %.0f s).\n",
			other, otherMax, float64(sum.Env.NumCPU)*runSecs, sum.Env.NumCPU, runSecs)
	}
	return nil
}

// ciText is a confidence interval, "-" for a single run.
func ciText(ci float64, runs int, format string) string {
	if runs < 2 {
		return "-"
	}
	return fmt.Sprintf(format, ci)
}
