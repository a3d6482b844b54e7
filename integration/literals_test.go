package integration

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/tigrisgo/tigris/integration/internal/itest"
	"github.com/tigrisgo/tigris/internal/sorted"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// literalsMain has its work in function literals: a handler returned by a
// constructor, a deferred literal that recovers, a goroutine body, a literal
// in func init. Each prints where runtime.Caller says it runs, so the
// output shows the names and lines tracebacks would.
const literalsMain = `package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"sort"
	"sync"

	"github.com/tigrisgo/tigris/runtime/monitor"
)

func where() string {
	pc, _, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", runtime.FuncForPC(pc).Name(), line)
}

func NewHandler(greeting string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s ", greeting, r.URL.Path)
		fmt.Fprintf(w, "at %s", where())
	}
}

func Safe(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("recovered %v at %s", r, where())
		}
	}()
	f()
	return nil
}

func init() {
	fmt.Println("init", func() string { return where() }())
}

func main() {
	h := NewHandler("hello")
	for i := 0; i < 3; i++ {
		rec := httptest.NewRecorder()
		h(rec, httptest.NewRequest("GET", "/x", nil))
		fmt.Println(rec.Body.String())
	}
	fmt.Println(Safe(func() { panic("boom") }))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		fmt.Println("goroutine", where())
	}()
	wg.Wait()
	if len(os.Args) > 1 {
		printStats()
	}
}

func printStats() {
	stats := monitor.Snapshot()
	sort.Slice(stats, func(i, j int) bool { return stats[i].Signature < stats[j].Signature })
	for _, s := range stats {
		fmt.Printf("STAT %s count=%d errors=%d panics=%d\n", s.Signature, s.Count, s.Errors, s.Panics)
	}
}
`

// TestLiteralsInstrumented builds a program whose work is in function
// literals with a config that selects them (and, with monitor.inlinable and
// monitor.small: probe, even those the compiler inlines): it prints what the
// plain build prints, runtime.Caller's names and lines included (the
// deferred literal still recovers), and its statistics name each literal
// as Go does.
func TestLiteralsInstrumented(t *testing.T) {
	dir := itest.NewModuleAt(t, "example.com/lits", map[string]string{
		"main.go": literalsMain,
		"tigris.yaml": "version: 1\nmonitor:\n  mode: coarse\n  inlinable: probe\n  small: probe\n  include:\n" +
			"    - \"within(example.com/lits) && literal() && !execution(* example.com/lits.printStats.func*(..))\"\n" +
			"    - \"execution(* example.com/lits.main()) || execution(* example.com/lits.Safe(..))\"\n",
	})
	plain := filepath.Join(dir, "plain"+itest.ExeSuffix())
	inst := filepath.Join(dir, "inst"+itest.ExeSuffix())
	itest.Go(t, dir, nil, "build", "-o", plain, ".")
	itest.Tigris(t, dir, nil, "go", "build", "-o", inst, ".")
	want := itest.RunProgram(t, plain)
	// NewHandler is inlined into main: Go 1.26 names the handler's copy
	// there main.main.NewHandler.func3, Go 1.27 main.NewHandler.func1.
	for _, line := range []string{"init main.init.0.func1:", "hello /x at main.", "recovered boom at main.Safe.func1:", "goroutine main.main.func2:"} {
		if !strings.Contains(want, line) {
			t.Fatalf("the plain build's output has no %q:\n%s", line, want)
		}
	}
	trace := filepath.Join(dir, "fine.tgr")
	for _, mode := range []string{"off", "coarse", "fine"} {
		if got := itest.RunProgram(t, inst, "TIGRIS_MODE="+mode, "TIGRIS_OUT="+trace); got != want {
			t.Errorf("mode %s: output\n%s\nwant (as the plain build)\n%s", mode, got, want)
		}
	}

	out, code := itest.Run(t, dir, []string{"TIGRIS_MODE=coarse"}, inst, "stats")
	if code != 0 {
		t.Fatalf("stats run: exit status %d\n%s", code, out)
	}
	stats := statLines(out)
	checkStats(t, stats, map[string]string{
		"example.com/lits.NewHandler.func1(net/http.ResponseWriter, *net/http.Request)": "count=3 errors=0 panics=0",
		"example.com/lits.Safe.func1()":          "count=1 errors=0 panics=0",
		"example.com/lits.main.func2()":          "count=1 errors=0 panics=0",
		"example.com/lits.init.0.func1() string": "count=1 errors=0 panics=0",
		// It only panics, and has no defer of its own: not measured.
		"example.com/lits.main.func1()": "count=0 errors=0 panics=0",
	})
	if len(stats) != 7 {
		t.Errorf("%d probes, want the 5 literals, main and Safe:\n%s", len(stats), strings.Join(sorted.Keys(stats), "\n"))
	}
	checkLiteralNesting(t, trace)
}

