package buildcost

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/integration/internal/itest"
	"github.com/tigrisgo/tigris/rewriter"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// compileLine matches the compile commands `go build -x` prints, with or
// without tigris in front, and captures the package (-p).
var compileLine = regexp.MustCompile(`/compile(?:\.exe)? .*?-p (\S+)`)

// compiled runs a build with -x and returns the import paths it compiled,
// sorted, and whether it linked.
func compiled(t *testing.T, dir string, env []string, exe string, args ...string) (pkgs []string, linked bool) {
	t.Helper()
	out, code := itest.Run(t, dir, env, exe, args...)
	if code != 0 {
		t.Fatalf("%s %s: exit %d\n%s", filepath.Base(exe), strings.Join(args, " "), code, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if m := compileLine.FindStringSubmatch(line); m != nil && !strings.Contains(line, "-V=full") {
			pkgs = append(pkgs, m[1])
		}
		if strings.Contains(line, "/link ") && strings.Contains(line, "-o ") {
			linked = true
		}
	}
	sort.Strings(pkgs)
	return slices.Compact(pkgs), linked
}

// costFiles: a module of three packages. The config selects functions in
// shop and web only; util has none; main imports all three.
var costFiles = map[string]string{
	"util/util.go": `package util

// Clamp keeps v within [lo, hi].
func Clamp(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}
`,
	"shop/shop.go": `package shop

import "example.com/itest/util"

// Price computes a price, big enough not to be inlined.
func Price(n int) int {
	total := 0
	for i := 0; i < n; i++ {
		total += util.Clamp(i*3, 0, 100)
	}
	for i := 0; i < n; i++ {
		total -= i % 2
	}
	return total
}

// Tax is another function the config may select.
func Tax(n int) int {
	t := 0
	for i := 0; i < n; i++ {
		t += i % 7
	}
	for i := 0; i < n; i++ {
		t ^= i
	}
	return t
}
`,
	"web/web.go": `package web

import (
	"fmt"

	"example.com/itest/shop"
)

// Render formats a page.
func Render(n int) string {
	s := ""
	for i := 0; i < n; i++ {
		s += fmt.Sprint(shop.Price(i))
	}
	for i := 0; i < n; i++ {
		s += "."
	}
	return s
}
`,
	"main.go": `package main

import (
	"fmt"

	"example.com/itest/util"
	"example.com/itest/web"
)

func main() { fmt.Println(len(web.Render(util.Clamp(5, 0, 9)))) }
`,
}

const costConfig = `version: 1
monitor:
  include: ["execution(* example.com/itest/shop.*(..))", "execution(* example.com/itest/web.*(..))"]
`

// TestCompilesOnlyWhatChanges pins issue 19's points 2, 3 and 5 on a cache
// that holds the plain build (the shared test cache, where the standard
// library and the module were compiled plain first):
//
//   - the first instrumented build compiles the packages with matches and
//     what imports them, never a standard-library package or util;
//   - a pointcut edit that changes the matches in one package recompiles that
//     package (and what imports it), a revert hits the cache, and a change of
//     run-time settings recompiles nothing (it relinks);
//   - a plain build afterwards is byte-identical to the plain build before.
func TestCompilesOnlyWhatChanges(t *testing.T) {
	dir := itest.NewModule(t, costFiles)
	out := t.TempDir()
	plainBin := filepath.Join(out, "plain")
	itest.Go(t, dir, nil, "build", "-o", plainBin, ".")
	itest.WriteFile(t, filepath.Join(dir, "tigris.yaml"), costConfig)
	build := func() ([]string, bool) {
		return compiled(t, dir, nil, itest.TigrisBin, "go", "build", "-x", "-o", filepath.Join(out, "inst"), ".")
	}

	staleBefore := staleRuntime(t, dir)
	pkgs, _ := build()
	// shop and web have matches; main imports web, whose export data now
	// names the runtime.
	if want := []string{"example.com/itest/shop", "example.com/itest/web", "main"}; !subset(pkgs, want) || !slices.Contains(pkgs, "example.com/itest/shop") || !slices.Contains(pkgs, "example.com/itest/web") {
		t.Errorf("first instrumented build compiled %q; want only (a part of) %q", pkgs, want)
	}
	t.Logf("first instrumented build on the warm plain cache compiled %q, and its nested go list %d runtime packages (and imports) the cache lacked", pkgs, len(staleBefore))
	// What tigris's nested go list compiled for the runtime (go build -x does
	// not show it) is what a plain build of the runtime packages would
	// compile: a plain go list finds all of it in the cache now. Objects of
	// the runtime or its imports compiled with other flags or keys would
	// leave them stale.
	if stale := staleRuntime(t, dir); len(stale) > 0 {
		t.Errorf("after the instrumented build, a plain build of the runtime would still compile %q: the nested go list compiled them differently", stale)
	}
	if got, want := itest.RunProgram(t, filepath.Join(out, "inst")), itest.RunProgram(t, plainBin); got != want {
		t.Errorf("the instrumented program printed %q, the plain one %q", got, want)
	}

	// Nothing changed: nothing to compile.
	if pkgs, _ := build(); len(pkgs) != 0 {
		t.Errorf("a second identical build compiled %q", pkgs)
	}

	// An edit that changes the matches of web only (to none: web's plain
	// object comes back from the cache).
	edited := strings.Replace(costConfig, `"execution(* example.com/itest/web.*(..))"`, `"execution(* example.com/itest/web.Nothing(..))"`, 1)
	itest.WriteFile(t, filepath.Join(dir, "tigris.yaml"), edited)
	pkgs, _ = build()
	if len(pkgs) == 0 || !subset(pkgs, []string{"example.com/itest/web", "main"}) {
		t.Errorf("after an edit of web's pointcut the build compiled %q; want web and what imports it, not shop", pkgs)
	}

	// An edit that changes the matches of shop only: shop is recompiled.
	tax := strings.Replace(edited, `"execution(* example.com/itest/shop.*(..))"`, `"execution(* example.com/itest/shop.Tax(..))"`, 1)
	itest.WriteFile(t, filepath.Join(dir, "tigris.yaml"), tax)
	pkgs, _ = build()
	if !slices.Contains(pkgs, "example.com/itest/shop") || !subset(pkgs, []string{"example.com/itest/shop", "example.com/itest/web", "main"}) {
		t.Errorf("after an edit of shop's pointcut the build compiled %q; want shop (and what imports it)", pkgs)
	}
	itest.WriteFile(t, filepath.Join(dir, "tigris.yaml"), edited)
	build()

	// An edit of shop's pointcut that selects the same functions: nothing.
	same := strings.Replace(edited, `"execution(* example.com/itest/shop.*(..))"`, `"execution(* example.com/itest/shop.*(..)) || execution(* example.com/itest/other.*(..))"`, 1)
	itest.WriteFile(t, filepath.Join(dir, "tigris.yaml"), same)
	if pkgs, _ := build(); len(pkgs) != 0 {
		t.Errorf("an edit that selects the same functions compiled %q", pkgs)
	}

	// Back to the first config: every compile is in the cache.
	itest.WriteFile(t, filepath.Join(dir, "tigris.yaml"), costConfig)
	if pkgs, _ := build(); len(pkgs) != 0 {
		t.Errorf("reverting the config compiled %q; want cache hits", pkgs)
	}

	settingsRelinkOnly(t, dir, build)
	plainAgain(t, dir, plainBin)
}

// settingsRelinkOnly changes only run-time settings in dir's tigris.yaml
// (costConfig): build must relink and compile nothing.
func settingsRelinkOnly(t *testing.T, dir string, build func() ([]string, bool)) {
	t.Helper()
	itest.WriteFile(t, filepath.Join(dir, "tigris.yaml"), costConfig+"  mode: fine\n  sampling: 50%\n")
	if pkgs, linked := build(); len(pkgs) != 0 || !linked {
		t.Errorf("a settings change compiled %q (linked: %v); want a relink only", pkgs, linked)
	}
}

// plainAgain builds dir plainly and wants the plain binary of before the
// instrumented builds, byte for byte: the plain cache entries are untouched.
func plainAgain(t *testing.T, dir, plainBin string) {
	t.Helper()
	again := filepath.Join(t.TempDir(), "again")
	itest.Go(t, dir, nil, "build", "-o", again, ".")
	a, _ := os.ReadFile(plainBin)
	b, _ := os.ReadFile(again)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Error("a plain build after the instrumented ones differs from the plain build before them")
	}
}

