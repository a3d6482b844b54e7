package integration

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/integration/internal/itest"
	"github.com/tigrisgo/tigris/runtime/writer"

	"github.com/tigrisgo/tigris/internal/sorted"
)

// TestInstrumentedProgram is the milestone: a program built with tigris runs
// exactly as the plain build does and reports the calls it made.
func TestInstrumentedProgram(t *testing.T) {
	dir := itest.NewModule(t, itest.ShopFiles)
	plain := filepath.Join(dir, "plain"+itest.ExeSuffix())
	inst := filepath.Join(dir, "inst"+itest.ExeSuffix())
	itest.Go(t, dir, nil, "build", "-o", plain, ".")
	itest.Tigris(t, dir, nil, "go", "build", "-o", inst, ".")

	for _, mode := range []string{"off", "coarse", "fine"} {
		env := []string{"TIGRIS_MODE=" + mode, "TIGRIS_OUT=" + filepath.Join(dir, "out-"+mode+".tgr")}
		if got := itest.RunProgram(t, inst, env...); got != itest.ShopOutput {
			t.Errorf("mode %s: output\n%s\nwant (as the plain build)\n%s", mode, got, itest.ShopOutput)
		}
	}
	if got := itest.RunProgram(t, plain); got != itest.ShopOutput {
		t.Fatalf("plain build output\n%s\nwant\n%s", got, itest.ShopOutput)
	}
	// ShopConfig has no admin block, so the binary has no endpoint:
	// TIGRIS_ADMIN gets one line that says what to write in tigris.yaml (the
	// comment of the tigris.yaml that tigris init writes says so too), and
	// the program runs on.
	warning := `tigris: admin endpoint 127.0.0.1:0 not started: this binary was built without it (tigris builds it in only when tigris.yaml sets admin.link: true or admin.listen); add "link: true" under "admin:" in tigris.yaml and rebuild with tigris go build` + "\n"
	if got := itest.RunProgram(t, inst, "TIGRIS_ADMIN=127.0.0.1:0"); strings.Replace(got, warning, "", 1) != itest.ShopOutput || !strings.Contains(got, warning) {
		t.Errorf("TIGRIS_ADMIN with no endpoint built in: output\n%s\nwant the program's and the line\n%s", got, warning)
	}

	// Coarse statistics count every call once, errors by the error result and
	// panics by how the function ended; generic instantiations share a probe.
	out, code := itest.Run(t, dir, []string{"TIGRIS_MODE=coarse"}, inst, "stats")
	if code != 0 {
		t.Fatalf("stats run: exit status %d\n%s", code, out)
	}
	stats := statLines(out)
	want := map[string]string{
		"example.com/itest/shop.(*Store).Find(string) (int, error)": "count=21 errors=10 panics=0",
		"example.com/itest/shop.Store.Len() int":                    "count=1 errors=0 panics=0",
		"example.com/itest/shop.Fib(int) int":                       fmt.Sprintf("count=%d errors=0 panics=0", fibCalls(15)+3*fibCalls(10)),
		"example.com/itest/shop.Max[...](T, T) T":                   "count=2 errors=0 panics=0",
		"example.com/itest/shop.Safe(func()) error":                 "count=1 errors=1 panics=0",
		// Boom only panics, and has no defer of its own: under the default
		// monitor.panics (own-defers) its probe has no deferred exit, and
		// a call that panics is not measured (TestPanicsAll measures it).
		"example.com/itest/shop.Boom(int) int":                 "count=0 errors=0 panics=0",
		"example.com/itest/shop.Sum(...int) int":               "count=2 errors=0 panics=0",
		"example.com/itest/shop.(*Stack[...]).Pop() (T, bool)": "count=2 errors=0 panics=0",
	}
	checkStats(t, stats, want)
	// Durations: Nap slept 3 and 5 ms.
	var napMean float64
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "MEAN example.com/itest/shop.Nap(time.Duration) "); ok {
			fmt.Sscan(rest, &napMean)
		}
	}
	if napMean < 4e6 || napMean > 1e9 {
		t.Errorf("Nap's mean duration %.0f ns; it slept 3 and 5 ms", napMean)
	}
	if _, ok := stats["example.com/itest.main()"]; !ok {
		t.Errorf("main.main has no probe; have:\n%s", strings.Join(sorted.Keys(stats), "\n"))
	}

	checkFineTrace(t, filepath.Join(dir, "out-fine.tgr"))
	if itest.FileExists(filepath.Join(dir, "out-coarse.tgr")) {
		t.Error("coarse mode wrote a trace file")
	}
}