// checkLiteralNesting reads the fine trace of literalsMain: a literal's
// call is a child of the call that made it (the handler of main; the
// deferred literal of Safe runs before Safe's own exit, on top of the
// panicking literal), and a
// goroutine's body and func init's literal begin traces of their own.
func checkLiteralNesting(t *testing.T, path string) {
	t.Helper()
	type call struct {
		trace uint64
		depth uint32
	}
	calls := map[string][]call{}
	itest.EachRecord(t, path, func(def *writer.ProbeDef, r *writer.Record) {
		if def != nil {
			calls[def.Name] = append(calls[def.Name], call{r.Trace, r.ESS})
		}
	})
	if len(calls["main"]) != 1 {
		t.Fatalf("records by function: %v; want one of main", calls)
	}
	main := calls["main"][0]
	for name, want := range map[string]struct {
		n      int
		inMain bool
		depth  uint32
	}{
		"NewHandler.func1": {3, true, main.depth + 1},
		"Safe":             {1, true, main.depth + 1},
		// Deferred while main.func1 panics, whose frame is still on the
		// stack (a panicking call never ends): below it.
		"Safe.func1":   {1, true, main.depth + 3},
		"main.func2":   {1, false, 0},
		"init.0.func1": {1, false, 0},
	} {
		got := calls[name]
		if len(got) != want.n {
			t.Errorf("%s: %d records, want %d", name, len(got), want.n)
		}
		for _, c := range got {
			if (c.trace == main.trace) != want.inMain || c.depth != want.depth {
				t.Errorf("%s: in trace %d at depth %d; want depth %d, in main's trace %d: %v", name, c.trace, c.depth, want.depth, main.trace, want.inMain)
			}
		}
	}
}

// literalsPprofFiles is a service whose handlers are literals returned by
// constructors, in a package of its own (a command's functions are main.F in
// Go's names, and tigris names them by import path), with a nested literal in
// a method and a literal in a generic function. Every literal allocates, so
// an allocation profile at MemProfileRate 1 has each in its stacks.
var literalsPprofFiles = map[string]string{
	"web/web.go": `package web

import (
	"fmt"
	"net/http"
)

var Sink [][]byte

// NewHandler is too large for the compiler to inline: under Go 1.26 a copy
// of its literal inlined into a caller would take the caller's name.
func NewHandler(greeting string) http.HandlerFunc {
	for i := 0; i < 3; i++ {
		fmt.Sprint(i, greeting, i, greeting, i, greeting, i, greeting)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 512)
		Sink = append(Sink, b)
		fmt.Fprintf(w, "%s %s", greeting, r.URL.Path)
	}
}

type Server struct{ routes map[string]http.HandlerFunc }

//go:noinline
func (s *Server) Routes() map[string]http.HandlerFunc {
	s.routes = map[string]http.HandlerFunc{}
	s.routes["/a"] = NewHandler("a")
	s.routes["/b"] = func(w http.ResponseWriter, r *http.Request) {
		each(r.URL.Path, func(c byte) {
			Sink = append(Sink, []byte(fmt.Sprint(c)))
		})
		fmt.Fprint(w, "b")
	}
	return s.routes
}

//go:noinline
func each(s string, f func(byte)) {
	for i := 0; i < len(s); i++ {
		f(s[i])
	}
}

//go:noinline
func Map[T any](xs []T, f func(T) string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		func() {
			Sink = append(Sink, make([]byte, 128))
			out = append(out, f(x))
		}()
	}
	return out
}
`,
	"main.go": `package main

import (
	"fmt"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/pprof"

	"example.com/lits2/web"
)

func init() { runtime.MemProfileRate = 1 }

func main() {
	s := &web.Server{}
	for path, h := range s.Routes() {
		for i := 0; i < 3; i++ {
			req := httptest.NewRequest("GET", path, nil)
			req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
			h(httptest.NewRecorder(), req)
		}
	}
	fmt.Println(web.Map([]int{1, 2}, func(i int) string { return fmt.Sprint(i) }))
	runtime.GC()
	f, err := os.Create(os.Getenv("HEAP_PROFILE"))
	if err != nil {
		panic(err)
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		panic(err)
	}
}
`,
	"tigris.yaml": "version: 1\nmonitor:\n  mode: fine\n  include: [\"within(example.com/lits2/web) && literal()\"]\n",
}

// TestLiteralNamesAsPprof builds a service whose handlers are literals with
// the config's one literal entry, runs it with an allocation profile of its
// own, converts its trace with tigris convert --to pprof, and finds every
// literal tigris names in the real profile of the same binary under the
// same name. runtime/pprof writes a generic function's symbol, with its
// shape (Map[go.shape.int].func1), where tracebacks, FuncForPC and tigris
// write Map[...].func1: the comparison reads the one as the other.
// unshape writes the type arguments of a symbol's shape instantiation as
// "[...]": Map[go.shape.[]uint8,go.shape.int].func1 is Map[...].func1.
func unshape(name string) string {
	for {
		i := strings.Index(name, "[go.shape.")
		if i < 0 {
			return name
		}
		depth, j := 0, i
		for ; j < len(name); j++ {
			if name[j] == '[' {
				depth++
			} else if name[j] == ']' {
				if depth--; depth == 0 {
					break
				}
			}
		}
		if j == len(name) {
			return name
		}
		name = name[:i] + "[...]" + name[j+1:]
	}
}