// staleRuntime returns the packages instrumented code imports, and their
// imports, that a plain build in dir would compile: not in the cache.
func staleRuntime(t *testing.T, dir string) []string {
	t.Helper()
	args := append([]string{"list", "-deps", "-f", "{{if .Stale}}{{.ImportPath}}{{end}}"}, rewriter.MonitorPackages...)
	return strings.Fields(itest.Go(t, dir, nil, args...))
}

// subset reports whether every element of got is in allowed.
func subset(got, allowed []string) bool {
	for _, g := range got {
		if !slices.Contains(allowed, g) {
			return false
		}
	}
	return true
}

// TestNothingMatchedIsPlain: a config that selects nothing in the build runs
// the go command plainly: no compile goes through tigris, nothing is
// compiled on a warm cache, and the binary is the plain one (it links no
// tigris code).
func TestNothingMatchedIsPlain(t *testing.T) {
	dir := itest.NewModule(t, costFiles)
	out := t.TempDir()
	plainBin := filepath.Join(out, "plain")
	itest.Go(t, dir, nil, "build", "-o", plainBin, ".")
	itest.WriteFile(t, filepath.Join(dir, "tigris.yaml"), "version: 1\nmonitor:\n  include: [\"execution(* example.com/elsewhere/...*(..))\"]\n")
	inst := filepath.Join(out, "inst")
	xout := itest.Tigris(t, dir, nil, "go", "build", "-x", "-o", inst, ".")
	if strings.Contains(xout, "toolexec") {
		t.Errorf("a build that selects nothing ran through tigris:\n%s", xout)
	}
	if pkgs, _ := compiled(t, dir, nil, itest.TigrisBin, "go", "build", "-x", "-o", inst, "."); len(pkgs) != 0 {
		t.Errorf("it compiled %q on a warm cache", pkgs)
	}
	a, _ := os.ReadFile(plainBin)
	b, _ := os.ReadFile(inst)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Error("the binary differs from the plain build's")
	}
	if bytes.Contains(b, []byte("tigrisgo/tigris/runtime")) {
		t.Error("the binary links tigris code")
	}
}

