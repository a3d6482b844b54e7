package rewriter

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestListArgs(t *testing.T) {
	r := &resolver{inv: &goInvocation{flags: []string{"-race", "-pgo=auto", "-toolexec=t toolexec"}}, pgo: "/src/app/default.pgo"}
	got := r.listArgs([]string{"github.com/tigrisgo/tigris/runtime/monitor"})
	want := []string{"list", "-deps", "-export", "-json=ImportPath,Export,Error", "-race", "-toolexec=t toolexec", "-pgo=/src/app/default.pgo", "github.com/tigrisgo/tigris/runtime/monitor"}
	if !slices.Equal(got, want) {
		t.Errorf("listArgs =\n %q\nwant\n %q", got, want)
	}
}

func TestNestedGoNeverEditsGoMod(t *testing.T) {
	for _, tc := range []struct {
		goflags string
		flags   []string
		want    []string
	}{
		{"", []string{"-race", "-mod=mod"}, []string{"-race", "-mod=readonly"}},
		{"-mod=mod -trimpath", []string{"-race"}, []string{"-race", "-mod=readonly"}},
		{"-mod=mod", []string{"-mod=vendor"}, []string{"-mod=vendor"}},
		{"", []string{"-modfile=alt.mod", "-tags=x"}, []string{"-modfile=alt.mod", "-tags=x"}},
	} {
		inv := &goInvocation{flags: tc.flags, env: environOf([]string{"GOFLAGS=" + tc.goflags})}
		if got := inv.readOnly(); !slices.Equal(got, tc.want) {
			t.Errorf("GOFLAGS=%q flags %q: readOnly() = %q; want %q", tc.goflags, tc.flags, got, tc.want)
		}
	}
}

func TestNestedEnviron(t *testing.T) {
	got := nestedEnviron([]string{"PATH=/bin", "TOOLEXEC_IMPORTPATH=x", "GOROOT=", "GOFLAGS=-mod=mod", nestedEnv + "=old"})
	want := []string{"PATH=/bin", "GOFLAGS=-mod=mod", nestedEnv + "=1"}
	if !slices.Equal(got, want) {
		t.Errorf("nestedEnviron = %q; want %q", got, want)
	}
}

const fakeListOutput = `{"ImportPath": "errors", "Export": "/cache/errors-d"}
{"ImportPath": "unsafe"}
{"ImportPath": "github.com/tigrisgo/tigris/runtime/monitor", "Export": "/cache/monitor-d"}
`

// newTestResolver returns a resolver whose go list is fake and counted.
func newTestResolver(t *testing.T, work string, out string, err error) (*resolver, *atomic.Int32) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // keep the cross-build cache out of the user's
	var runs atomic.Int32
	r := &resolver{
		inv:     &goInvocation{goExe: "go", dir: t.TempDir(), flags: []string{"-race"}, env: environOf([]string{"GOOS=linux", "HOME=/x"})},
		workDir: work,
		logf:    func(string, ...any) {},
		run: func(args []string) ([]byte, error) {
			runs.Add(1)
			return []byte(out), err
		},
	}
	return r, &runs
}

func TestResolveOncePerBuild(t *testing.T) {
	work := t.TempDir()
	r, runs := newTestResolver(t, work, fakeListOutput, nil)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pkgs, err := r.resolve([]string{"github.com/tigrisgo/tigris/runtime/monitor", "unsafe"})
			if err != nil {
				t.Error(err)
				return
			}
			if pkgs["github.com/tigrisgo/tigris/runtime/monitor"] != "/cache/monitor-d" || pkgs["errors"] != "/cache/errors-d" {
				t.Errorf("resolve = %v", pkgs)
			}
		}()
	}
	wg.Wait()
	if n := runs.Load(); n != 1 {
		t.Errorf("go list ran %d times for one build; want 1", n)
	}
	// Another flag set is another resolution.
	r.inv.flags = []string{"-race", "-trimpath"}
	if _, err := r.resolve([]string{"github.com/tigrisgo/tigris/runtime/monitor"}); err != nil {
		t.Fatal(err)
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("go list ran %d times after a flag change; want 2", n)
	}
}

