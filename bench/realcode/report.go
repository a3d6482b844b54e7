package realcode

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Report summarizes r and writes into dir results.json (r with its summary),
// table.txt (WriteTable) and table.md (the main table in Markdown). It returns
// the summary.
func Report(dir string, r *Results) (*Summary, error) {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	s := Summarize(r)
	r.Summary = s
	if err := WriteResults(filepath.Join(dir, "results.json"), r); err != nil {
		return s, err
	}
	var txt, md strings.Builder
	WriteTable(&txt, r, s)
	WriteMarkdown(&md, r, s)
	if err := os.WriteFile(filepath.Join(dir, "table.txt"), []byte(txt.String()), 0o666); err != nil {
		return s, err
	}
	return s, os.WriteFile(filepath.Join(dir, "table.md"), []byte(md.String()), 0o666)
}

// formatRatio writes a ratio with three significant digits at most: 1.06,
// 12.4, 231.
func formatRatio(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return "n/a"
	case x < 9.995:
		return fmt.Sprintf("%.2f", x)
	case x < 99.95:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.0f", x)
}

// Cell formats an interval as "1.06 × [1.03, 1.09]"; "~" before it marks an
// interval that holds 1; a single round has no interval.
func Cell(iv Interval) string {
	if iv.Rounds == 0 || math.IsNaN(iv.Ratio) {
		return "—"
	}
	s := formatRatio(iv.Ratio) + " ×"
	if !math.IsNaN(iv.Lo) && !math.IsNaN(iv.Hi) {
		s += " [" + formatRatio(iv.Lo) + ", " + formatRatio(iv.Hi) + "]"
		if iv.Holds1() {
			s = "~" + s
		}
	}
	return s
}

// probesCell is "63, 97 / 100": the functions the default and all builds
// probe, of those the module has.
func probesCell(mr *ModuleResult) string {
	if mr == nil {
		return ""
	}
	d, okD := mr.Probes[BuildDefault]
	a, okA := mr.Probes[BuildAll]
	switch {
	case okD && okA:
		return fmt.Sprintf("%d, %d / %d", d.Instrumented, a.Instrumented, max(d.Functions, a.Functions))
	case okD:
		return fmt.Sprintf("%d / %d", d.Instrumented, d.Functions)
	case okA:
		return fmt.Sprintf("all: %d / %d", a.Instrumented, a.Functions)
	}
	return ""
}

func (r *Results) moduleResult(name string) *ModuleResult {
	for i := range r.Modules {
		if r.Modules[i].Name == name {
			return &r.Modules[i]
		}
	}
	return nil
}

// measured are the plan's variants other than plain.
func (r *Results) measured() []Variant {
	var out []Variant
	for _, v := range r.Plan.Variants {
		if v.Name != "plain" {
			out = append(out, v)
		}
	}
	return out
}

// header writes the lines both tables start with.
func header(w io.Writer, r *Results, prefix string) {
	p := r.Plan
	fmt.Fprintf(w, "%stigris bench --workload realcode, plan %s: %d modules, %d rounds, variants interleaved in rotating order; -test.benchtime=%v (fine-all %v) -test.cpu=1\n",
		prefix, p.Name, len(p.Modules), p.Rounds, p.BenchTime, p.FineBenchTime)
	who := r.TigrisVersion
	if r.TigrisCommit != "" {
		who += " (commit " + r.TigrisCommit + ")"
	}
	e := r.Env
	fmt.Fprintf(w, "%s%s; %s %s/%s, %d CPUs %s, load %.1f at the start, %.1f at the end; %s, %s\n", prefix, who,
		e.GoVersion, e.GOOS, e.GOARCH, e.NumCPU, e.CPU, e.LoadAvg, r.LoadAvgEnd,
		r.Started.Format("2006-01-02 15:04"), r.Finished.Sub(r.Started).Round(time.Second))
	if e.NumCPU > 0 && (e.LoadAvg > float64(e.NumCPU) || r.LoadAvgEnd > float64(e.NumCPU)) {
		fmt.Fprintf(w, "%sWARNING: the load average exceeded the number of CPUs: the machine was busy, the intervals are wider\n", prefix)
	}
}