// TestDirectToolexec pins the path without tigris go (go build
// -toolexec="tigris toolexec"), which has no plan: every compile of the build
// is keyed on one fingerprint of the tigris binary, the config's build part
// and the runtime sources (the -V=full answer), so a first build, and every
// pointcut edit, compiles the whole build once more, standard library
// included (docs/performance.md, "go build -toolexec without tigris go"). It
// stays correct: an edit recompiles, a revert hits the cache, a settings edit
// only relinks, the program is instrumented, and the plain cache is never
// mixed with it.
func TestDirectToolexec(t *testing.T) {
	dir := itest.NewModule(t, costFiles)
	out := t.TempDir()
	plainBin := filepath.Join(out, "plain")
	itest.Go(t, dir, nil, "build", "-o", plainBin, ".")
	itest.WriteFile(t, filepath.Join(dir, "tigris.yaml"), costConfig)
	inst := filepath.Join(out, "inst")
	build := func() ([]string, bool) {
		return compiled(t, dir, nil, itest.GoExe, "build", "-x", itest.ToolexecFlag(), "-o", inst, ".")
	}
	pkgs, _ := build()
	t.Logf("the first direct build compiled %d packages", len(pkgs))
	if got, want := itest.RunProgram(t, inst), itest.RunProgram(t, plainBin); got != want {
		t.Errorf("the instrumented program printed %q, the plain one %q", got, want)
	}
	byPackage := func() map[string]int {
		trace := filepath.Join(t.TempDir(), "t.tgr")
		itest.RunProgram(t, inst, "TIGRIS_MODE=fine", "TIGRIS_OUT="+trace)
		if !itest.FileExists(trace) {
			return nil // no fine probe: no file
		}
		return itest.RecordsBy(t, trace, func(d *writer.ProbeDef) string { return d.Package })
	}
	if n := byPackage(); n["example.com/itest/web"] == 0 {
		t.Errorf("records by package %v; want web's", n)
	}
	if pkgs, _ := build(); len(pkgs) != 0 {
		t.Errorf("a second identical build compiled %q", pkgs)
	}

	edited := strings.Replace(costConfig, `"execution(* example.com/itest/web.*(..))"`, `"execution(* example.com/itest/web.Nothing(..))"`, 1)
	itest.WriteFile(t, filepath.Join(dir, "tigris.yaml"), edited)
	pkgs, _ = build()
	// On a cache that has seen this test, the edited config's fingerprint
	// is there too; the first time, everything is compiled again.
	t.Logf("after a pointcut edit the direct build compiled %d packages (util, without matches, included: %v)", len(pkgs), slices.Contains(pkgs, "example.com/itest/util"))
	if n := byPackage(); n["example.com/itest/web"] != 0 {
		t.Errorf("after the edit, records by package %v; want none of web", n)
	}

	itest.WriteFile(t, filepath.Join(dir, "tigris.yaml"), costConfig)
	if pkgs, _ := build(); len(pkgs) != 0 {
		t.Errorf("reverting the config compiled %q; want cache hits", pkgs)
	}
	settingsRelinkOnly(t, dir, build)
	plainAgain(t, dir, plainBin)
}

