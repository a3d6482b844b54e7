package compat

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/config"
)

func TestParseTestJSON(t *testing.T) {
	stream := `{"Action":"start","Package":"a"}
{"Action":"run","Package":"a","Test":"TestOK"}
{"Action":"output","Package":"a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"pass","Package":"a","Test":"TestOK"}
{"Action":"run","Package":"a","Test":"TestBad/sub"}
{"Action":"output","Package":"a","Test":"TestBad/sub","Output":"    x_test.go:9: boom\n"}
{"Action":"fail","Package":"a","Test":"TestBad/sub"}
{"Action":"fail","Package":"a","Test":"TestBad"}
{"Action":"skip","Package":"a","Test":"TestSkip"}
{"Action":"fail","Package":"a"}
{"ImportPath":"b.test","Action":"build-output","Output":"link: fingerprint mismatch\n"}
{"ImportPath":"b.test","Action":"build-fail"}
{"Action":"fail","Package":"b"}
`
	verdicts, failed, err := ParseTestJSON(strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"a TestOK": "pass", "a TestBad/sub": "fail", "a TestBad": "fail", "a TestSkip": "skip", "a": "fail", "b": "fail",
	}
	if len(verdicts) != len(want) {
		t.Errorf("got %d verdicts %v; want %v", len(verdicts), verdicts, want)
	}
	for k, v := range want {
		if verdicts[k] != v {
			t.Errorf("%s: got %q; want %q", k, verdicts[k], v)
		}
	}
	for _, s := range []string{"fingerprint mismatch", "--- a TestBad/sub\n    x_test.go:9: boom"} {
		if !strings.Contains(string(failed), s) {
			t.Errorf("failure output lacks %q:\n%s", s, failed)
		}
	}
	if _, _, err := ParseTestJSON(strings.NewReader("{broken\n")); err == nil {
		t.Error("a broken event parsed without error")
	}
}

// TestLostRecordsAreAProblem: the loss lines instrumented test binaries print
// at exit are summed from go test -json output, and a suite whose run lost
// records, by those lines or by the trace files' loss records, has a problem.
func TestLostRecordsAreAProblem(t *testing.T) {
	stream := `{"Action":"output","Package":"a","Output":"PASS\n"}
{"Action":"output","Package":"a","Output":"tigris: 7 of 100 fine records lost (/tmp/x/a.test-1.tgr): 7 to a full queue (writer.on-full: drop)\n"}
{"Action":"output","Package":"b","Output":"tigris: 5 of 50 fine records lost (/tmp/x/b.test-2.tgr): 5 to write errors\n"}
`
	if n := LostAtExit([]byte(stream)); n != 12 {
		t.Errorf("LostAtExit = %d, want 12", n)
	}
	s := Suite{Name: "m", Module: "example.com/m", Packages: []string{"example.com/m"}}
	ts := &TraceStats{Files: 1, Records: map[string]int64{"example.com/m": 10}}
	if p := ts.Check(s, 0); len(p) != 0 {
		t.Errorf("nothing lost: problems %q", p)
	}
	for _, c := range []struct{ inFiles, atExit uint64 }{{3, 0}, {0, 12}, {3, 12}} {
		ts.Lost = c.inFiles
		if p := ts.Check(s, c.atExit); len(p) != 1 || !strings.Contains(p[0], "fine records lost") {
			t.Errorf("%d lost in the files, %d at exit: problems %q", c.inFiles, c.atExit, p)
		}
	}
}

func TestCompareAndExpected(t *testing.T) {
	plain := map[string]string{"p": "pass", "p TestA": "pass", "p TestB": "fail", "p TestGone": "pass"}
	inst := map[string]string{"p": "fail", "p TestA": "fail", "p TestB": "fail", "p TestNew": "skip"}
	diffs := Compare(plain, inst)
	want := []string{
		"p TestA: plain pass, instrumented fail",
		"p TestGone: plain pass, instrumented missing",
		"p TestNew: plain missing, instrumented skip",
		"p: plain pass, instrumented fail",
	}
	if !slices.Equal(diffs, want) {
		t.Fatalf("Compare:\n%s\nwant\n%s", strings.Join(diffs, "\n"), strings.Join(want, "\n"))
	}
	s := Suite{Expected: map[string]string{"p": "why", "p TestA": "why", "p TestNever": "why"}}
	unexpected, missing := s.Unexpected(append(diffs, "p TestA/sub/x: plain pass, instrumented missing", "a/b/c TestZ/q: plain pass, instrumented fail"))
	wantUnexpected := []string{want[1], want[2], "a/b/c TestZ/q: plain pass, instrumented fail"}
	if !slices.Equal(unexpected, wantUnexpected) || !slices.Equal(missing, []string{"p TestNever"}) {
		t.Errorf("Unexpected: %q, missing %q", unexpected, missing)
	}
	renamed := Compare(
		map[string]string{"p T/0xc000010000": "pass", "p T/at_9:41": "fail", "p T/x": "pass"},
		map[string]string{"p T/0xc000a20000": "pass", "p T/at_9:42": "pass", "p T/x": "pass"})
	if want := []string{"p T/at_9:41: plain fail, instrumented missing", "p T/at_9:42: plain missing, instrumented pass"}; !slices.Equal(renamed, want) {
		t.Errorf("Compare with run-time names: %q; want %q", renamed, want)
	}
	if len(Compare(plain, plain)) != 0 {
		t.Error("a run differs from itself")
	}
}

// TestConfigLoads checks that the generated tigris.yaml is valid, names every
// suite and does not change with the selection.
func TestConfigLoads(t *testing.T) {
	name := filepath.Join(t.TempDir(), "tigris.yaml")
	if err := os.WriteFile(name, []byte(Config()), 0o666); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(name)
	if err != nil {
		t.Fatalf("%v\n%s", err, Config())
	}
	if !cfg.Std || cfg.Instrument == nil {
		t.Fatalf("std %v, instrument %v", cfg.Std, cfg.Instrument)
	}
	for _, s := range All() {
		for _, p := range s.Patterns() {
			pkg := strings.TrimSuffix(p, "/...")
			if !cfg.Instrument.MayMatchPackage(pkg) {
				t.Errorf("suite %s: the config cannot match %s", s.Name, pkg)
			}
		}
		if s.Module != "" && (s.Version == "" || len(s.Packages) > 0 && !strings.HasPrefix(s.Packages[0], s.Module)) {
			t.Errorf("suite %s: module without a pinned version or with foreign packages", s.Name)
		}
	}
	if n := len(Select(false)); n == 0 || n >= len(All()) {
		t.Errorf("the CI subset has %d of %d suites", n, len(All()))
	}
}