// TestPanicsAll: under monitor.panics: all every probe defers its exit, so
// the calls of a function without a defer of its own that panic are counted,
// as panics.
func TestPanicsAll(t *testing.T) {
	files := map[string]string{}
	for k, v := range itest.ShopFiles {
		files[k] = v
	}
	files["tigris.yaml"] = strings.Replace(itest.ShopConfig, "\n  mode: coarse\n", "\n  mode: coarse\n  panics: all\n", 1)
	dir := itest.NewModule(t, files)
	inst := filepath.Join(dir, "inst"+itest.ExeSuffix())
	itest.Tigris(t, dir, nil, "go", "build", "-o", inst, ".")
	out, code := itest.Run(t, dir, []string{"TIGRIS_MODE=coarse"}, inst, "stats")
	if code != 0 {
		t.Fatalf("stats run: exit status %d\n%s", code, out)
	}
	stats := statLines(out)
	for sig, w := range map[string]string{
		"example.com/itest/shop.Boom(int) int":      "count=4 errors=0 panics=4",
		"example.com/itest/shop.Safe(func()) error": "count=1 errors=1 panics=0",
	} {
		if got := stats[sig]; got != w {
			t.Errorf("%s: %q, want %q", sig, got, w)
		}
	}
}

// fibCalls is how many calls Fib(n) makes in all.
func fibCalls(n int) int {
	if n < 2 {
		return 1
	}
	return 1 + fibCalls(n-1) + fibCalls(n-2)
}

// statLines parses the program's STAT lines: signature → counters.
// checkStats reports each probe of want whose statistics line (statLines)
// differs or is missing.
func checkStats(t *testing.T, stats, want map[string]string) {
	t.Helper()
	for sig, w := range want {
		if got, ok := stats[sig]; !ok {
			t.Errorf("no statistics for %s; have:\n%s", sig, strings.Join(sorted.Keys(stats), "\n"))
		} else if got != w {
			t.Errorf("%s: %s, want %s", sig, got, w)
		}
	}
}

func statLines(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		rest, ok := strings.CutPrefix(line, "STAT ")
		if !ok {
			continue
		}
		i := strings.LastIndex(rest, " count=")
		m[rest[:i]] = rest[i+1:]
	}
	return m
}

// checkFineTrace reads the fine-mode trace back: every call is a record, the
// records of a trace form a tree (Kieker's eoi/ess), goroutines start their own
// traces, and panics and errors are flagged.
func checkFineTrace(t *testing.T, path string) {
	t.Helper()
	r, err := writer.Open(path)
	if err != nil {
		t.Fatalf("fine mode wrote no readable trace: %v", err)
	}
	defer r.Close()
	calls := map[string]int{}
	panics, errs := 0, 0
	gids := map[uint64]bool{}
	var records []writer.Record
	for {
		it, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch it.Kind {
		case writer.KindRecord:
			rec := it.Record
			records = append(records, rec)
			calls[r.Probe(rec.Probe).Name]++
			gids[rec.GID] = true
			if rec.Flags&writer.FlagPanic != 0 {
				panics++
			}
			if rec.Flags&writer.FlagError != 0 {
				errs++
			}
		case writer.KindLoss, writer.KindGap:
			t.Errorf("trace has a %v item: %+v", it.Kind, it)
		}
	}
	if calls["Fib"] != fibCalls(15)+3*fibCalls(10) || calls["Find"] != 21 || calls["main"] != 1 {
		t.Errorf("records per function: %v", calls)
	}
	// Boom's calls, which all panic, have no record: its probe has no
	// deferred exit (monitor.panics: own-defers), and the trees below still
	// hold (each exit puts the trace's depth back where its call started).
	if panics != 0 || errs != 10+1 || calls["Boom"] != 0 {
		t.Errorf("%d panic and %d error records, %d of Boom; want no panic (Boom's calls are not measured) and 11 errors (Find ×10, Safe)", panics, errs, calls["Boom"])
	}
	if len(gids) != 4 {
		t.Errorf("records from %d goroutines, want 4 (main and 3 spawned)", len(gids))
	}
	traces := writer.BuildTraces(records)
	if len(traces) != 4 {
		t.Errorf("%d traces, want 4: main's and one per spawned goroutine", len(traces))
	}
	for _, tr := range traces {
		if len(tr.Roots) != 1 {
			t.Errorf("trace %d has %d roots, want 1 (every call was recorded)", tr.ID, len(tr.Roots))
		}
	}
}

