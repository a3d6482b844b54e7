package main

import (
	"bytes"
	"encoding/json"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/internal/admintest"
	"github.com/tigrisgo/tigris/internal/human"
	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/monitor/admin"
)

// runCtl runs `tigris ctl args...` and returns its output and error.
func runCtl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"ctl"}, args...))
	err := root.Execute()
	return out.String(), err
}

// runCtlSplit runs `tigris ctl args...` and returns its standard output and
// standard error apart.
func runCtlSplit(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return tigris(t, append([]string{"ctl"}, args...)...)
}

func mustCtl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := runCtl(t, args...)
	if err != nil {
		t.Fatalf("ctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func wantLines(t *testing.T, out string, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		if !regexp.MustCompile(`(?m)` + p).MatchString(out) {
			t.Errorf("output lacks /%s/:\n%s", p, out)
		}
	}
}

func TestCtlProbesAndRules(t *testing.T) {
	addr := admintest.Server(t, "")
	out := mustCtl(t, "--addr", addr, "probes")
	wantLines(t, out, `^ID +MODE +SIGNATURE +POSITION$`, `^1 +coarse +shop.example/shop.\(\*Store\).Find\(\) error +shop.go:3$`)
	out, _, err := runCtlSplit(t, "--addr", addr, "probes", "--match", "execution(* shop.example/shop.S*(..))", "--json")
	var pl admin.ProbeList
	if err := json.Unmarshal([]byte(out), &pl); err != nil || len(pl.Probes) != 1 || pl.Probes[0].Signature != "shop.example/shop.Save()" {
		t.Errorf("probes --json: %v %+v\n%s", err, pl, out)
	}

	out = mustCtl(t, "--addr", addr, "rules", "add", "execution(* shop.example/shop.(*Store).Find(..))")
	wantLines(t, out, `^added rule 0: fine execution\(\* shop.example/shop.\(\*Store\).Find\(\.\.\)\)$`)
	mustCtl(t, "--addr", addr, "rules", "add", "execution(* shop.example/shop.Ping(..))", "--mode", "off")
	wantLines(t, mustCtl(t, "--addr", addr, "probes", "--mode", "fine"), `Find`)
	wantLines(t, mustCtl(t, "--addr", addr, "rules"), `^# +MODE +PATTERN$`, `^0 +fine +execution`, `^1 +off +execution\(\* shop.example/shop.Ping`)
	wantLines(t, mustCtl(t, "--addr", addr, "rules", "delete", "0"), `^deleted rule 0: fine execution\(\* shop.example/shop.\(\*Store\).Find`)
	wantLines(t, mustCtl(t, "--addr", addr, "rules", "set", "coarse:execution(* a.B(..)); off:execution(* a.C(..))", "fine:execution(* a.D(..))"),
		`^0 +coarse +execution\(\* a.B`, `^1 +off`, `^2 +fine +execution\(\* a.D`)
	if out := mustCtl(t, "--addr", addr, "rules", "set", "none"); strings.Contains(out, "execution") {
		t.Errorf("rules set none left rules:\n%s", out)
	}

	// A bad pattern: the message, then the pattern with a caret under the column.
	_, err = runCtl(t, "--addr", addr, "rules", "add", "execution(* shop.F$nd(..))")
	want := "pattern: 1:19: unexpected character '$'\n    execution(* shop.F$nd(..))\n                      ^"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("bad pattern: %v\nwant it to contain\n%s", err, want)
	}
	for _, args := range [][]string{
		{"rules", "add", "execution(* a.B(..))", "--mode", "loud"},
		{"rules", "delete", "7"},
		{"rules", "delete", "x"},
		{"rules", "set", "fast:execution(* a.B(..))"},
		{"probes", "--mode", "hot"},
	} {
		if out, err := runCtl(t, append([]string{"--addr", addr}, args...)...); err == nil {
			t.Errorf("ctl %s: no error\n%s", strings.Join(args, " "), out)
		}
	}
	if _, m := monitor.Rules(); len(m) != 0 {
		t.Errorf("failed commands changed the rules: %v", m)
	}
}

