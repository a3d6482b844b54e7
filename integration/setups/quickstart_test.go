package setups

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/integration/internal/itest"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// quickStartProgram is the real third-party program the Quick start runs on:
// a main package at its module root with dependencies of its own (x/tools,
// x/mod, x/sync) that does real work with no arguments (it type-checks the
// package in the current directory and lists unchecked errors, exiting 1 when
// it finds some, as it does on its own tests).
const quickStartProgram, quickStartVersion = "github.com/kisielk/errcheck", "v1.9.0"

// The README's install line, and what the README says to run instead from a
// checkout: the module is not published, so the test installs this checkout.
const (
	installPrefix   = "go install github.com/tigrisgo/tigris/cmd/tigris@"
	checkoutInstall = "go install ./cmd/tigris"
)

// TestQuickStart runs the README's Quick start exactly as printed, line by
// line with nothing in between, on a copy of a real program, with a fresh
// GOPATH, module cache, build cache and tigris cache, GOFLAGS unset and the
// installed tigris found on PATH, as a newcomer's shell would. Only the
// install line is the checkout's (`go install ./cmd/tigris` in the checkout,
// which the README names for a checkout), and `cd your/module` goes to the
// copy. Every command must succeed; the program, run in fine mode, must do
// what the plain build does (same output, same exit status) and leave a trace
// with calls of both of its packages.
func TestQuickStart(t *testing.T) {
	itest.RequireGo(t)
	readme, err := os.ReadFile(filepath.Join(itest.RepoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "`"+checkoutInstall+"` there") {
		t.Fatalf("the README no longer says to run %q in a checkout; this test installs tigris that way", checkoutInstall)
	}
	lines := quickStartLines(t, string(readme))

	module := itest.CopyModule(t, nil, quickStartProgram, quickStartVersion)
	goLine := itest.GoLine(t, module)
	fresh := t.TempDir()
	gopath := filepath.Join(fresh, "gopath")
	env := []string{
		"GOPATH=" + gopath, "GOMODCACHE=", "GOBIN=", "GOFLAGS=", "GOWORK=",
		"GOCACHE=" + filepath.Join(fresh, "gocache"),
		"XDG_CACHE_HOME=" + filepath.Join(fresh, "cache"),
		"PATH=" + filepath.Join(gopath, "bin") + string(os.PathListSeparator) + os.Getenv("PATH"),
	}
	// The module cache is read-only; go clean empties it before TempDir's
	// cleanup removes the rest.
	t.Cleanup(func() { itest.Run(t, fresh, env, itest.GoExe, "clean", "-modcache") })

	var run, runOut string
	runCode := 0
	dir := fresh
	for _, line := range lines {
		cmd, where := line, dir
		switch fields := strings.Fields(line); {
		case strings.HasPrefix(line, installPrefix):
			cmd, where = checkoutInstall, itest.RepoRoot
		case fields[0] == "cd":
			dir = module
			continue
		}
		out, code := itest.Run(t, where, env, "/bin/sh", "-c", cmd)
		t.Logf("$ %s\n%s", cmd, out)
		if strings.Contains(cmd, "./app") {
			run, runOut, runCode = cmd, out, code
			continue
		}
		if code != 0 {
			t.Fatalf("the Quick start's %q fails (exit %d):\n%s", line, code, out)
		}
	}
	if run == "" {
		t.Fatal("the Quick start runs no ./app")
	}

	// What the plain build does, for comparison: after the Quick start, so
	// nothing runs in between.
	itest.Go(t, module, env, "build", "-o", "plain", ".")
	plainOut, plainCode := itest.Run(t, module, env, filepath.Join(module, "plain"))
	if runCode != plainCode || runOut != plainOut {
		t.Errorf("%q: exit %d with output\n%s\nthe plain build: exit %d with output\n%s", run, runCode, runOut, plainCode, plainOut)
	}
	if got := itest.GoLine(t, module); got != goLine {
		t.Errorf("the Quick start moved the go line from %s to %s", goLine, got)
	}
	traces, _ := filepath.Glob(filepath.Join(module, "tigris-out", "*.tgr"))
	if len(traces) == 0 {
		t.Fatalf("%q wrote no trace in tigris-out/", run)
	}
	calls := map[string]int{}
	for _, tr := range traces {
		for pkg, n := range itest.RecordsBy(t, tr, func(d *writer.ProbeDef) string { return d.Package }) {
			calls[pkg] += n
		}
	}
	for _, pkg := range []string{quickStartProgram, quickStartProgram + "/errcheck"} {
		if calls[pkg] == 0 {
			t.Errorf("the trace has no call of package %s (calls by package: %v)", pkg, calls)
		}
	}
}

// quickStartLines returns the command lines of the README's Quick start
// block, as printed.
func quickStartLines(t *testing.T, readme string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "\n## Quick start\n")
	if !ok {
		t.Fatal("the README has no Quick start section")
	}
	_, rest, ok = strings.Cut(rest, "```sh\n")
	if !ok {
		t.Fatal("the README's Quick start has no sh block")
	}
	block, _, _ := strings.Cut(rest, "```")
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "#") {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 || !strings.HasPrefix(lines[0], installPrefix) {
		t.Fatalf("the Quick start does not begin with %q:\n%s", installPrefix, block)
	}
	return lines
}