// TestInstrumentedPanicAndExit: a panic prints the plain build's traceback
// (addresses aside: line numbers point at the original source), and os.Exit
// keeps its status while the trace still gets written.
func TestInstrumentedPanicAndExit(t *testing.T) {
	dir := itest.NewModule(t, itest.ShopFiles)
	plain := filepath.Join(dir, "plain"+itest.ExeSuffix())
	inst := filepath.Join(dir, "inst"+itest.ExeSuffix())
	itest.Go(t, dir, nil, "build", "-o", plain, ".")
	itest.Tigris(t, dir, nil, "go", "build", "-o", inst, ".")

	plainOut, plainCode := itest.Run(t, dir, nil, plain, "panic")
	trace := filepath.Join(dir, "panic.tgr")
	instOut, instCode := itest.Run(t, dir, []string{"TIGRIS_MODE=fine", "TIGRIS_OUT=" + trace}, inst, "panic")
	if plainCode != 2 || instCode != plainCode {
		t.Errorf("exit status %d, plain %d (want 2)", instCode, plainCode)
	}
	if a, b := stripAddresses(plainOut), stripAddresses(instOut); a != b {
		t.Errorf("panic output differs from the plain build's\n--- instrumented\n%s\n--- plain\n%s", b, a)
	}
	if !strings.Contains(plainOut, "shop/shop.go:75") {
		t.Errorf("traceback does not point at Boom's panic line:\n%s", plainOut)
	}
	if n := itest.CountRecords(t, trace); n == 0 {
		t.Error("a panicking program wrote no records")
	}

	exitTrace := filepath.Join(dir, "exit.tgr")
	_, code := itest.Run(t, dir, []string{"TIGRIS_MODE=fine", "TIGRIS_OUT=" + exitTrace}, inst, "exit")
	if code != 3 {
		t.Errorf("os.Exit(3) exited %d", code)
	}
	if n := itest.CountRecords(t, exitTrace); n == 0 {
		t.Error("os.Exit lost the trace")
	}
}

var hexAddr = regexp.MustCompile(`(\+)?0x[0-9a-f]+\??`)

func stripAddresses(s string) string { return hexAddr.ReplaceAllString(s, "X") }

// TestInstrumentedTests runs a package's tests through tigris with coverage:
// same results, same coverage as the plain run (the //line directives keep
// every position).
func TestInstrumentedTests(t *testing.T) {
	dir := itest.NewModule(t, itest.ShopFiles)
	plainProfile, instProfile := filepath.Join(dir, "plain.cov"), filepath.Join(dir, "inst.cov")
	plain := itest.Go(t, dir, nil, "test", "-count=1", "-coverprofile="+plainProfile, "./shop")
	inst := itest.Tigris(t, dir, nil, "go", "test", "-count=1", "-coverprofile="+instProfile, "./shop")
	cov := regexp.MustCompile(`coverage: [0-9.]+% of statements`)
	if a, b := cov.FindString(plain), cov.FindString(inst); a == "" || a != b {
		t.Errorf("coverage through tigris %q, plain %q", b, a)
	}
	a, _ := os.ReadFile(plainProfile)
	b, _ := os.ReadFile(instProfile)
	if !bytes.Equal(a, b) {
		t.Errorf("coverage profiles differ\n--- tigris\n%s\n--- plain\n%s", b, a)
	}
}