func TestCtlSamplingStatsAndState(t *testing.T) {
	addr := admintest.Server(t, "")
	wantLines(t, mustCtl(t, "--addr", addr, "sampling"), `^sampling 100%$`)
	wantLines(t, mustCtl(t, "--addr", addr, "sampling", "set", "10%"), `^sampling 10%$`)
	wantLines(t, mustCtl(t, "--addr", addr, "sampling", "get"), `^sampling 10%$`)
	if _, err := runCtl(t, "--addr", addr, "sampling", "set", "150%"); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("sampling set 150%%: %v", err)
	}
	wantLines(t, mustCtl(t, "--addr", addr, "enable", "execution(* shop.example/shop.Save(..))", "--sampling", "50%"), `^added rule 0: fine`, `^sampling 50%$`)
	if _, err := runCtl(t, "--addr", addr, "enable", "execution(* shop.example/shop.Ping(..))", "--sampling", "lots"); err == nil {
		t.Error("enable --sampling lots: no error")
	}
	if _, m := monitor.Rules(); len(m) != 1 {
		t.Errorf("enable with a bad rate added a rule: %v", m)
	}

	out := mustCtl(t, "--addr", addr, "stats", "--sort", "count", "--top", "2")
	wantLines(t, out, `^ID +MODE +CALLS +MEAN +STDDEV +TOTAL +ERRORS +PANICS +CONC +SIGNATURE$`,
		`^1 +\w+ +\d+ +\S+ +\S+ +\S+ +0 +0 +(<0\.001|[0-9.]+) +shop.example/shop.\(\*Store\).Find\(\) error$`, `^\(2 of 3 probes, by count desc\)$`)
	if strings.Count(out, "\n") != 5 { // the program, the header, 2 rows, the count
		t.Errorf("stats --top 2 printed %d lines:\n%s", strings.Count(out, "\n"), out)
	}
	if _, err := runCtl(t, "--addr", addr, "stats", "--sort", "speed"); err == nil || !strings.Contains(err.Error(), "not a sort key") {
		t.Errorf("stats --sort speed: %v", err)
	}

	wantLines(t, mustCtl(t, "--addr", addr, "writer"), `^written +\d+ records$`, `^dropped +0 records$`)
	wantLines(t, mustCtl(t, "--addr", addr, "health"), `^ok: pid \d+, go\S+, up \S+, 3 probes \(0 off, 2 coarse, 1 fine\), sampling 50%$`)
	wantLines(t, mustCtl(t, "--addr", addr, "metrics"), `^tigris_probe_calls_total\{function="shop.example/shop.Ping",signature="shop.example/shop.Ping\(\)"\} 10$`, `^# TYPE tigris_sampling_ratio gauge$`)
	var ws admin.WriterState
	if out, _, err := runCtlSplit(t, "--addr", addr, "writer", "--json"); err != nil || json.Unmarshal([]byte(out), &ws) != nil || !ws.Active {
		t.Errorf("writer --json: %v %+v\n%s", err, ws, out)
	}
}

func TestCtlAnalysis(t *testing.T) {
	addr := admintest.Server(t, "")
	wantLines(t, mustCtl(t, "--addr", addr, "analysis"), `^enabled +off$`, `^interval +1m0s$`, `^metric frequent +count$`)
	wantLines(t, mustCtl(t, "--addr", addr, "analysis", "set", "--criteria", "most frequent", "--window", "5m", "--metric", "expensive=errors"),
		`^criteria +most frequent$`, `^window +5m0s$`, `^metric expensive +errors$`, `^interval +1m0s$`)
	_, err := runCtl(t, "--addr", addr, "analysis", "set", "--criteria", "most frequnt")
	if err == nil || !strings.Contains(err.Error(), "1:6: expected a criterion") || !strings.Contains(err.Error(), "\n    most frequnt\n         ^") {
		t.Errorf("bad criteria: %v", err)
	}
	for _, args := range [][]string{{"analysis", "set"}, {"analysis", "set", "--enabled", "maybe"}, {"analysis", "set", "--interval", "-1s"}, {"analysis", "set", "--metric", "x"}} {
		if _, err := runCtl(t, append([]string{"--addr", addr}, args...)...); err == nil {
			t.Errorf("ctl %s: no error", strings.Join(args, " "))
		}
	}
	wantLines(t, mustCtl(t, "--addr", addr, "analysis", "run"), `^cycle \d+ \(manual\): 3 candidates, \d selected`, `^SELECTED +WHY$`, `^shop.example/shop.\(\*Store\).Find\(\) error +frequent: most`)
	wantLines(t, mustCtl(t, "--addr", addr, "analysis", "history", "--last", "1"), `^SEQ +AT +TRIGGER +CANDIDATES +SELECTED +CHANGE +SAMPLING +ERROR$`, `^\d+ +\S+ +manual +3 +\d +\+\d -\d +100%`)
	// A quiet window: nothing to select, and ctl says why.
	wantLines(t, mustCtl(t, "--addr", addr, "analysis", "run"), `^cycle \d+ \(manual\): 0 candidates, 0 selected`, `^nothing qualified: no monitored function completed a call in the window`)
	// With an overhead budget the rate in force differs from the configured one,
	// and ctl says so and why.
	mustCtl(t, "--addr", addr, "analysis", "set", "--budget", "0.01%")
	for i := 0; i < 300; i++ {
		admintest.Call(i % 100 / 99) // Find, and Save a few times
	}
	mustCtl(t, "--addr", addr, "analysis", "run")
	wantLines(t, mustCtl(t, "--addr", addr, "sampling"), `^sampling 100% configured, \S+% in force: overhead budget 0.01% of CPU: `)
	wantLines(t, mustCtl(t, "--addr", addr, "health"), `, sampling 100% configured, \S+% in force: overhead budget 0.01% of CPU: `)
}