func TestResolveErrorIsShared(t *testing.T) {
	work := t.TempDir()
	r, runs := newTestResolver(t, work, "", errors.New("exit status 1\nno required module provides package github.com/tigrisgo/tigris/runtime/monitor"))
	for i := 0; i < 3; i++ {
		_, err := r.resolve([]string{"github.com/tigrisgo/tigris/runtime/monitor"})
		if err == nil || !strings.Contains(err.Error(), "no required module provides") {
			t.Fatalf("resolve error = %v; want the go list failure", err)
		}
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("failing go list ran %d times in one build; want 1", n)
	}
}

func TestResolveMissingPackage(t *testing.T) {
	r, _ := newTestResolver(t, "", `{"ImportPath": "errors", "Export": "/cache/errors-d"}`, nil)
	if _, err := r.resolve([]string{"github.com/tigrisgo/tigris/runtime/monitor"}); err == nil {
		t.Error("resolve of a package go list did not return: no error")
	}
}

func TestResolveCrossBuildCache(t *testing.T) {
	exports := t.TempDir()
	monitor := filepath.Join(exports, "monitor-d")
	os.WriteFile(monitor, []byte("!<arch>\n"), 0o666)
	out := `{"ImportPath": "github.com/tigrisgo/tigris/runtime/monitor", "Export": "` + monitor + `"}`
	r, runs := newTestResolver(t, t.TempDir(), out, nil)
	r.fingerprint = func() (string, error) { return "fp1", nil }
	if _, err := r.resolve([]string{"github.com/tigrisgo/tigris/runtime/monitor"}); err != nil {
		t.Fatal(err)
	}
	r.workDir = t.TempDir() // the next build
	if _, err := r.resolve([]string{"github.com/tigrisgo/tigris/runtime/monitor"}); err != nil {
		t.Fatal(err)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("go list ran %d times for two builds with the same inputs; want 1", n)
	}
	// A new fingerprint (config or runtime changed) misses.
	r.workDir = t.TempDir()
	r.fingerprint = func() (string, error) { return "fp2", nil }
	r.resolve([]string{"github.com/tigrisgo/tigris/runtime/monitor"})
	if n := runs.Load(); n != 2 {
		t.Errorf("go list ran %d times after a fingerprint change; want 2", n)
	}
	// A vanished export file (go clean -cache) misses.
	os.Remove(monitor)
	r.workDir = t.TempDir()
	r.resolve([]string{"github.com/tigrisgo/tigris/runtime/monitor"})
	if n := runs.Load(); n != 3 {
		t.Errorf("go list ran %d times after the export file vanished; want 3", n)
	}
}

func TestResolveRefusesNested(t *testing.T) {
	r, runs := newTestResolver(t, t.TempDir(), fakeListOutput, nil)
	r.inv.env = environOf(append(r.inv.env.list, nestedEnv+"=1"))
	_, err := r.resolve([]string{"github.com/tigrisgo/tigris/runtime/monitor"})
	if err == nil || !strings.Contains(err.Error(), "nested go list") {
		t.Errorf("resolve inside the nested go list: error = %v", err)
	}
	if runs.Load() != 0 {
		t.Error("a nested resolution started go list")
	}
}

func TestLockFileTakesOverDeadHolder(t *testing.T) {
	name := filepath.Join(t.TempDir(), "x.lock")
	// A pid that cannot be alive.
	os.WriteFile(name, []byte("2147483646\n"), 0o666)
	unlock, err := lockFile(name)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if fileExists(name) {
		t.Error("unlock left the lock file")
	}
}