// TestConfigChangeAndCache: a config change rebuilds what it affects (a change
// of run-time settings only relinks), reverting it reuses the cache (the same
// binary), and a plain build afterwards is plain.
func TestConfigChangeAndCache(t *testing.T) {
	dir := itest.NewModule(t, itest.HelloFiles)
	config := func(yaml string) { itest.WriteFile(t, filepath.Join(dir, "tigris.yaml"), yaml) }
	build := func(out string) string { return itest.Tigris(t, dir, nil, "go", "build", "-x", "-o", out, ".") }
	itest.Go(t, dir, nil, "build", "-o", "plain1", ".")
	config(itest.ShopConfig)
	build("inst1")
	config(strings.Replace(itest.ShopConfig, "mode: coarse", "mode: fine", 1))
	if out := build("inst-fine"); strings.Contains(out, "/compile ") {
		t.Errorf("changing only run-time settings recompiled packages:\n%s", out)
	}
	config(itest.ShopConfig + "  exclude: [\"execution(* *.Hello(..))\"]\n")
	if out := build("inst2"); !strings.Contains(out, "/compile ") {
		t.Errorf("changing the pointcuts recompiled nothing:\n%s", out)
	}
	config(itest.ShopConfig)
	if out := build("inst3"); strings.Contains(out, "/compile ") {
		t.Errorf("reverting the config recompiled packages:\n%s", out)
	}
	os.Remove(filepath.Join(dir, "tigris.yaml"))
	itest.Go(t, dir, nil, "build", "-o", "plain2", ".")

	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, other := range []string{"inst2", "inst-fine"} {
		if bytes.Equal(read("inst1"), read(other)) {
			t.Errorf("changing the config did not change the binary (%s)", other)
		}
	}
	if !bytes.Equal(read("inst1"), read("inst3")) {
		t.Error("reverting the config did not give back the first binary")
	}
	if !bytes.Equal(read("plain1"), read("plain2")) {
		t.Error("a plain build after instrumented ones is not the plain binary")
	}
	for _, bin := range []string{"inst1", "inst2", "inst-fine"} {
		if got := itest.RunProgram(t, filepath.Join(dir, bin)); got != "hello, GOPHER\n" {
			t.Errorf("%s printed %q", bin, got)
		}
	}
	// The linked settings apply: only the fine build traces Hello.
	traces, _ := filepath.Glob(filepath.Join(dir, "tigris-out", "inst-fine-*.tgr"))
	others, _ := filepath.Glob(filepath.Join(dir, "tigris-out", "inst[123]-*.tgr"))
	if len(traces) != 1 || len(others) != 0 {
		t.Errorf("trace files of the fine build %q, of the coarse builds %q; want one and none", traces, others)
	}
}

// TestMainPackagePattern: the package pattern main selects a command's
// functions through the whole build, as docs/pointcuts.md promises, although
// the go command names the package by its import path.
func TestMainPackagePattern(t *testing.T) {
	files := map[string]string{"tigris.yaml": "version: 1\nmonitor:\n  include: [\"execution(* main.*(..))\"]\n"}
	for k, v := range itest.HelloFiles {
		files[k] = v
	}
	dir := itest.NewModule(t, files)
	if m := itest.Tigris(t, dir, nil, "match", "./..."); !strings.Contains(m, "func example.com/itest.main()") || !strings.Contains(m, "\n1 of 1 function in 2 packages instrumented") {
		t.Errorf("tigris match:\n%s", m)
	}
	exe := filepath.Join(dir, "app"+itest.ExeSuffix())
	itest.Tigris(t, dir, nil, "go", "build", "-o", exe, ".")
	trace := filepath.Join(dir, "main.tgr")
	if got := itest.RunProgram(t, exe, "TIGRIS_MODE=fine", "TIGRIS_OUT="+trace); got != "hello, GOPHER\n" {
		t.Fatalf("output %q", got)
	}
	r, err := writer.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var recorded []string
	for {
		it, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if it.Kind == writer.KindRecord {
			recorded = append(recorded, r.Probe(it.Record.Probe).Signature)
		}
	}
	if len(recorded) != 1 || recorded[0] != "example.com/itest.main()" {
		t.Errorf("recorded %q; want main alone", recorded)
	}
}

