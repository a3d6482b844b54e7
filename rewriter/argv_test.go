package rewriter

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// goCompileArgv is a compile command line as go build -x prints it, with flags a
// newer toolchain or -gcflags might add mixed in.
var goCompileArgv = []string{
	"-o", "/w/b001/_pkg_.a", "-trimpath", "/w/b001=>", "-p", "example.com/app",
	"-lang=go1.26", "-std", "-complete", "-buildid", "aaa/aaa", "-goversion", "go1.26.8",
	"-c=2", "-nolocalimports", "-d=checkptr", "-m", "-spectre", "all",
	"-newflag=value", "-otherbool", "-importcfg", "/w/b001/importcfg", "-pack",
	"-D", "", "./main.go", "/src/app/util.go",
}

func TestParseCompileArgs(t *testing.T) {
	ta, err := parseToolArgs(goCompileArgv, compileValueFlags, true)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"p": "example.com/app", "o": "/w/b001/_pkg_.a", "importcfg": "/w/b001/importcfg",
		"lang": "go1.26", "trimpath": "/w/b001=>", "spectre": "all", "newflag": "value", "D": "",
	} {
		if got := ta.value(name); got != want {
			t.Errorf("value(%q) = %q; want %q", name, got, want)
		}
	}
	for name, want := range map[string]bool{"std": true, "complete": true, "pack": true, "otherbool": true, "race": false} {
		if got := ta.bool(name); got != want {
			t.Errorf("bool(%q) = %v; want %v", name, got, want)
		}
	}
	if got, want := ta.operandList(), []string{"./main.go", "/src/app/util.go"}; !slices.Equal(got, want) {
		t.Errorf("files = %q; want %q", got, want)
	}
	if ta.respFile {
		t.Error("respFile = true without a response file")
	}
}

func TestRewriteCompileArgs(t *testing.T) {
	ta, err := parseToolArgs(goCompileArgv, compileValueFlags, true)
	if err != nil {
		t.Fatal(err)
	}
	got := ta.rewrite(argEdit{
		set:      map[string]string{"importcfg": "/w/b001/tigris/importcfg", "lang": "go1.22"},
		drop:     []string{"complete"},
		operands: []string{"/w/b001/tigris/main.go", "/src/app/util.go", "/w/b001/tigris/probes.go"},
	})
	want := slices.Clone(goCompileArgv)
	want = slices.DeleteFunc(want, func(s string) bool { return s == "-complete" })
	for i, a := range want {
		switch a {
		case "/w/b001/importcfg":
			want[i] = "/w/b001/tigris/importcfg"
		case "-lang=go1.26":
			want[i] = "-lang=go1.22"
		}
	}
	want = append(want[:len(want)-2], "/w/b001/tigris/main.go", "/src/app/util.go", "/w/b001/tigris/probes.go")
	if !slices.Equal(got, want) {
		t.Errorf("rewrite:\n got %q\nwant %q", got, want)
	}
	// An empty edit is the identity.
	if got := ta.rewrite(argEdit{}); !slices.Equal(got, goCompileArgv) {
		t.Errorf("empty edit changed argv:\n got %q\nwant %q", got, goCompileArgv)
	}
}