// TestResolveWithGo runs a real nested go list in a throwaway module and checks
// that the export files it returns exist and can be compiled against.
func TestResolveWithGo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds packages")
	}
	goExe, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	dir := t.TempDir()
	writeTestFiles(t, dir, map[string]string{
		"go.mod":     "module example.com/res\n\ngo 1.21\n",
		"lib/lib.go": "package lib\n\nimport \"strings\"\n\nfunc Up(s string) string { return strings.ToUpper(s) }\n",
		// Only with the replayed -tags flag does lib have Tagged.
		"lib/tagged.go": "//go:build tigristest\n\npackage lib\n\nconst Tagged = true\n",
	})
	env := environOf(append(processEnviron().list, nestedEnv+"=", "GOFLAGS=-mod=mod", "GOWORK=off"))
	r := &resolver{
		inv:     &goInvocation{goExe: goExe, dir: dir, flags: []string{"-tags=tigristest"}, source: "test", env: env},
		workDir: t.TempDir(),
		logf:    t.Logf,
	}
	pkgs, err := r.resolve([]string{"example.com/res/lib"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"example.com/res/lib", "strings", "runtime"} {
		if f := pkgs[p]; f == "" || !fileExists(f) {
			t.Errorf("export of %s = %q; want an existing file", p, f)
		}
	}

	// Compile a file importing lib with an importcfg extended by the resolution.
	cfg, _ := parseImportConfig(nil)
	cfg.addAll(pkgs)
	cfgFile := filepath.Join(dir, "importcfg")
	writeFileAtomic(cfgFile, cfg.bytes())
	src := filepath.Join(dir, "use.go")
	os.WriteFile(src, []byte("package use\n\nimport \"example.com/res/lib\"\n\nvar X = lib.Up(\"x\")\n\nconst T = lib.Tagged\n"), 0o666)
	out, err := exec.Command(goExe, "tool", "compile", "-p", "example.com/res/use", "-importcfg", cfgFile, "-o", filepath.Join(dir, "use.a"), "-pack", src).CombinedOutput()
	if err != nil {
		t.Fatalf("compiling against the resolved export data: %v\n%s", err, out)
	}
}

func writeTestFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o666); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPGOProfile(t *testing.T) {
	dir := t.TempDir()
	writeTestFiles(t, dir, map[string]string{
		"go.mod":                "module example.com/pg\n\ngo 1.21\n",
		"cmd/app/main.go":       "package main\n",
		"cmd/app/default.pgo":   "profile",
		"cmd/other/main.go":     "package main\n",
		"cmd/other/default.pgo": "profile",
	})
	app := filepath.Join(dir, "cmd", "app", "default.pgo")
	other := filepath.Join(dir, "cmd", "other", "default.pgo")
	const pre = "/w/b007/pgo.preprofile"
	for _, tc := range []struct {
		name     string
		inv      goInvocation
		pre, tip string
		want     string
		wantErr  bool
	}{
		{name: "no profile", inv: goInvocation{packages: []string{"./cmd/app"}}, want: ""},
		{name: "directory argument", inv: goInvocation{packages: []string{"./cmd/app"}}, pre: pre, want: app},
		{name: "import path argument", inv: goInvocation{packages: []string{"example.com/pg/cmd/other"}}, pre: pre, want: other},
		{name: "go run file", inv: goInvocation{subcommand: "run", packages: []string{"cmd/app/main.go"}}, pre: pre, want: app},
		{name: "per-main variant", inv: goInvocation{packages: []string{"./..."}}, pre: pre, tip: "example.com/dep [example.com/pg/cmd/other]", want: other},
		{name: "ambiguous pattern", inv: goInvocation{packages: []string{"./..."}}, pre: pre, wantErr: true},
		{name: "explicit -pgo is replayed", inv: goInvocation{flags: []string{"-pgo=/p/x.pgo"}, packages: []string{"./..."}}, pre: pre, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.inv.dir = dir
			got, err := tc.inv.pgoProfile(tc.pre, tc.tip)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("pgoProfile = %q, %v; want %q (error %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// TestResolveErrorHint: a failing nested go list gets the hint that fits its
// cause. A missing go.sum entry is not a missing requirement: telling the user
// to require the runtime (which go.mod already does) sent newcomers astray.
func TestResolveErrorHint(t *testing.T) {
	for _, c := range []struct{ goErr, want, not string }{
		{"missing go.sum entry for module providing package github.com/alecthomas/participle/v2 (imported by github.com/tigrisgo/tigris/runtime/pointcut)",
			"go get github.com/tigrisgo/tigris/runtime/...@VERSION", "require github.com"},
		{"no required module provides package github.com/tigrisgo/tigris/runtime/monitor",
			"require github.com/tigrisgo/tigris/runtime in go.mod", "go.sum"},
	} {
		r, _ := newTestResolver(t, t.TempDir(), "", errors.New("exit status 1\n"+c.goErr))
		_, err := r.resolve([]string{"github.com/tigrisgo/tigris/runtime/monitor"})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(strings.SplitN(err.Error(), "\n\t", 2)[1], c.not) {
			t.Errorf("go list failing with %q: the error is\n%v\nwant a hint with %q and without %q", c.goErr, err, c.want, c.not)
		}
	}
}