// WriteTable writes the report: the module × variant table of geometric
// means with intervals, the overall geometric mean, what every variant is,
// the notes, and every benchmark's own ratios.
func WriteTable(w io.Writer, r *Results, s *Summary) {
	header(w, r, "")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Time per operation against the plain build: per module the geometric mean over its benchmarks,")
	fmt.Fprintln(w, "with the 95 % confidence interval across rounds (Student's t on the rounds' mean log ratios);")
	fmt.Fprintln(w, "~ marks an interval that holds 1 (no difference shown). probes: functions probed by the")
	fmt.Fprintln(w, "default and the *-all builds, of the module's functions (tigris match ./...).")
	fmt.Fprintln(w)
	vs := r.measured()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "module\tbenchmarks\tprobes")
	for _, v := range vs {
		fmt.Fprint(tw, "\t"+v.Name)
	}
	fmt.Fprintln(tw)
	for _, m := range s.Modules {
		fmt.Fprintf(tw, "%s\t%d\t%s", m.Name, len(m.Benchmarks), probesCell(r.moduleResult(m.Name)))
		for _, v := range vs {
			fmt.Fprint(tw, "\t"+Cell(m.Variants[v.Name]))
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprint(tw, "geometric mean\t\t")
	for _, v := range vs {
		fmt.Fprint(tw, "\t"+Cell(s.Overall[v.Name]))
	}
	fmt.Fprintln(tw)
	tw.Flush()

	fmt.Fprintln(w)
	fmt.Fprintln(w, "Variants (one test binary per build, the mode from TIGRIS_MODE):")
	for _, v := range r.Plan.Variants {
		fmt.Fprintf(w, "  %-10s %s\n", v.Name, v.What)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Modules:")
	for _, m := range r.Plan.Modules {
		fmt.Fprintf(w, "  %-10s %s@%s (%s), package %s\n", m.Name, m.Path, m.Version, m.What, m.Package)
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Notes:")
		for _, n := range r.Notes {
			fmt.Fprintln(w, "  "+n)
		}
	}
	writeTargets(w, r, s)
	var failed []string
	for _, run := range r.Runs {
		if run.Error != "" {
			failed = append(failed, fmt.Sprintf("  round %d, %s %s: %s", run.Round+1, run.Module, run.Variant, firstLine(run.Error)))
		}
	}
	if len(failed) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "Failed runs (%d, left out):\n", len(failed))
		for _, f := range failed {
			fmt.Fprintln(w, f)
		}
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "Per benchmark: plain time per operation (median over rounds) and each variant's ratio to it")
	fmt.Fprintln(w, "(geometric mean over rounds; the intervals are in results.json):")
	fmt.Fprintln(w)
	// Right-aligned numbers; the names padded to one width stay left-aligned.
	width := len("benchmark")
	for _, m := range s.Modules {
		for _, b := range m.Benchmarks {
			width = max(width, len(benchLabel(m.Name, b.Name)))
		}
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\tplain ns/op\t", width, "benchmark")
	for _, v := range vs {
		fmt.Fprint(tw, v.Name+"\t")
	}
	fmt.Fprintln(tw)
	for _, m := range s.Modules {
		for _, b := range m.Benchmarks {
			fmt.Fprintf(tw, "%-*s\t%s\t", width, benchLabel(m.Name, b.Name), formatNs(b.PlainNs))
			for _, v := range vs {
				iv, ok := b.Variants[v.Name]
				if !ok || iv.Rounds == 0 {
					fmt.Fprint(tw, "—\t")
					continue
				}
				fmt.Fprint(tw, formatRatio(iv.Ratio)+"\t")
			}
			fmt.Fprintln(tw)
		}
	}
	tw.Flush()
}

// WriteMarkdown writes the module × variant table in Markdown, for
// docs/performance.md.
func WriteMarkdown(w io.Writer, r *Results, s *Summary) {
	vs := r.measured()
	fmt.Fprint(w, "| module | benchmarks | probes (default, all / functions) |")
	for _, v := range vs {
		fmt.Fprintf(w, " %s |", v.Name)
	}
	fmt.Fprint(w, "\n|---|---|---|")
	for range vs {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for _, m := range s.Modules {
		mod := m.Name
		for _, pm := range r.Plan.Modules {
			if pm.Name == m.Name {
				mod = fmt.Sprintf("%s %s (%s)", pm.Name, pm.Version, pm.What)
			}
		}
		fmt.Fprintf(w, "| %s | %d | %s |", mod, len(m.Benchmarks), probesCell(r.moduleResult(m.Name)))
		for _, v := range vs {
			fmt.Fprintf(w, " %s |", Cell(m.Variants[v.Name]))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprint(w, "| **geometric mean** | | |")
	for _, v := range vs {
		fmt.Fprintf(w, " **%s** |", Cell(s.Overall[v.Name]))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	if hasTargets(r) {
		fmt.Fprintln(w, "| module | samples | inclusive | exclusive | measured | own time inlined | own time small | off-all ÷ floor-all |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
		for _, m := range s.Modules {
			fmt.Fprintf(w, "| %s | %s |\n", m.Name, strings.Join(targetCells(r, m), " | "))
		}
		fmt.Fprintln(w)
	}
	header(w, r, "")
}

// percent formats a share as "93 %"; "—" for none.
func percent(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "—"
	}
	return fmt.Sprintf("%.0f %%", 100*x)
}

// overheadRatio is a's overhead over b's, (a−1)/(b−1), as "1.32" ("0" when
// a shows none); "n/a" where b shows none.
func overheadRatio(a, b Interval) string {
	if a.Rounds == 0 || b.Rounds == 0 || math.IsNaN(a.Ratio) || math.IsNaN(b.Ratio) || b.Ratio <= 1 {
		return "n/a"
	}
	if a.Ratio <= 1 {
		return "0"
	}
	return formatRatio((a.Ratio - 1) / (b.Ratio - 1))
}

// hasTargets reports whether r has shares or both off-all and floor-all.
func hasTargets(r *Results) bool {
	for _, m := range r.Modules {
		if m.Shares != nil {
			return true
		}
	}
	has := func(name string) bool {
		return slices.ContainsFunc(r.Plan.Variants, func(v Variant) bool { return v.Name == name })
	}
	return has("off-all") && has("floor-all")
}

// targetCells are a module's cells of the targets table after its name.
func targetCells(r *Results, m ModuleSummary) []string {
	cells := []string{"—", "—", "—", "—", "—", "—"}
	if mr := r.moduleResult(m.Name); mr != nil && mr.Shares != nil {
		sh := mr.Shares
		cells = []string{strconv.Itoa(sh.Samples), percent(sh.Inclusive), percent(sh.Exclusive), percent(sh.Measured),
			percent(sh.ExclusiveInlined), percent(sh.ExclusiveSmall)}
	}
	return append(cells, overheadRatio(m.Variants["off-all"], m.Variants["floor-all"]))
}

// writeTargets writes the table of the targets: where each module's CPU
// time is against the default build's probes, and off-all's overhead over
// floor-all's.
func writeTargets(w io.Writer, r *Results, s *Summary) {
	if !hasTargets(r) {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Against the targets. From a CPU profile of the plain build's benchmarks (-test.benchtime=%v each),\n", r.Plan.ProfileTime)
	fmt.Fprintln(w, "the module's CPU time against the functions the config tigris init writes probes (tigris match):")
	fmt.Fprintln(w, "inclusive is theirs over all the module's functions' (pprof's cum; target ≥ 90 %), exclusive their")
	fmt.Fprintln(w, "own time over the module's own (pprof's flat; target ≥ 60 %), measured the module's time with a")
	fmt.Fprintln(w, "probed function on the stack (what the probes' statistics cover); own time inlined and small:")
	fmt.Fprintln(w, "the module's own time in functions without a probe because the compiler inlines them or they are")
	fmt.Fprintln(w, "too small to be worth one. off-all ÷ floor-all: off-all's overhead over floor-all's (target ≤ 1.5).")
	fmt.Fprintln(w)
	width := len("module")
	for _, m := range s.Modules {
		width = max(width, len(m.Name))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\tsamples\tinclusive\texclusive\tmeasured\town time inlined\town time small\toff-all ÷ floor-all\t\n", width, "module")
	for _, m := range s.Modules {
		fmt.Fprintf(tw, "%-*s\t%s\t\n", width, m.Name, strings.Join(targetCells(r, m), "\t"))
	}
	tw.Flush()
	var lines []string
	for _, m := range s.Modules {
		mr := r.moduleResult(m.Name)
		if mr == nil || mr.Shares == nil {
			continue
		}
		if fs := mr.Shares.Unprobed; len(fs) > 0 {
			lines = append(lines, fmt.Sprintf("  %-*s own time without a probe: %s", width, m.Name, funcShares(fs)))
		}
		if fs := mr.Shares.Unmeasured; len(fs) > 0 {
			lines = append(lines, fmt.Sprintf("  %-*s time no probe measures, entering at: %s", width, m.Name, funcShares(fs)))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "The functions without a probe with the most own time (share of the module's own time), and where")
		fmt.Fprintln(w, "the time no probe measures enters the module (its outermost function there; share of its time):")
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
	}
}

// funcShares is "fastjson.skipWS (small) 12 %, …", package paths cut.
func funcShares(fs []FuncShare) string {
	var parts []string
	for _, f := range fs {
		name := f.Name
		pkg := name
		if i := strings.IndexAny(pkg, "[("); i >= 0 {
			pkg = pkg[:i] // a type argument's path stays
		}
		if i := strings.LastIndexByte(pkg, '/'); i >= 0 {
			name = name[i+1:]
		}
		parts = append(parts, fmt.Sprintf("%s (%s) %s", name, f.Why, percent(f.Share)))
	}
	return strings.Join(parts, ", ")
}

func benchLabel(module, bench string) string {
	return module + " " + strings.TrimPrefix(bench, "Benchmark")
}

func formatNs(x float64) string {
	switch {
	case x == 0 || math.IsNaN(x):
		return "—"
	case x < 100:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.0f", x)
}

// Describe prints what the plan will do.
func Describe(w io.Writer, p Plan, out string) {
	var names []string
	for _, m := range p.Modules {
		names = append(names, m.Name)
	}
	var vs []string
	for _, v := range p.Variants {
		vs = append(vs, v.Name)
	}
	fmt.Fprintf(w, "realcode: plan %s: %s; %d rounds of %s; -test.benchtime=%v (fine %v); results in %s\n",
		p.Name, strings.Join(names, ", "), p.Rounds, strings.Join(vs, ", "), p.BenchTime, p.FineBenchTime, out)
}