func TestLiteralNamesAsPprof(t *testing.T) {
	dir := itest.NewModuleAt(t, "example.com/lits2", literalsPprofFiles)
	bin := filepath.Join(dir, "svc"+itest.ExeSuffix())
	itest.Tigris(t, dir, nil, "go", "build", "-o", bin, ".")
	trace, heap := filepath.Join(dir, "svc.tgr"), filepath.Join(dir, "heap.pprof")
	itest.RunProgram(t, bin, "TIGRIS_OUT="+trace, "HEAP_PROFILE="+heap)
	itest.Tigris(t, dir, nil, "convert", "--to", "pprof", trace)

	names := func(path string) map[string]bool {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		p, err := profile.Parse(f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		m := map[string]bool{}
		for _, fn := range p.Function {
			m[unshape(fn.Name)] = true
		}
		return m
	}
	real, ours := names(heap), names(strings.TrimSuffix(trace, ".tgr")+".pb.gz")
	want := []string{
		"example.com/lits2/web.NewHandler.func1",
		"example.com/lits2/web.(*Server).Routes.func1",
		"example.com/lits2/web.(*Server).Routes.func1.1",
		"example.com/lits2/web.Map[...].func1",
	}
	for _, name := range want {
		if !ours[name] {
			t.Errorf("tigris convert's profile has no %s; it has %v", name, sorted.Keys(ours))
		}
		if !real[name] {
			t.Errorf("the binary's own allocation profile has no %s: tigris's name is not Go's; it has %v", name, sorted.Keys(real))
		}
	}
	for name := range ours {
		if strings.Contains(name, ".func") && !real[name] {
			t.Errorf("tigris names a literal %s, which the binary's own profile does not know", name)
		}
	}
	checkHandlersJoin(t, trace)
}

// checkHandlersJoin: each call of a handler literal, a trace root taking an
// *http.Request, joined the request's W3C trace (a remote parent with the
// traceparent's trace id).
func checkHandlersJoin(t *testing.T, path string) {
	t.Helper()
	joined := map[uint64]string{} // tigris trace → W3C trace id
	var roots []struct {
		name  string
		trace uint64
	}
	itest.EachItem(t, path, func(r *writer.Reader, it *writer.Item) {
		switch it.Kind {
		case writer.KindRemote:
			joined[it.Remote.Trace] = hex.EncodeToString(it.Remote.TraceID[:])
		case writer.KindRecord:
			if def := r.Probe(it.Record.Probe); def != nil && it.Record.ESS == 0 {
				roots = append(roots, struct {
					name  string
					trace uint64
				}{def.Name, it.Record.Trace})
			}
		}
	})
	handlers := 0
	for _, root := range roots {
		if root.name != "NewHandler.func1" && root.name != "Routes.func1" { // Name without the receiver
			continue
		}
		handlers++
		if id := joined[root.trace]; id != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Errorf("the root call of %s joined W3C trace %q, want the request's", root.name, id)
		}
	}
	if handlers != 6 {
		t.Errorf("%d handler literal roots, want 6 (3 requests to each of 2 handlers): %v", handlers, roots)
	}
}

// TestLiteralsCoverage runs the tests of a package whose literals all get
// probes (monitor.inlinable and monitor.small: probe) with coverage, plainly
// and through tigris: the same verdict and the same coverage profile (the
// prologues stay on the lines of the literals' braces).
func TestLiteralsCoverage(t *testing.T) {
	files := map[string]string{
		"web/web.go": literalsPprofFiles["web/web.go"],
		"web/web_test.go": `package web

import (
	"net/http/httptest"
	"testing"
)

func TestRoutes(t *testing.T) {
	for path, h := range (&Server{}).Routes() {
		rec := httptest.NewRecorder()
		h(rec, httptest.NewRequest("GET", path, nil))
		if rec.Body.Len() == 0 {
			t.Errorf("%s: empty body", path)
		}
	}
	if got := Map([]string{"x"}, func(s string) string { return s + s }); got[0] != "xx" {
		t.Errorf("Map: %v", got)
	}
}
`,
		"tigris.yaml": "version: 1\nmonitor:\n  inlinable: probe\n  small: probe\n  include: [\"within(example.com/lits2/...) && literal()\"]\n",
	}
	dir := itest.NewModuleAt(t, "example.com/lits2", files)
	plainProfile, instProfile := filepath.Join(dir, "plain.cov"), filepath.Join(dir, "inst.cov")
	itest.Go(t, dir, nil, "test", "-count=1", "-coverprofile="+plainProfile, "./web")
	itest.Tigris(t, dir, nil, "go", "test", "-count=1", "-coverprofile="+instProfile, "./web")
	a, _ := os.ReadFile(plainProfile)
	b, _ := os.ReadFile(instProfile)
	if len(a) == 0 || string(a) != string(b) {
		t.Errorf("coverage profiles differ\n--- tigris\n%s\n--- plain\n%s", b, a)
	}
}