// TestNothingSelectedByTypes: a config that names a package of the build but
// whose pointcuts only its functions' types rule out (a result type) cannot be
// decided from syntax, so that package compiles through tigris; nothing is
// instrumented, and the program behaves as the plain build and links no tigris
// code (README, docs/config.md). TestNothingMatchedIsPlain (buildcost) covers a
// config that syntax rules out: a plain go build, byte for byte.
func TestNothingSelectedByTypes(t *testing.T) {
	files := map[string]string{"tigris.yaml": "version: 1\nmonitor:\n  include: [\"execution(int example.com/itest/greet.Hello(..))\"]\n  inlinable: probe\n"}
	for k, v := range itest.HelloFiles {
		files[k] = v
	}
	dir := itest.NewModule(t, files)
	if m := itest.Tigris(t, dir, nil, "match", "./..."); !strings.HasPrefix(m, "0 of 1 function in 2 packages instrumented") {
		t.Errorf("tigris match:\n%s", m)
	}
	exe := filepath.Join(dir, "app"+itest.ExeSuffix())
	itest.Tigris(t, dir, nil, "go", "build", "-o", exe, ".")
	if got := itest.RunProgram(t, exe, "TIGRIS_MODE=fine", "TIGRIS_ADMIN=127.0.0.1:0"); got != "hello, GOPHER\n" {
		t.Errorf("output %q; want the plain program's", got)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("tigrisgo/tigris/runtime")) {
		t.Error("a build that instruments nothing links tigris code")
	}
	if itest.FileExists(filepath.Join(dir, "tigris-out")) {
		t.Error("a program without probes wrote a trace directory")
	}
}

// TestStdExecutionSaysWhy: a config whose only entry selects the execution of
// a standard-library function instruments nothing (the standard library
// compiles unchanged without monitor.std). tigris match and tigris go build
// say so and give the call(...) entry to write instead; the build is plain.
func TestStdExecutionSaysWhy(t *testing.T) {
	files := map[string]string{"tigris.yaml": "version: 1\nmonitor:\n  include: [\"execution(* strings.ToUpper(..))\"]\n"}
	for k, v := range itest.HelloFiles {
		files[k] = v
	}
	dir := itest.NewModule(t, files)
	why := "monitor.include entry execution(* strings.ToUpper(..)) selects functions of the standard library (strings), which tigris compiles unchanged unless monitor.std is true, so it instruments nothing.\n"
	instead := `    - "call(* strings.ToUpper(..)) && within(example.com/itest/...)"` + "\n"
	if m := itest.Tigris(t, dir, nil, "match", "./..."); !strings.HasPrefix(m, "0 of 0 functions in 2 packages instrumented\n"+why) || !strings.Contains(m, instead) {
		t.Errorf("tigris match:\n%s", m)
	}
	exe := filepath.Join(dir, "app"+itest.ExeSuffix())
	out := itest.Tigris(t, dir, nil, "go", "build", "-o", exe, ".")
	if !strings.HasPrefix(out, "tigris: "+why) || !strings.Contains(out, "tigris: "+instead) {
		t.Errorf("tigris go build:\n%s", out)
	}
	if got := itest.RunProgram(t, exe); got != "hello, GOPHER\n" {
		t.Errorf("output %q; want the plain program's", got)
	}
}

// TestMatchedNothing: a config whose pointcuts match nothing gives a program that
// behaves as the plain build, and whose monitor never starts.
//
// The config is itest.ShopConfig (one config, one compile of the standard library
// for all these tests); it matches nothing because the module is not
// example.com/itest.
func TestMatchedNothing(t *testing.T) {
	files := map[string]string{"tigris.yaml": itest.ShopConfig}
	for k, v := range itest.HelloFiles {
		files[k] = strings.ReplaceAll(v, "example.com/itest/", "example.com/plain/")
	}
	dir := itest.NewModuleAt(t, "example.com/plain", files)
	itest.Tigris(t, dir, nil, "go", "build", "-o", "inst", ".")
	out, code := itest.Run(t, dir, []string{"TIGRIS_ADMIN=127.0.0.1:0", "TIGRIS_MODE=fine"}, filepath.Join(dir, "inst"))
	if code != 0 || out != "hello, GOPHER\n" {
		t.Errorf("exit %d, output %q; want the plain program's", code, out)
	}
	if itest.FileExists(filepath.Join(dir, "tigris-out")) {
		t.Error("a program without probes wrote a trace directory")
	}
	match := itest.Tigris(t, dir, nil, "match", "./...")
	if strings.TrimSpace(strings.SplitN(match, "\n", 2)[0]) != "0 of 0 functions in 2 packages instrumented" {
		t.Errorf("tigris match: %q", match)
	}
}