func TestCtlToken(t *testing.T) {
	addr := admintest.Server(t, "s3cret")
	t.Setenv("TIGRIS_ADMIN_TOKEN", "")
	mustCtl(t, "--addr", addr, "rules") // reads need no token
	_, err := runCtl(t, "--addr", addr, "sampling", "set", "0.5")
	if err == nil || !strings.Contains(err.Error(), "missing bearer token") || !strings.Contains(err.Error(), "pass --token or set TIGRIS_ADMIN_TOKEN") {
		t.Errorf("no token: %v", err)
	}
	if _, err := runCtl(t, "--addr", addr, "--token", "guess", "sampling", "set", "0.5"); err == nil || !strings.Contains(err.Error(), "wrong bearer token") {
		t.Errorf("wrong token: %v", err)
	}
	wantLines(t, mustCtl(t, "--addr", addr, "--token", "s3cret", "sampling", "set", "0.5"), `^sampling 50%$`)
}

func TestCtlUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, err = runCtl(t, "--addr", addr, "health")
	want := "no tigris admin endpoint at " + addr + ": connection refused; start the program with TIGRIS_ADMIN=" + addr + " (a program built with admin.link: true in tigris.yaml)"
	if err == nil || err.Error() != want {
		t.Errorf("unreachable: %v\nwant %s", err, want)
	}
	if _, err := runCtl(t, "--addr", "nonsense", "health"); err == nil || err.Error() != `--addr "nonsense": want host:port such as 127.0.0.1:7070` {
		t.Errorf("--addr nonsense: %v", err)
	}
}

// TestCtlDefaultAddr checks that --addr defaults to $TIGRIS_ADMIN.
func TestCtlDefaultAddr(t *testing.T) {
	t.Setenv("TIGRIS_ADMIN", "127.0.0.1:1")
	if _, err := runCtl(t, "health"); err == nil || !strings.Contains(err.Error(), "at 127.0.0.1:1:") {
		t.Errorf("TIGRIS_ADMIN=127.0.0.1:1: %v", err)
	}
}

// TestCtlQueryFor: a query ended by its own --for says so, not "cancelled",
// and its first and last windows, which it saw only part of, are marked.
func TestCtlQueryFor(t *testing.T) {
	addr := admintest.Server(t, "")
	admintest.CallEvery(t, 0, 2*time.Millisecond)
	out, err := runCtl(t, "--addr", addr, "query", "--for", "1200ms", "SELECT count(*) AS n, avg(duration) AS mean FROM calls WINDOW 10s")
	if err != nil {
		t.Fatalf("ctl query: %v\n%s", err, out)
	}
	wantLines(t, out,
		`^WINDOW_START +WINDOW_END +N +MEAN$`,
		`^\(partial window \d\d:\d\d:\d\d\.\d{3}Z–\d\d:\d\d:\d\d\.\d{3}Z: the query started at \d\d:\d\d:\d\d\.\d{3}Z, so the rows below cover at most \S+ of its 10s\)\n\S+ +\S+ +\d+ +\S+$`,
		`\n\(partial window \d\d:\d\d:\d\d\.\d{3}Z–\d\d:\d\d:\d\d\.\d{3}Z: the query ended at \d\d:\d\d:\d\d\.\d{3}Z, so its rows above cover \S+ of its 10s\)\n-- ended after 1.2s \(--for\) \(`,
	)
	if strings.Contains(out, "cancelled") {
		t.Errorf("a query ended by --for says cancelled:\n%s", out)
	}
	if human.Unrounded.MatchString(out) {
		t.Errorf("unrounded numbers (/%s/) in:\n%s", human.Unrounded, out)
	}
	t.Logf("%s", out)
}

// TestCtlHumanNumbers: what ctl prints of the program's numbers is rounded
// to three significant digits with units (the JSON keeps them whole): the
// rate in force, the analysis cycles, the statistics, the writer.
func TestCtlHumanNumbers(t *testing.T) {
	if got, want := inForce(1, 0.4661608583, "overhead budget 2% of CPU: …"), " configured, 46.6% in force: overhead budget 2% of CPU: …"; got != want {
		t.Errorf("inForce = %q, want %q", got, want)
	}
	addr := admintest.Server(t, "")
	mustCtl(t, "--addr", addr, "analysis", "set", "--criteria", "most frequent ∪ most expensive", "--budget", "0.01%")
	for i := range 300 {
		admintest.Call(i % 3)
	}
	var all strings.Builder
	for _, args := range [][]string{
		{"analysis", "run"}, {"analysis", "history"}, {"sampling"}, {"health"}, {"stats"}, {"writer"}, {"queries"},
	} {
		all.WriteString(mustCtl(t, append([]string{"--addr", addr}, args...)...))
	}
	out := all.String()
	wantLines(t, out, `^overhead budget 0\.01% of CPU: \S+ fine calls/s`, `^\d+ +\S+ +manual +3 +\d +\+\d -\d +\d+(\.\d+)?%`, `\(limits: \d+ queries, \d+ probes each, \d+(\.\d+)?% of a core each\)`)
	if m := human.Unrounded.FindString(out); m != "" {
		t.Errorf("unrounded number %q in:\n%s", m, out)
	}
}
