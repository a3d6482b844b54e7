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
	"strconv"
	"strings"
	"text/tabwriter"

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
// WriteTable writes), cpu.svg (CPUChart) and throughput.svg (Chart).
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
	for name, c := range map[string]*bench.LineChart{"cpu.svg": CPUChart(sum), "throughput.svg": Chart(sum)} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if err := bench.WriteLineChart(f, c); err != nil {
			f.Close()
			return fmt.Errorf("writing %s: %w", name, err)
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// figureLevel reports whether the charts draw cs as a level: the
// configurations without a sampling axis, of the module scope.
func figureLevel(cs *ConfigSummary) bool {
	switch cs.Kind {
	case KindNone:
		return true
	case KindPhase1, KindFull, KindOff:
		return cs.Scope == ScopeModule
	}
	return false
}

// CPUChart is the paper's Fig. 4 with the service's CPU per request instead
// of throughput: medians with their bootstrap intervals (drawn as half their
// width either side), no monitoring, phase 1, full and probes off as levels,
// the two filters by sampling rate; the right axis in % of no monitoring.
func CPUChart(sum *Summary) *bench.LineChart {
	c := &bench.LineChart{
		Title: "PetClinic CPU per request by sampling rate (every function of the module probed)",
		Subtitle: fmt.Sprintf("median of %d run(s) × %s per configuration, 95 %% bootstrap CI; service alone on one CPU, load generator on another",
			sum.Plan.Runs, sum.Plan.Duration),
		YTitle: "service CPU per request, µs",
		Unit:   "µs",
	}
	return fig4(c, sum, func(cs *ConfigSummary) (float64, float64) { return cs.CPUPerRequestUs, (cs.CPUHi - cs.CPULo) / 2 })
}

// Chart is the paper's Fig. 4 for sum: no monitoring, full monitoring and
// phase 1 as levels, the two filters by sampling rate.
func Chart(sum *Summary) *bench.LineChart {
	c := &bench.LineChart{
		Title: "PetClinic throughput by sampling rate",
		Subtitle: fmt.Sprintf("%d run(s) × %s per configuration (mean, 95 %% CI); 5–20 users without think time; %s",
			sum.Plan.Runs, sum.Plan.Duration, cmp.Or(sum.Pinning, "load generator on the same machine")),
		YTitle: "throughput, requests/s",
		Unit:   "req/s",
	}
	return fig4(c, sum, func(cs *ConfigSummary) (float64, float64) { return cs.Throughput, cs.CI95 })
}

// fig4 fills c with the module scope's configurations of sum: value gives
// each one's value and the half-width of its interval.
func fig4(c *bench.LineChart, sum *Summary, value func(*ConfigSummary) (v, ci float64)) *bench.LineChart {
	p := sum.Plan
	c.XTitle = "sampling rate of the two-phase configurations"
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
	for i := range sum.Configs {
		cs := &sum.Configs[i]
		v, ci := value(cs)
		switch {
		case figureLevel(cs):
			c.Levels = append(c.Levels, bench.ChartLevel{Name: cs.Label, Value: v, CI: ci})
			if cs.Kind == KindNone {
				c.RelativeTo, c.RelativeToTitle = v, "% of no monitoring"
			}
		case (cs.Kind == KindRestricted || cs.Kind == KindExpanded) && cs.Scope == ScopeModule:
			s := series[cs.Kind]
			s.Name = cs.Label + ": " + cs.Filter
			if i := slices.Index(p.Sampling, cs.Sampling); i >= 0 {
				s.Values[i], s.CIs[i] = v, ci
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

// WriteTable writes the results table: a line per configuration, then the
// scopes, the ground truth and the selections' quality, the cost model's
// cross-check, what the columns mean and how busy the rest of the machine
// was.
func WriteTable(w io.Writer, sum *Summary) error {
	p := sum.Plan
	fmt.Fprintf(w, "PetClinic evaluation (plan %s): %d run(s) per configuration, %s measured after %s of load, interleaved;\n",
		p.Name, p.Runs, p.Duration, p.Warmup)
	fmt.Fprintf(w, "5–20 users without think time; %d CPUs (%s), %s; analysis every %s.\n",
		sum.Env.NumCPU, cmp.Or(sum.Env.CPU, sum.Env.GOARCH), cmp.Or(sum.Pinning, "not pinned"), p.Interval)
	fmt.Fprintf(w, "restricted: %s\nexpanded:   %s\n", p.Restricted, p.Expanded)
	if !sum.Complete {
		fmt.Fprintln(w, "INCOMPLETE: the plan stopped early; these are the runs done.")
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	pct := func(r float64) string {
		if r == 0 || math.IsNaN(r) {
			return "-"
		}
		return fmt.Sprintf("%+.1f%%", 100*(r-1))
	}
	fmt.Fprintln(tw, "configuration\tscope\tsampling\truns\tCPU µs/req\t95% CI\tvs none\t95% CI\tvs none, paired\t95% CI\tmodel\treq/s\t95% CI\tcalls/req\trecords/s\tGC/1k req\tprecision\trecall\tstability\t")
	for _, cs := range sum.Configs {
		if !cs.Costed() {
			continue
		}
		sampling, calls, records, model := "-", "-", "-", "-"
		if cs.Sampling > 0 {
			sampling = fmt.Sprintf("%g%%", cs.Sampling)
		}
		if cs.Kind != KindNone {
			calls = fmt.Sprintf("%.1f", cs.CallsPerRequest)
		}
		if cs.RecordsPerSec > 0 {
			records = fmt.Sprintf("%.0f", cs.RecordsPerSec)
		}
		if cs.CPURatio > 0 && cs.Kind != KindNone {
			base := cs.CPUPerRequestUs / cs.CPURatio
			model = fmt.Sprintf("%+.1f–%.1f%%", 100*cs.ModelLo/base, 100*cs.ModelHi/base)
			if !cs.ModelOK && cs.Runs > 1 {
				model += " ≠"
			}
		}
		prec, rec, stab := "-", "-", "-"
		if q := cs.Quality; q != nil {
			prec, rec, stab = fmt.Sprintf("%.2f", q.Precision), fmt.Sprintf("%.2f", q.Recall), fmt.Sprintf("%.2f", q.Stability)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%s\t%s\t%s\t%.1f\t%s\t%s\t%s\t\n",
			cs.Name, cmp.Or(cs.Scope, "-"), sampling, cs.Runs, cs.CPUPerRequestUs, interval(cs.CPULo, cs.CPUHi, cs.Runs, "%.0f"),
			pct(cs.CPURatio), intervalPct(cs.CPURatioLo, cs.CPURatioHi, cs.Runs),
			pct(cs.PairedRatio), intervalPct(cs.PairedRatioLo, cs.PairedRatioHi, cs.PairedRounds),
			model, cs.MedianThroughput, interval(cs.ThroughputLo, cs.ThroughputHi, cs.Runs, "%.0f"),
			calls, records, cs.GCsPerKRequest, prec, rec, stab)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writeScopes(w, sum)
	writeQuality(w, sum)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "CPU µs/req: the service's CPU time in the window over its requests, median of the runs, with its 95 % bootstrap")
	fmt.Fprintln(w, "interval; vs none: that over no monitoring's median (both resampled); vs none, paired: the median over the rounds")
	fmt.Fprintln(w, "of each round's run over no monitoring's run of the same round (same load), the rounds resampled, so a slow round")
	fmt.Fprintln(w, "does not widen it. model: the extra CPU the per-call costs predict")
	fmt.Fprintf(w, "(%s), hot–cold; ≠ marks a prediction outside the measured (unpaired) interval.\n", sum.Costs.Source)
	fmt.Fprintln(w, "req/s: median throughput. precision, recall: the live selections of every cycle against the ground truth;")
	fmt.Fprintln(w, "stability: mean Jaccard similarity of consecutive cycles' selections. GC/1k req: the service's garbage")
	fmt.Fprintln(w, "collections per 1,000 requests in the windows.")
	if sum.EarlyCPU > 0 {
		fmt.Fprintf(w, "Order: runs in the first half of their round used %.1f%% of their configuration's median CPU per request, in the second half %.1f%%.\n",
			100*sum.EarlyCPU, 100*sum.LateCPU)
	}
	var noAnswer int64
	for _, cs := range sum.Configs {
		noAnswer += cs.NoAnswer
	}
	if noAnswer > 0 {
		fmt.Fprintf(w, "warning: %d request(s) got no answer (timeouts or connection errors)\n", noAnswer)
	}
	var other, otherMax, load float64
	for _, r := range sum.Runs {
		other += r.OtherCPUSeconds
		otherMax = max(otherMax, r.OtherCPUSeconds)
		load += r.LoadAvg
	}
	if n := float64(len(sum.Runs)); n > 0 {
		fmt.Fprintf(w, "Other processes used %.2f CPU-s per run on average, %.2f at most; load average %.1f on average before a run.\n",
			other/n, otherMax, load/n)
	}
	return nil
}

// writeScopes lists the builds and their probes.
func writeScopes(w io.Writer, sum *Summary) {
	if len(sum.Scopes) == 0 {
		return
	}
	fmt.Fprintln(w)
	for _, sc := range sum.Scopes {
		fmt.Fprintf(w, "scope %s: %s, %d probes\n", sc.Name, sc.Label, sum.ScopeProbes[sc.Name])
	}
}

// writeQuality writes the ground truths and the shift runs.
func writeQuality(w io.Writer, sum *Summary) {
	var lines []string
	for _, c := range sum.Plan.Configs {
		if c.Kind == KindTruth {
			lines = append(lines, truthLines(sum, c)...)
		}
	}
	for _, cs := range sum.Configs {
		if q := cs.Quality; q != nil && cs.Kind != KindShift {
			lines = append(lines, fmt.Sprintf("  %s: %d of %d cycles judged against the truth window where they looked, the others against the consensus; against the consensus alone precision %.2f, recall %.2f",
				cs.Name, q.Aligned, q.Cycles, q.ConsensusPrecision, q.ConsensusRecall))
		}
	}
	for _, cs := range sum.Configs {
		q := cs.Quality
		if cs.Kind != KindShift || q == nil {
			continue
		}
		lines = append(lines, fmt.Sprintf("  %s (%s, then %s): followed the switch in %s cycle(s); precision %.2f, recall %.2f over %d cycles",
			cs.Name, strings.Join(cs.Patterns, "+"), strings.Join(cs.Then, "+"), followText(q.FollowCycles), q.Precision, q.Recall, q.Cycles))
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Ground truth (tigris analyze over a complete fine trace of the same load, one analysis window at a time; the consensus: what it selects in most windows of the measured window) and the shift of pattern:")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// truthLines describe the ground truths of truth configuration c: for each
// filter the selections of its rounds (rounds that agree on one line), how
// well the rounds' windows agree with them, and what the traces held.
func truthLines(sum *Summary, c Config) []string {
	var runs []*RunResult
	for i := range sum.Runs {
		if r := &sum.Runs[i]; r.Config == c.Name && r.Truth != nil {
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		return nil
	}
	slices.SortFunc(runs, func(a, b *RunResult) int { return cmp.Compare(a.Run, b.Run) })
	var lines []string
	p := sum.Plan
	for _, f := range []struct{ name, text string }{{"restricted", p.Restricted}, {"expanded", p.Expanded}} {
		var texts []string
		rounds := map[string][]string{}
		var wp, wr float64
		windows := 0
		for _, r := range runs {
			t := selectionText(r.Truth[f.text])
			if _, ok := rounds[t]; !ok {
				texts = append(texts, t)
			}
			rounds[t] = append(rounds[t], strconv.Itoa(r.Run))
			p, rc, n := truthAgreement(r, f.text)
			wp, wr, windows = wp+p*float64(n), wr+rc*float64(n), windows+n
		}
		for _, t := range texts {
			which := ""
			if len(texts) > 1 {
				which = ", round " + strings.Join(rounds[t], ", ")
				if len(rounds[t]) > 1 {
					which = ", rounds " + strings.Join(rounds[t], ", ")
				}
			}
			lines = append(lines, fmt.Sprintf("  %s, %s filter%s: %s", c.Label, f.name, which, t))
		}
		if windows > 0 {
			lines = append(lines, fmt.Sprintf("    the consensus against its %d windows: precision %.2f, recall %.2f",
				windows, wp/float64(windows), wr/float64(windows)))
		}
	}
	var called, records []string
	for _, r := range runs {
		called = append(called, strconv.Itoa(r.TruthFunctions))
		records = append(records, strconv.FormatUint(r.Records, 10))
	}
	lines = append(lines, fmt.Sprintf("    (%s functions called, %s fine records, by round)", strings.Join(called, "/"), strings.Join(records, "/")))
	return lines
}

func selectionText(fs []string) string {
	if len(fs) == 0 {
		return "nothing"
	}
	short := mapSlice(fs, shortSig)
	for i, f := range short {
		short[i] = funcName(strings.TrimPrefix(f, "func "))
	}
	return strings.Join(short, ", ")
}

// funcName is a signature without its parameters and results:
// "repository.(*OwnerRepository).FindByLastName" of
// "repository.(*OwnerRepository).FindByLastName(context.Context, string) ...".
func funcName(sig string) string {
	from := 0
	if k := strings.Index(sig, ")."); k > 0 {
		from = k + 2
	}
	if j := strings.IndexByte(sig[from:], '('); j >= 0 {
		return sig[:from+j]
	}
	return sig
}

func followText(ks []int) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		switch k {
		case 0:
			parts[i] = "no"
		default:
			parts[i] = strconv.Itoa(k)
		}
	}
	return strings.Join(parts, ", ")
}

// interval is "[lo, hi]", "-" for a single run.
func interval(lo, hi float64, runs int, format string) string {
	if runs < 2 || math.IsNaN(lo) {
		return "-"
	}
	return fmt.Sprintf("["+format+", "+format+"]", lo, hi)
}

// intervalPct is a ratio interval in percent over 1.
func intervalPct(lo, hi float64, runs int) string {
	if runs < 2 || lo == 0 || math.IsNaN(lo) {
		return "-"
	}
	return fmt.Sprintf("[%+.1f%%, %+.1f%%]", 100*(lo-1), 100*(hi-1))
}