func TestParseLinkArgs(t *testing.T) {
	argv := []string{"-o", "/w/b001/exe/a.out", "-importcfg", "/w/b001/importcfg.link", "-buildmode=exe",
		"-buildid=x/y/z/w", "-X", "main.version=1", "-s", "-extld=gcc", "/w/b001/_pkg_.a"}
	ta, err := parseToolArgs(argv, linkValueFlags, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := ta.value("importcfg"); got != "/w/b001/importcfg.link" {
		t.Errorf("importcfg = %q", got)
	}
	if got := ta.operandList(); !slices.Equal(got, []string{"/w/b001/_pkg_.a"}) {
		t.Errorf("operands = %q", got)
	}
	got := ta.rewrite(argEdit{set: map[string]string{"importcfg": "/w/b001/tigris/importcfg.link"}})
	want := slices.Clone(argv)
	want[3] = "/w/b001/tigris/importcfg.link"
	if !slices.Equal(got, want) {
		t.Errorf("rewrite:\n got %q\nwant %q", got, want)
	}

	// Added flags go after the user's (the last -X wins) and before the
	// operands, also when "--" ends the flags.
	x := []string{"-X", "m.s=a b"}
	for _, c := range []struct{ argv, want []string }{
		{argv, append(append(slices.Clone(argv[:len(argv)-1]), x...), "/w/b001/_pkg_.a")},
		{[]string{"-o", "a.out", "--", "-pkg.a"}, []string{"-o", "a.out", "-X", "m.s=a b", "--", "-pkg.a"}},
	} {
		ta, err := parseToolArgs(c.argv, linkValueFlags, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := ta.rewrite(argEdit{flags: x}); !slices.Equal(got, c.want) {
			t.Errorf("adding flags to %q:\n got %q\nwant %q", c.argv, got, c.want)
		}
	}
}

func TestResponseFiles(t *testing.T) {
	dir := t.TempDir()
	args := []string{"-p", "example.com/odd", "-D", "a\\b", "-trimpath", "line1\nline2", "-complete", "/src/x.go"}
	var enc []string
	for _, a := range args {
		enc = append(enc, encodeResponseArg(a))
	}
	rsp := filepath.Join(dir, "args")
	if err := os.WriteFile(rsp, []byte(strings.Join(enc, "\n")+"\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	ta, err := parseToolArgs([]string{"-o", "/w/b002/_pkg_.a", "@" + rsp}, compileValueFlags, true)
	if err != nil {
		t.Fatal(err)
	}
	if !ta.respFile {
		t.Fatal("respFile = false")
	}
	if got, want := ta.value("trimpath"), "line1\nline2"; got != want {
		t.Errorf("trimpath = %q; want %q", got, want)
	}
	if got, want := ta.value("D"), `a\b`; got != want {
		t.Errorf("D = %q; want %q", got, want)
	}
	if got := ta.operandList(); !slices.Equal(got, []string{"/src/x.go"}) {
		t.Errorf("files = %q", got)
	}

	// Rewriting writes a new response file that expands to the new argv.
	newArgs := ta.rewrite(argEdit{drop: []string{"complete"}, operands: []string{"/w/b002/tigris/x.go"}})
	argv, err := ta.commandLine(newArgs, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(argv) != 1 || !strings.HasPrefix(argv[0], "@") {
		t.Fatalf("commandLine = %q; want one @file", argv)
	}
	back, used, err := expandResponseFiles(argv, 0)
	if err != nil || !used {
		t.Fatalf("expanding the new response file: used=%v err=%v", used, err)
	}
	if !slices.Equal(back, newArgs) {
		t.Errorf("round trip:\n got %q\nwant %q", back, newArgs)
	}

	// Without a response file the argv is passed directly.
	plain, _ := parseToolArgs([]string{"-p", "x", "a.go"}, compileValueFlags, true)
	if got, _ := plain.commandLine([]string{"-p", "x", "b.go"}, dir); !slices.Equal(got, []string{"-p", "x", "b.go"}) {
		t.Errorf("commandLine without response file = %q", got)
	}

	if _, err := parseToolArgs([]string{"@" + filepath.Join(dir, "missing")}, compileValueFlags, true); err == nil {
		t.Error("missing response file: no error")
	}
	if _, err := decodeResponseArg(`bad\q`); err == nil {
		t.Error(`decodeResponseArg("bad\q"): no error`)
	}
}

func TestTestVariant(t *testing.T) {
	for _, tc := range []struct {
		importPath string
		files      []string
		want       string
	}{
		{"example.com/p", []string{"p.go"}, ""},
		{"example.com/p [example.com/p.test]", []string{"p.go", "p_test.go"}, "example.com/p.test"},
		{"example.com/p_test [example.com/p.test]", []string{"x_test.go"}, "example.com/p.test"},
		{"example.com/p.test", []string{"/w/b001/_testmain.go"}, "example.com/p.test"},
		{"example.com/dep [example.com/p.test]", []string{"dep.go"}, "example.com/p.test"},
		{"example.com/dep [example.com/cmd/app]", []string{"dep.go"}, ""}, // PGO per-main variant
		{"example.test", []string{"main.go"}, ""},                         // a module named *.test
		{"", []string{"main.go"}, ""},
	} {
		if got := testVariant(tc.importPath, tc.files); got != tc.want {
			t.Errorf("testVariant(%q, %q) = %q; want %q", tc.importPath, tc.files, got, tc.want)
		}
	}
}
