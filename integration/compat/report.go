package compat

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Row is one suite's line of the report.
type Row struct {
	Suite         Suite
	Plain, Inst   *Result     // the test runs
	BuildPlain    *Result     // clean builds (Runner.Build), nil when not measured
	BuildInst     *Result     //
	Traces        *TraceStats // of the instrumented run
	Diffs         []string    // Compare(Plain, Inst)
	Unexpected    []string    // differences neither expected nor flaky
	Missing       []string    // expected differences that did not occur
	Flaky         []string    // differences that went away on a retry
	TraceProblems []string    // Traces.Check
}

// OK reports whether the suite passed: identical verdicts and sane traces.
func (r *Row) OK() bool {
	return len(r.Unexpected) == 0 && len(r.Missing) == 0 && len(r.TraceProblems) == 0
}

// WriteMarkdown writes the report as Markdown tables.
func WriteMarkdown(w io.Writer, rows []*Row) error {
	var b strings.Builder
	b.WriteString("| suite | version | tests pass/fail/skip | verdicts | probes (packages) | fine records read | dropped | trace | test wall plain → tigris | peak RSS plain → tigris |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		version := r.Suite.Version
		if r.Suite.Std() {
			version = "std"
		}
		pass, fail, skip := r.Plain.Counts()
		var notes []string
		if n := len(r.Diffs) - len(r.Unexpected) - len(r.Flaky); n > 0 {
			notes = append(notes, fmt.Sprintf("%d known", n))
		}
		if len(r.Flaky) > 0 {
			notes = append(notes, fmt.Sprintf("%d flaky, same on retry", len(r.Flaky)))
		}
		if len(r.Suite.Exclude) > 0 {
			notes = append(notes, fmt.Sprintf("%d exclusion", len(r.Suite.Exclude)))
		}
		verdict := "identical"
		switch {
		case len(r.Unexpected) > 0:
			verdict = fmt.Sprintf("**%d differ**", len(r.Unexpected))
		case len(r.Missing) > 0:
			verdict = fmt.Sprintf("**%d expected differences missing**", len(r.Missing))
		}
		if len(notes) > 0 {
			verdict += " (" + strings.Join(notes, ", ") + ")"
		}
		probes, pkgs := 0, 0
		var records, bytes int64
		var lost uint64
		if r.Traces != nil {
			probes, pkgs = r.Traces.OwnProbes(r.Suite)
			records, lost, bytes = r.Traces.OwnRecords(r.Suite), r.Traces.Lost, r.Traces.Bytes
		}
		if r.Inst != nil {
			lost = max(lost, r.Inst.LostAtExit) // the exit lines count what a truncated read misses
		}
		recs := fmt.Sprint(records)
		if r.Traces != nil && r.Traces.Truncated > 0 {
			recs = "≥ " + recs // some files were read in part
		}
		if len(r.TraceProblems) > 0 {
			verdict += "; **trace: " + strings.Join(r.TraceProblems, "; ") + "**"
		}
		fmt.Fprintf(&b, "| %s | %s | %d/%d/%d | %s | %d (%d) | %s | %d | %s | %s → %s (×%.2f) | %s → %s (×%.2f) |\n",
			r.Suite.Name, version, pass, fail, skip, verdict, probes, pkgs, recs, lost, mib(bytes),
			seconds(r.Plain.Wall), seconds(r.Inst.Wall), ratio(float64(r.Inst.Wall), float64(r.Plain.Wall)),
			mib(r.Plain.MaxRSS), mib(r.Inst.MaxRSS), ratio(float64(r.Inst.MaxRSS), float64(r.Plain.MaxRSS)))
	}
	var builds []*Row
	for _, r := range rows {
		if r.BuildPlain != nil && r.BuildInst != nil {
			builds = append(builds, r)
		}
	}
	if len(builds) > 0 {
		b.WriteString("\nClean builds of the test binaries (empty GOCACHE, `go test -run=^$`):\n\n")
		b.WriteString("| suite | build wall plain → tigris | peak RSS plain → tigris |\n|---|---|---|\n")
		for _, r := range builds {
			fmt.Fprintf(&b, "| %s | %s → %s (×%.2f) | %s → %s (×%.2f) |\n", r.Suite.Name,
				seconds(r.BuildPlain.Wall), seconds(r.BuildInst.Wall), ratio(float64(r.BuildInst.Wall), float64(r.BuildPlain.Wall)),
				mib(r.BuildPlain.MaxRSS), mib(r.BuildInst.MaxRSS), ratio(float64(r.BuildInst.MaxRSS), float64(r.BuildPlain.MaxRSS)))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

func mib(n int64) string {
	switch {
	case n == 0:
		return "?"
	case n < 1<<20:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
