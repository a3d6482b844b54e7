package compat_test

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/integration/compat"
	"github.com/tigrisgo/tigris/integration/internal/itest"
)

// TestMain sets up the integration harness (the tigris binary, the shared
// GOCACHE). TestCompat lives here rather than in package integration so that
// it has a test timeout of its own.
func TestMain(m *testing.M) { os.Exit(itest.Main(m)) }

// TestCompat runs real third-party modules' and standard-library packages' own
// test suites plainly and through tigris (every function of the suite's
// packages instrumented, fine mode, the async writer on) and requires the same
// verdict for every test; see integration/compat.
//
// TIGRIS_COMPAT selects the suites: unset, the CI subset (two small modules, a
// few std packages); "full", every suite; "off", none; otherwise a
// comma-separated list of suite names. TIGRIS_COMPAT_BUILD=clean also measures
// clean builds (empty GOCACHE) of every suite's test binaries, plain and
// instrumented. TIGRIS_COMPAT_REPORT=FILE writes the Markdown report to FILE.
func TestCompat(t *testing.T) {
	sel := os.Getenv("TIGRIS_COMPAT")
	if sel == "off" {
		t.Skip("TIGRIS_COMPAT=off")
	}
	itest.RequireGo(t)
	if proxy := strings.TrimSpace(itest.Go(t, "", nil, "env", "GOPROXY")); proxy == "off" {
		t.Skip("GOPROXY=off: the suites' modules come from the module proxy")
	}
	suites := compat.Select(sel == "full")
	if sel != "" && sel != "full" {
		suites = nil
		names := strings.Split(sel, ",")
		for _, s := range compat.All() {
			if slices.Contains(names, s.Name) {
				suites = append(suites, s)
			}
		}
		if len(suites) == 0 {
			t.Fatalf("TIGRIS_COMPAT=%q names no suite", sel)
		}
	}

	dir := t.TempDir()
	if err := compat.WriteModule(dir, itest.RepoRoot, itest.GoDirective, suites); err != nil {
		t.Fatal(err)
	}
	r := &compat.Runner{
		Go:         itest.GoExe,
		Tigris:     itest.TigrisBin,
		Dir:        dir,
		Env:        itest.Env(),
		Out:        t.TempDir(),
		CleanBuild: os.Getenv("TIGRIS_COMPAT_BUILD") == "clean",
	}
	ctx := context.Background()
	if err := r.Prepare(ctx, suites); err != nil {
		t.Fatal(err)
	}
	var rows []*compat.Row
	for _, s := range suites {
		t.Run(s.Name, func(t *testing.T) {
			row := runSuite(t, ctx, r, s)
			if row != nil {
				rows = append(rows, row)
			}
		})
	}
	var report bytes.Buffer
	if err := compat.WriteMarkdown(&report, rows); err != nil {
		t.Fatal(err)
	}
	t.Logf("compatibility report:\n%s", report.Bytes())
	if name := os.Getenv("TIGRIS_COMPAT_REPORT"); name != "" {
		if err := os.WriteFile(name, report.Bytes(), 0o666); err != nil {
			t.Error(err)
		}
	}
}

// runSuite runs one suite both ways and reports every difference.
func runSuite(t *testing.T, ctx context.Context, r *compat.Runner, s compat.Suite) *compat.Row {
	row := &compat.Row{Suite: s}
	var err error
	if r.CleanBuild {
		if row.BuildPlain, err = r.Build(ctx, s, compat.Plain); err != nil {
			t.Fatalf("clean plain build: %v", err)
		}
		if row.BuildInst, err = r.Build(ctx, s, compat.Instrumented); err != nil {
			t.Fatalf("clean instrumented build: %v", err)
		}
	}
	if row.Plain, err = r.Run(ctx, s, compat.Plain); err != nil {
		t.Fatalf("plain run: %v", err)
	}
	if row.Inst, err = r.Run(ctx, s, compat.Instrumented); err != nil {
		t.Fatalf("instrumented run: %v", err)
	}
	row.Diffs = compat.Compare(row.Plain.Verdicts, row.Inst.Verdicts)
	row.Unexpected, row.Missing = s.Unexpected(row.Diffs)
	if len(row.Unexpected) > 0 {
		// Tests whose verdict depends on timing or random input: a difference
		// that goes away when the test runs again both ways is not tigris's.
		if row.Unexpected, row.Flaky, err = r.Retry(ctx, s, row.Unexpected, 2); err != nil {
			t.Fatalf("retrying the differing tests: %v", err)
		}
		for _, f := range row.Flaky {
			t.Logf("flaky, same verdict on retry: %s", f)
		}
	}
	if len(row.Unexpected) > 0 {
		t.Errorf("%d verdicts differ between go test and tigris go test:\n%s\n--- plain run's failures:\n%s\n--- instrumented run's failures:\n%s",
			len(row.Unexpected), strings.Join(row.Unexpected, "\n"), tail(row.Plain.Output), tail(row.Inst.Output))
	}
	for _, k := range row.Missing {
		t.Errorf("%s: the expected difference (%s) did not occur; remove it from the suite", k, s.Expected[k])
	}
	if pass, _, _ := row.Plain.Counts(); pass == 0 {
		t.Errorf("no test passed in the plain run:\n%s", tail(row.Plain.Output))
	}
	if row.Traces, err = compat.ReadTraces(r.TraceDir(s)); err != nil {
		t.Fatalf("reading the traces: %v", err)
	}
	// Fine traces of whole test suites reach gigabytes: keep one suite's at a time.
	if err := os.RemoveAll(r.TraceDir(s)); err != nil {
		t.Error(err)
	}
	row.TraceProblems = row.Traces.Check(s, row.Inst.LostAtExit)
	for _, p := range row.TraceProblems {
		t.Error(p)
	}
	return row
}

// tail returns the last 8 KiB of b.
func tail(b []byte) []byte {
	if len(b) > 8<<10 {
		return append([]byte("...\n"), b[len(b)-8<<10:]...)
	}
	return b
}