// TestCompilerRunsPerInstrumentedPackage pins what an instrumented package
// costs the compiler: two runs, the inlining pass on a reduced copy (its
// large function stubbed) and the instrumented compile; a package without
// matches, one run (the go command's own, which the log does not name).
func TestCompilerRunsPerInstrumentedPackage(t *testing.T) {
	files := map[string]string{}
	for k, v := range costFiles {
		files[k] = v
	}
	// A function the compiler certainly does not inline: the reduced copy
	// stubs it.
	var big strings.Builder
	big.WriteString("package shop\n\n// Big is too large to inline.\nfunc Big(a []int) int {\n\tn := 0\n")
	for i := 0; i < 40; i++ {
		big.WriteString("\tfor _, v := range a {\n\t\tn += v*3 + len(a)\n\t}\n")
	}
	big.WriteString("\treturn n\n}\n")
	files["shop/big.go"] = big.String()
	dir := itest.NewModule(t, files)
	itest.WriteFile(t, filepath.Join(dir, "tigris.yaml"), costConfig)
	out, code := itest.Run(t, dir, []string{"TIGRIS_LOG=1"}, itest.TigrisBin, "go", "build", "-a", "-o", filepath.Join(t.TempDir(), "inst"), ".")
	if code != 0 {
		t.Fatalf("tigris go build: exit %d\n%s", code, out)
	}
	runs := map[string][]string{}
	stubbed := regexp.MustCompile(`example.com/itest/shop: inlining pass: (\d+) of the package's function bodies stubbed`)
	for _, line := range strings.Split(out, "\n") {
		if pkg, what, ok := strings.Cut(strings.TrimPrefix(line, "tigris: compile "), ": running the compiler: "); ok && strings.HasPrefix(line, "tigris: compile ") {
			runs[pkg] = append(runs[pkg], what)
		}
		if m := stubbed.FindStringSubmatch(line); m != nil && m[1] == "0" {
			t.Errorf("the inlining pass stubbed nothing in shop, whose Big cannot inline")
		}
	}
	for _, pkg := range []string{"example.com/itest/shop", "example.com/itest/web"} {
		if got := runs[pkg]; len(got) != 2 || got[1] != "instrumented" || !strings.HasPrefix(got[0], "inlining pass") {
			t.Errorf("%s: the compiler ran %q; want the inlining pass and the instrumented compile\n%s", pkg, got, out)
		}
	}
	if got := runs["example.com/itest/shop"]; len(got) > 0 && got[0] != "inlining pass, on a reduced copy" {
		t.Errorf("shop's inlining pass ran %q; want it on a reduced copy", got[0])
	}
	if got := runs["example.com/itest/util"]; len(got) != 0 {
		t.Errorf("util, without matches, had compiler runs of tigris's own: %q", got)
	}
}