// TestNamedExactlyNotProbed: a function that the config names exactly but
// that gets no probe because the compiler inlines it is reported by tigris go
// build, with its position; one selected by a wildcard is only counted by
// tigris match.
func TestNamedExactlyNotProbed(t *testing.T) {
	for _, c := range []struct {
		include string
		report  bool
	}{
		{"execution(* example.com/itest/greet.Hello(..))", true},
		{"execution(* example.com/itest/greet.*(..))", false},
	} {
		files := map[string]string{"tigris.yaml": "version: 1\nmonitor:\n  include: [\"" + c.include + "\"]\n"}
		for k, v := range itest.HelloFiles {
			files[k] = v
		}
		dir := itest.NewModule(t, files)
		out := itest.Tigris(t, dir, nil, "go", "build", "-o", "app"+itest.ExeSuffix(), ".")
		want := regexp.MustCompile(`greet\.go:\d+:\d+: example\.com/itest/greet\.Hello is named by monitor\.include but gets no probe: the compiler inlines it`)
		if got := want.MatchString(out); got != c.report {
			t.Errorf("include %s: tigris go build reported the function: %v, want %v; output:\n%s", c.include, got, c.report, out)
		}
	}
}

// phase1Files is a program with a hot function of about a microsecond, more
// than the default coarse budget's share of which goes to its probe's timed
// calls but not to its untimed ones, and a function of a few nanoseconds,
// whose probe costs more than the budget even untimed.
var phase1Files = map[string]string{
	"tigris.yaml": "version: 1\nmonitor:\n  include: [\"execution(* example.com/itest/hot.*(..))\"]\n  mode: coarse\n  small: probe\n  inlinable: probe\n",
	"hot/hot.go": `package hot

// Mix stirs x for about a microsecond.
//
//go:noinline
func Mix(x uint64) uint64 {
	for i := 0; i < 480; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// Add takes a nanosecond or two.
//
//go:noinline
func Add(x, y uint64) uint64 { return x + y }
`,
	"main.go": `package main

import (
	"fmt"
	"time"

	"example.com/itest/hot"
	"github.com/tigrisgo/tigris/runtime/monitor"
)

func main() {
	calls, x := 0, uint64(1)
	for end := time.Now().Add(2500 * time.Millisecond); time.Now().Before(end); {
		for i := 0; i < 1000; i++ {
			x = hot.Mix(x)
			x = hot.Add(x, 1)
		}
		calls += 1000
	}
	for _, s := range monitor.Snapshot() {
		fmt.Printf("%q calls=%d count=%d timed=%d one-in=%d shed=%v mode=%s x=%d why=%s\n", s.Signature, calls, s.Count, s.Timed, s.TimedOneIn, s.Shed, s.Mode, x&1, s.TimingReason)
	}
}
`,
}

// TestPhase1WithinBudget: after the first second (the default coarse
// budget), a coarse probe on a function of about a microsecond times one
// call in N, its count still estimating every call, and one on a function
// of a nanosecond or two is shed: switched off, with the reason.
func TestPhase1WithinBudget(t *testing.T) {
	dir := itest.NewModule(t, phase1Files)
	exe := filepath.Join(dir, "app"+itest.ExeSuffix())
	itest.Tigris(t, dir, nil, "go", "build", "-o", exe, ".")
	out := itest.RunProgram(t, exe)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var sig, mode string
		var calls, count, timed, oneIn, x int
		var shed bool
		if _, err := fmt.Sscanf(line, "%q calls=%d count=%d timed=%d one-in=%d shed=%t mode=%s x=%d", &sig, &calls, &count, &timed, &oneIn, &shed, &mode, &x); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		switch {
		case strings.Contains(sig, ".Mix("):
			if shed || oneIn < 2 || !strings.Contains(line, "monitor.coarse-budget") {
				t.Errorf("Mix: shed %v, one call in %d; want one in some N > 1, with the reason:\n%s", shed, oneIn, line)
			}
			if timed >= count || float64(count) < 0.8*float64(calls) || float64(count) > 1.2*float64(calls) {
				t.Errorf("Mix: %d calls, counted %d (%d timed): the count must estimate every call", calls, count, timed)
			}
		case strings.Contains(sig, ".Add("):
			if !shed || mode != "off" || !strings.Contains(line, "why=switched off") || !strings.Contains(line, "monitor.coarse-budget") {
				t.Errorf("Add: shed %v, mode %s; want shed, off, with the reason:\n%s", shed, mode, line)
			}
			if count >= calls/2 {
				t.Errorf("Add: counted %d of %d calls; a shed probe counts none after the first look", count, calls)
			}
		default:
			t.Errorf("unexpected probe: %s", line)
		}
	}
}

