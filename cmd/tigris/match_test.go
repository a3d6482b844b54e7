package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/internal/workdir"
	"github.com/tigrisgo/tigris/rewriter"
	"github.com/tigrisgo/tigris/runtime/pointcut"
)

// matchModule writes a module with two packages and a tigris.yaml, and
// changes into it.
func matchModule(t *testing.T, config string) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":      "module example.com/m\n\ngo 1.22\n",
		"tigris.yaml": config,
		"shop/shop.go": `package shop

// Find is exported.
func Find(key string) (int, error) { return len(key), nil }

func helper() int { return 1 }

// Store is a type.
type Store struct{}

// Get is a method.
func (s *Store) Get() int { return helper() }
`,
		"util/util.go": "package util\n\n// Twice doubles.\nfunc Twice(n int) int { return 2 * n }\n",
	} {
		name = filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(name), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	workdir.Chdir(t, dir)
}

// TestMatchCommand: match lists what the config selects with the include
// entries that select it, counts per package, and the summary.
func TestMatchCommand(t *testing.T) {
	matchModule(t, `version: 1
pointcuts:
  api: execution(* example.com/m/... .*(..)) && exported()
monitor:
  include: [api, "execution(* example.com/m/shop.*(..))"]
  inlinable: probe # the module's functions are all small enough to inline
`)
	out, stderr, err := tigris(t, "match")
	if err != nil {
		t.Fatalf("match: %v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{
		"shop/shop.go:4:6:  func example.com/m/shop.Find(string) (int, error)  [api, execution(* example.com/m/shop.*(..))]",
		"shop/shop.go:6:6:  func example.com/m/shop.helper() int  [execution(* example.com/m/shop.*(..))]",
		"shop/shop.go:12:17: func (*example.com/m/shop.Store).Get() int  [api, execution(* example.com/m/shop.*(..))]",
		"util/util.go:4:6:  func example.com/m/util.Twice(int) int  [api]",
	}
	if len(lines) != len(want) {
		t.Fatalf("match printed:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}
	for i := range want {
		if strings.Join(strings.Fields(lines[i]), " ") != strings.Join(strings.Fields(want[i]), " ") {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, lines[i], want[i])
		}
	}
	for _, w := range []string{
		"functions matched instrumented  package\n",
		"        3       3            3  example.com/m/shop\n",
		"        1       1            1  example.com/m/util\n",
		"4 of 4 functions in 2 packages instrumented\n",
	} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}

	out, _, err = tigris(t, "match", "--json", "./util")
	var ms []matchJSON
	if err != nil || json.Unmarshal([]byte(out), &ms) != nil || len(ms) != 1 || ms[0].Name != "Twice" || strings.Join(ms[0].By, ",") != "api" {
		t.Errorf("match --json ./util: %v\n%s", err, out)
	}
	_, stderr, _ = tigris(t, "match", "./util")
	if !strings.Contains(stderr, "1 of 1 function in 1 package instrumented") {
		t.Errorf("singular summary:\n%s", stderr)
	}
}

// TestMatchStdExecution: execution(...) of standard-library functions
// instruments nothing (the standard library compiles unchanged without
// monitor.std); match says so after its count, and gives the call-site
// pointcut to write instead, adapted from the entry. An entry that selects
// the module's functions gets no such note.
func TestMatchStdExecution(t *testing.T) {
	matchModule(t, `version: 1
pointcuts:
  client: execution(* net/http.(*Client).Do(..))
monitor:
  include: [client, "execution(* strings.*(..))", "execution(* example.com/m/util.*(..))"]
`)
	os.WriteFile(filepath.Join("shop", "fetch.go"), []byte(`package shop

import (
	"net/http"
	"strings"
)

// Fetch gets a page.
func Fetch(c *http.Client, url string) (*http.Response, error) {
	req, err := http.NewRequest("GET", strings.TrimSpace(url), nil)
	if err != nil {
		return nil, err
	}
	return c.Do(req)
}
`), 0o666)
	_, stderr, err := tigris(t, "match", "./shop")
	if err != nil {
		t.Fatalf("match: %v\n%s", err, stderr)
	}
	want := `0 of 0 functions in 1 package instrumented
monitor.include entry client selects functions of the standard library (net/http), which tigris compiles unchanged unless monitor.std is true, so it instruments nothing.
To measure the calls your packages make to them, write this entry instead:
    - "call(* net/http.(*Client).Do(..)) && within(example.com/m/...)"
or set monitor.std: true to instrument the functions themselves, for every caller (docs/pointcuts.md).
monitor.include entry execution(* strings.*(..)) selects functions of the standard library (strings), which tigris compiles unchanged unless monitor.std is true, so it instruments nothing.
To measure the calls your packages make to them, write this entry instead:
    - "call(* strings.*(..)) && within(example.com/m/...)"
or set monitor.std: true to instrument the functions themselves, for every caller (docs/pointcuts.md).
`
	if !strings.HasSuffix(stderr, want) {
		t.Errorf("match printed:\n%s\nwant it to end:\n%s", stderr, want)
	}
	if _, stderr, _ := tigris(t, "match", "./util"); strings.Contains(stderr, "standard library") {
		t.Errorf("a note for an entry that selects the module's functions:\n%s", stderr)
	}
}

// TestMatchBadConfig: a config error names the file, line and column, and
// match lists nothing.
func TestMatchBadConfig(t *testing.T) {
	matchModule(t, "version: 1\nmonitor:\n  include: [\"execution(* example.com/m/...(\"]\n")
	out, _, err := tigris(t, "match")
	if err == nil || out != "" || !strings.Contains(err.Error(), "tigris.yaml:3:") {
		t.Errorf("match with a bad pointcut: %v, printed %q", err, out)
	}
}

// TestInitCommand: init writes a tigris.yaml that match accepts and that
// selects every function of the module; it refuses to overwrite one without
// --force.
func TestInitCommand(t *testing.T) {
	matchModule(t, "")
	if err := os.Remove("tigris.yaml"); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := tigris(t, "init", "--no-get")
	if err != nil || !strings.Contains(out, "wrote ") || !strings.Contains(out, "example.com/m") {
		t.Fatalf("init: %v\n%s%s", err, out, stderr)
	}
	if out, _, err := tigris(t, "init", "--no-get"); err != nil || !strings.Contains(out, "kept ") {
		t.Errorf("init over an existing tigris.yaml: %v, %q; want it kept", err, out)
	}
	if _, _, err := tigris(t, "init", "--no-get", "--force"); err != nil {
		t.Errorf("init --force: %v", err)
	}
	_, stderr, err = tigris(t, "match")
	// init's config leaves functions the compiler inlines without a probe, and
	// all four are that small.
	if err != nil || !strings.Contains(stderr, "0 of 4 functions in 2 packages instrumented; 4 more matched but get no probe because the compiler inlines them, and a probe would change inlining and escapes (-v lists them; monitor.inlinable: probe instruments them anyway)") {
		t.Errorf("match with init's config: %v\n%s", err, stderr)
	}
	gomod, _ := os.ReadFile("go.mod")
	if strings.Contains(string(gomod), "tigris") {
		t.Errorf("init --no-get changed go.mod:\n%s", gomod)
	}
}

// TestMatchProgress: a step of match that runs long is shown on stderr: on a
// terminal one line rewritten in place, cleared at the end; elsewhere, with
// --progress, a line after 2 s and every 10 s after. Steps that end sooner
// show nothing, and so does match into a pipe or a buffer without
// --progress (TestMatchCommand's).
func TestMatchProgress(t *testing.T) {
	const step = "type-checking the 2 package(s) the pointcuts may match"
	var b strings.Builder
	p := newMatchProgress(&b, false)
	p.tick(time.Now()) // no step yet
	p.step("listing the packages")
	p.tick(p.since.Add(time.Second))
	p.step(step)
	for _, s := range []int{1, 2, 3, 11, 12, 13} {
		p.tick(p.since.Add(time.Duration(s) * time.Second))
	}
	p.clear()
	if want := "match: " + step + ", 2s\nmatch: " + step + ", 12s\n"; b.String() != want {
		t.Errorf("not on a terminal:\n%q\nwant\n%q", b.String(), want)
	}

	b.Reset()
	p = newMatchProgress(&b, true)
	p.step(step)
	for _, s := range []int{1, 2, 3} {
		p.tick(p.since.Add(time.Duration(s) * time.Second))
	}
	p.clear()
	if want := "\r\x1b[Kmatch: " + step + ", 2s\r\x1b[Kmatch: " + step + ", 3s\r\x1b[K"; b.String() != want {
		t.Errorf("on a terminal:\n%q\nwant\n%q", b.String(), want)
	}
	if startMatchProgress(&b, false) != nil {
		t.Error("progress shown on a buffer without --progress")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if startMatchProgress(w, false) != nil {
		t.Error("progress shown on a pipe without --progress")
	}
	p = startMatchProgress(w, true)
	if p == nil || p.tty {
		t.Errorf("--progress on a pipe: %+v; want lines", p)
	}
	p.stop()
}

// TestMatchJSONLiteralName: --json's name of a function literal is its Go
// name within the package (NewHandler.func1, Routes.func2.1), as the trace
// files and the stats name its probe; a declared function's stays its own.
func TestMatchJSONLiteralName(t *testing.T) {
	rep := &rewriter.MatchReport{Matches: []rewriter.Match{
		{Signature: pointcut.Signature{Package: "example.com/m/web", Name: "NewHandler", Lit: ".func1", Flags: pointcut.Literal}},
		{Signature: pointcut.Signature{Package: "example.com/m/web", Recv: "Server", RecvPtr: true, Name: "Routes", Lit: ".func2.1", Flags: pointcut.Literal}},
		{Signature: pointcut.Signature{Package: "example.com/m/web", Name: "NewHandler"}},
	}}
	var out, errs strings.Builder
	if err := printMatches(&out, &errs, rep, true, false); err != nil {
		t.Fatal(err)
	}
	var ms []matchJSON
	if err := json.Unmarshal([]byte(out.String()), &ms); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	if got, want := strings.Join(names, " "), "NewHandler.func1 Routes.func2.1 NewHandler"; got != want {
		t.Errorf("match --json names: %s, want %s\n%s", got, want, out.String())
	}
}
