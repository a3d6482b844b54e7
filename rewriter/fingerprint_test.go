package rewriter

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSuffixVersionLine(t *testing.T) {
	fp := strings.Repeat("ab", 32)
	for _, tc := range []struct{ in, want string }{
		{
			"compile version go1.26.8\n",
			"compile version go1.26.8 tigris=" + fp + "\n",
		},
		{
			"link version go1.26.8 X:nodwarf5\n",
			"link version go1.26.8 X:nodwarf5 tigris=" + fp + "\n",
		},
		{
			// devel: the go command keys on the content ID after the last "/".
			"compile version devel go1.27-abc123 Mon Jan 1 X:foo buildID=aaa/bbb\n",
			"compile version devel go1.27-abc123 Mon Jan 1 X:foo tigris=" + fp + " buildID=aaa/bbb.tigris" + fp[:32] + "\n",
		},
	} {
		got, err := suffixVersionLine(tc.in, fp)
		if err != nil || got != tc.want {
			t.Errorf("suffixVersionLine(%q) =\n %q, %v\nwant\n %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "garbage\n", "compile version devel go1.27 nobuildid\n", "compile version go1.26.8\nsecond line\n"} {
		if got, err := suffixVersionLine(bad, fp); err == nil {
			t.Errorf("suffixVersionLine(%q) = %q; want an error", bad, got)
		}
	}
}

func TestHashSourceDirs(t *testing.T) {
	root := t.TempDir()
	writeTestFiles(t, root, map[string]string{
		"monitor/a.go":            "package monitor\n",
		"monitor/a_test.go":       "package monitor\n",
		"monitor/asm_amd64.s":     "TEXT ·x(SB),0,$0\n",
		"monitor/testdata/x.go":   "package x\n",
		"monitor/internal/i/i.go": "package i\n",
		"writer/w.go":             "package writer\n",
		"cmd/tigris/main.go":      "package main\n",
	})
	dirs := []string{"monitor", "writer", "dsl"} // dsl is missing: fine
	h1, err := hashSourceDirs(root, dirs)
	if err != nil {
		t.Fatal(err)
	}
	same := func(name string, changeMatters bool) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		old, _ := os.ReadFile(p)
		os.WriteFile(p, append(old, "// changed\n"...), 0o666)
		defer os.WriteFile(p, old, 0o666)
		h2, err := hashSourceDirs(root, dirs)
		if err != nil {
			t.Fatal(err)
		}
		if (h1 != h2) != changeMatters {
			t.Errorf("changing %s: hash changed = %v; want %v", name, h1 != h2, changeMatters)
		}
	}
	same("monitor/a.go", true)
	same("monitor/asm_amd64.s", true)
	same("monitor/internal/i/i.go", true)
	same("writer/w.go", true)
	same("monitor/a_test.go", false)
	same("monitor/testdata/x.go", false)
	same("cmd/tigris/main.go", false)
}

func TestExecutableHashIsCached(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	h1, err := executableHash()
	if err != nil {
		t.Fatal(err)
	}
	if len(h1) != 64 {
		t.Fatalf("executableHash = %q; want 64 hex digits", h1)
	}
	entries, _ := os.ReadDir(filepath.Join(tigrisCacheDir(), "exe"))
	if len(entries) != 1 {
		t.Errorf("%d cache entries; want 1", len(entries))
	}
	if h2, _ := executableHash(); h2 != h1 {
		t.Errorf("cached hash %q != computed %q", h2, h1)
	}
}