// returnsFiles has functions whose returns the rewriter rewrites in the ways
// that can go wrong: a short variable declaration at the top of the body that
// assigns a named result (r, w := ...), which a block around the body would
// turn into a new variable; a named result shadowed in an inner block; bare
// returns; each with and without a defer of its own.
var returnsFiles = map[string]string{
	"tigris.yaml": "version: 1\nmonitor:\n  include: [\"within(example.com/itest/ret)\"]\n  small: probe\n",
	"ret/ret.go": `package ret

import (
	"errors"
	"unicode/utf8"
)

var errShort = errors.New("short")

//go:noinline
func NextDefer(s string, i int) (r rune) {
	defer func() {}()
	if i >= len(s) {
		return -1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	if w == 0 {
		return -2
	}
	return
}

//go:noinline
func Next(s string, i int) (r rune) {
	if i >= len(s) {
		return -1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	if w == 0 {
		return -2
	}
	return
}

//go:noinline
func Shadow(n int) (v int, err error) {
	defer func() {
		if err != nil {
			v = -v
		}
	}()
	if n > 0 {
		v, err := n*2, errShort
		if v > 4 {
			return v, err
		}
	}
	v, err = n, nil
	return
}

//go:noinline
func Count(s string) (n int, err error) {
	for _, c := range s {
		if c == 'x' {
			n, err := n, errShort
			return n, err
		}
		n++
	}
	return
}
`,
	"main.go": `package main

import (
	"fmt"

	"example.com/itest/ret"
)

func main() {
	fmt.Println(ret.NextDefer("é!", 0), ret.NextDefer("", 0), ret.Next("é!", 0), ret.Next("", 0))
	for _, n := range []int{-1, 1, 3} {
		v, err := ret.Shadow(n)
		fmt.Println(v, err)
	}
	for _, s := range []string{"abc", "abxc"} {
		n, err := ret.Count(s)
		fmt.Println(n, err)
	}
}
`,
}

// TestReturnsKeepResults: the rewritten returns give the plain build's
// results, whichever probe form and mode (monitor.panics: all forces the
// deferred exit on every function).
func TestReturnsKeepResults(t *testing.T) {
	dir := itest.NewModule(t, returnsFiles)
	plainExe := filepath.Join(dir, "plain"+itest.ExeSuffix())
	itest.Go(t, dir, nil, "build", "-o", plainExe, ".")
	want := itest.RunProgram(t, plainExe)
	allCfg := filepath.Join(dir, "all.yaml")
	itest.WriteFile(t, allCfg, strings.Replace(returnsFiles["tigris.yaml"], "monitor:\n", "monitor:\n  panics: all\n", 1))
	for _, cfg := range []string{"", allCfg} {
		exe := filepath.Join(dir, "inst"+itest.ExeSuffix())
		args := []string{"go", "build", "-o", exe, "."}
		if cfg != "" {
			args = append([]string{"--config", cfg}, args...)
		}
		itest.Tigris(t, dir, nil, args...)
		for _, mode := range []string{"off", "coarse", "fine"} {
			got := itest.RunProgram(t, exe, "TIGRIS_MODE="+mode, "TIGRIS_OUT="+filepath.Join(dir, "t.tgr"))
			if got != want {
				t.Errorf("config %q, mode %s: output\n%s\nwant the plain build's\n%s", cfg, mode, got, want)
			}
		}
	}
}
