package integration

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	tigrisexport "github.com/tigrisgo/tigris/export"
	"github.com/tigrisgo/tigris/export/otlptest"
	"github.com/tigrisgo/tigris/integration/internal/itest"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// chiVersion is the release of github.com/go-chi/chi the test fetches
// through the module proxy.
const chiVersion = "v5.2.3"

// chiFiles is a service written as chi's users write one: chi's own
// middleware (each returns its handler as a literal) around a handler that
// the service's own constructor returns as a literal. The handler writes the
// names runtime.CallersFrames gives the calls on its stack, the plain
// binary's own view of the middleware chain's literals.
var chiFiles = map[string]string{
	"web/owners.go": `package web

import (
	"encoding/json"
	"log"
	"net/http"
	"runtime"
	"strings"

	"github.com/go-chi/chi/v5"
)

type Owner struct {
	ID   string ` + "`json:\"id\"`" + `
	Name string ` + "`json:\"name\"`" + `
}

// NewOwnerHandler indexes owners and returns the handler of /owners/{id}.
func NewOwnerHandler(owners []Owner, logger *log.Logger) http.HandlerFunc {
	byID := make(map[string]Owner, len(owners))
	for _, o := range owners {
		byID[o.ID] = o
	}
	logger.Printf("owners: %d indexed", len(byID))
	return func(w http.ResponseWriter, r *http.Request) {
		o, ok := byID[chi.URLParam(r, "id")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("X-Stack", stack())
		json.NewEncoder(w).Encode(o)
	}
}

// stack is the functions on the caller's stack, innermost first, as Go
// names them.
func stack() string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	var names []string
	for {
		f, more := frames.Next()
		names = append(names, f.Function)
		if !more {
			return strings.Join(names, " ")
		}
	}
}
`,
	"main.go": `package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"example.com/chisvc/web"
)

func main() {
	logger := log.New(os.Stderr, "", 0)
	r := chi.NewRouter()
	r.Use(middleware.RequestID, middleware.Logger, middleware.Recoverer)
	r.Get("/owners/{id}", web.NewOwnerHandler([]web.Owner{{ID: "1", Name: "George Franklin"}, {ID: "2", Name: "Betty Davis"}}, logger))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	srv := &http.Server{Handler: r}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.Shutdown(context.Background())
	}()
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		log.Fatal(err)
	}
}
`,
}

// chiLiteralsEntry is the one include entry docs/pointcuts.md names for
// this service: the literals of its module and of chi's middleware.
const chiLiteralsEntry = `    - "(within(example.com/chisvc/...) || within(github.com/go-chi/chi/v5/middleware)) && literal()"`

// chiRequests is how many requests the test sends.
const chiRequests = 200

// TestChiLiteralHandlers builds a real chi service with the config tigris
// init writes plus the one include entry that selects literals (and
// admin.link, for tigris ctl and the dashboard), runs it in fine mode,
// sends chiRequests requests, and finds every literal of the request path
// (the middleware chain's, their deferred ones, the service's handler)
// called once a request, under the name Go gives it, each call a child of
// the literal that made it: in the admin endpoint's statistics, the
// dashboard's page, tigris stats and tigris read of the trace, and the
// spans tigris export sends.
func TestChiLiteralHandlers(t *testing.T) {
	files := map[string]string{"go.mod": "module example.com/chisvc\n\ngo " + itest.GoDirective + "\n"}
	for name, content := range chiFiles {
		files[name] = content
	}
	dir := itest.NewModuleAt(t, "example.com/chisvc", files)
	itest.Go(t, dir, nil, "get", "github.com/go-chi/chi/v5@"+chiVersion)
	itest.Tigris(t, dir, nil, "init", "--runtime", filepath.Join(itest.RepoRoot, "runtime"))
	itest.Go(t, dir, nil, "mod", "tidy")
	config := filepath.Join(dir, "tigris.yaml")
	data, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	text, n := string(data), strings.Count(string(data), "    - module\n")
	if n != 1 {
		t.Fatalf("tigris init's tigris.yaml has %d lines \"    - module\", want 1 to add the literals' entry after:\n%s", n, text)
	}
	text = strings.Replace(text, "    - module\n", "    - module\n"+chiLiteralsEntry+"\n", 1) + "admin:\n  link: true\n"
	itest.WriteFile(t, config, text)
	bin := filepath.Join(dir, "chisvc"+itest.ExeSuffix())
	itest.Tigris(t, dir, nil, "go", "build", "-o", bin, ".")

	traces := filepath.Join(dir, "traces")
	trace := filepath.Join(traces, "chisvc.tgr")
	svc := startChi(t, dir, bin, "TIGRIS_MODE=fine", "TIGRIS_SAMPLING=100%", "TIGRIS_OUT="+trace, "TIGRIS_ADMIN=127.0.0.1:0")
	addr := svc.wait(t, regexp.MustCompile(`listening on (\S+)`))
	admin := svc.wait(t, regexp.MustCompile(`tigris: admin endpoint on http://([^/\s]+)/`))

	var stack string
	for i := 0; i < chiRequests; i++ {
		resp, err := http.Get(fmt.Sprintf("http://%s/owners/%d", addr, 1+i%2))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), "name") {
			t.Fatalf("request %d: %s %s", i, resp.Status, body)
		}
		stack = resp.Header.Get("X-Stack")
	}
	want := chiWant(t, stack, bin)

	// The running program: the admin endpoint's statistics, then the
	// dashboard's page of them.
	var stats struct {
		Stats []struct {
			Signature string `json:"signature"`
			Count     int    `json:"count"`
		} `json:"stats"`
	}
	getJSON(t, "http://"+admin+"/tigris/v1/stats", &stats)
	counts := map[string]int{}
	for _, s := range stats.Stats {
		counts[tigrisexport.FunctionName(s.Signature)] = s.Count
	}
	checkChiCounts(t, "the admin endpoint's stats (tigris ctl stats)", counts, want)

	dash := startChi(t, dir, itest.TigrisBin, "dash", "--refresh", "1s", admin)
	page := getPage(t, dash.wait(t, regexp.MustCompile(`tigris dash: (http://\S+/) `))+"?all=1")
	counts = map[string]int{}
	for _, m := range regexp.MustCompile(`data-signature="([^"]*)" data-calls="(\d+)"`).FindAllStringSubmatch(page, -1) {
		var n int
		fmt.Sscan(m[2], &n)
		counts[tigrisexport.FunctionName(html.UnescapeString(m[1]))] = n
	}
	checkChiCounts(t, "the dashboard's page", counts, want)

	svc.stop()
	checkChiTrace(t, trace, want)

	out := itest.Tigris(t, dir, nil, "stats", trace)
	for name := range want {
		if !regexp.MustCompile(`(?m)^ *` + fmt.Sprint(chiRequests) + ` .* ` + regexp.QuoteMeta(name) + `\(`).MatchString(out) {
			t.Errorf("tigris stats of the trace has no line for %s with %d calls:\n%s", name, chiRequests, out)
		}
	}
	records := map[string]int{}
	for _, line := range strings.Split(itest.Tigris(t, dir, nil, "read", trace), "\n") {
		if f := strings.Fields(line); len(f) > 7 && f[0] == "record" {
			records[f[7][:strings.Index(f[7]+"(", "(")]]++ // record time trace eoi ess g duration signature
		}
	}
	checkChiCounts(t, "tigris read's record lines", records, want)

	sink := otlptest.New(t)
	itest.Tigris(t, dir, nil, "export", "--once", "--endpoint", sink.URL, "--checkpoint", "none", "--service-name", "chisvc", traces)
	checkChiSpans(t, sink.Spans(), want)
}

// chiWant reads the handler's stack (innermost first) and the binary's
// symbols and returns the literals of the request path, by the names tigris
// gives them, with the literal each is called by ("" for the outermost). It
// fails the test unless Go names the chain's literals so on the stack and
// has a function of each name (the deferred ones too) in the binary.
func chiWant(t *testing.T, stack, bin string) map[string]string {
	t.Helper()
	const mw = "github.com/go-chi/chi/v5/middleware."
	var lits []string // outermost first
	names := strings.Fields(stack)
	for i := len(names) - 1; i >= 0; i-- {
		if strings.Contains(names[i], ".func") && (strings.HasPrefix(names[i], mw) || strings.HasPrefix(names[i], "example.com/chisvc/")) {
			lits = append(lits, names[i])
		}
	}
	chain := []string{mw + "RequestID.func1", mw + "RequestLogger.func1.1", mw + "Recoverer.func1", "example.com/chisvc/web.NewOwnerHandler.func1"}
	same := len(lits) == len(chain)
	for i := 0; same && i < len(chain); i++ {
		same = goNames(t, chain[i], lits[i:i+1]) != ""
	}
	if !same {
		t.Fatalf("the handler's stack has the literals\n%s\nwant (Go's names of chi %s's middleware and the service's handler)\n%s\nwhole stack: %s",
			strings.Join(lits, "\n"), chiVersion, strings.Join(chain, "\n"), stack)
	}
	want := map[string]string{}
	for i, name := range chain {
		if i > 0 {
			want[name] = chain[i-1]
		} else {
			want[name] = ""
		}
	}
	// Each deferred literal runs in the call of the literal it is written in.
	want[mw+"RequestLogger.func1.1.1"] = mw + "RequestLogger.func1.1"
	want[mw+"Recoverer.func1.1"] = mw + "Recoverer.func1"
	var syms []string
	for _, line := range strings.Split(itest.Go(t, "", nil, "tool", "nm", bin), "\n") {
		if f := strings.Fields(line); len(f) == 3 && (f[1] == "T" || f[1] == "t") {
			syms = append(syms, f[2])
		}
	}
	for name := range want {
		if goNames(t, name, syms) == "" {
			t.Errorf("the binary has no function %s (nor a copy of it): tigris's name is not Go's", name)
		}
	}
	return want
}

// goNames returns the name in goNames that Go gives the literal tigris
// names name: name itself, or Go 1.26's name of a copy compiled where the
// literal's function was inlined, named after the function it was inlined
// into (chi's func init calls RequestLogger, so its handler runs as
// middleware.init.0.RequestLogger.func1.1; Go 1.27 names that copy
// RequestLogger.func1.1). tigris names every copy by the literal's own
// name, as docs/pointcuts.md says. It returns "" when none is.
func goNames(t *testing.T, name string, goNames []string) string {
	t.Helper()
	slash := strings.LastIndex(name, "/") // the names here have no receiver
	dot := slash + 1 + strings.Index(name[slash+1:], ".")
	pkg, rest := name[:dot+1], name[dot:] // "…/middleware.", ".RequestLogger.func1.1"
	for _, g := range goNames {
		if g == name {
			return g
		}
	}
	for _, g := range goNames {
		if strings.HasPrefix(g, pkg) && strings.HasSuffix(g, rest) && !strings.Contains(g[len(pkg):], "/") {
			t.Logf("Go names the literal %s %s here: the copy compiled where its function was inlined", name, g)
			return g
		}
	}
	return ""
}

// checkChiCounts wants chiRequests calls of every literal of want in
// counts, and no other literal of the request path.
func checkChiCounts(t *testing.T, surface string, counts map[string]int, want map[string]string) {
	t.Helper()
	for name := range want {
		if counts[name] != chiRequests {
			t.Errorf("%s: %s has %d calls, want %d (one a request); it has %v", surface, name, counts[name], chiRequests, counts)
		}
	}
}

// checkChiTrace reads the fine trace: every request's trace calls each
// literal of want once, one level below the literal that called it (the
// outermost at the root). The module's declared functions (tigris init's
// entry) have calls of their own in it, which it leaves aside.
func checkChiTrace(t *testing.T, path string, want map[string]string) {
	t.Helper()
	depths := map[uint64]map[string][]uint32{} // trace → literal → depth of each call
	itest.EachRecord(t, path, func(def *writer.ProbeDef, r *writer.Record) {
		if def == nil {
			return
		}
		if name := def.Package + "." + def.Name; hasKey(want, name) {
			if depths[r.Trace] == nil {
				depths[r.Trace] = map[string][]uint32{}
			}
			depths[r.Trace][name] = append(depths[r.Trace][name], r.ESS)
		}
	})
	for id, calls := range depths {
		for name, parent := range want {
			d := calls[name]
			switch {
			case len(d) != 1:
				t.Fatalf("trace %d has %d calls of %s, want 1: %v", id, len(d), name, calls)
			case parent == "" && d[0] != 0:
				t.Fatalf("trace %d: %s at depth %d, want the root: %v", id, name, d[0], calls)
			case parent != "" && len(calls[parent]) == 1 && d[0] != calls[parent][0]+1:
				t.Fatalf("trace %d: %s at depth %d, want one below its caller %s: %v", id, name, d[0], parent, calls)
			}
		}
	}
	if len(depths) != chiRequests {
		t.Errorf("%d traces in the trace file with calls of the request path's literals, want %d (one a request)", len(depths), chiRequests)
	}
}

// checkChiSpans wants a span for every call of every literal of want,
// named by its Go name, whose parent is the span of its caller.
func checkChiSpans(t *testing.T, spans map[string]otlptest.Span, want map[string]string) {
	t.Helper()
	counts := map[string]int{}
	for _, sp := range spans {
		name := sp.Name
		if _, ok := want[name]; !ok {
			continue
		}
		counts[name]++
		parentName := ""
		if len(sp.ParentSpanId) != 0 {
			parentName = spans[otlptest.Key(sp.TraceId, sp.ParentSpanId)].Name
		}
		if parentName != want[name] {
			t.Errorf("span %s (%s) has the parent %q, want %q", name, hex.EncodeToString(sp.SpanId), parentName, want[name])
			break
		}
	}
	checkChiCounts(t, "the exported spans", counts, want)
}

// chiProc is a process the test started; its output goes to a file.
type chiProc struct {
	cmd  *exec.Cmd
	out  string
	done chan struct{}
	// stop sends SIGTERM and waits for the process to exit (killing it a
	// minute later).
	stop context.CancelFunc
}

// startChi starts the service bin with the environment entries env, or
// with exe == itest.TigrisBin a tigris command with args; the test's
// cleanup stops it.
func startChi(t *testing.T, dir, exe string, args ...string) *chiProc {
	t.Helper()
	var env []string
	if exe != itest.TigrisBin {
		env, args = args, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &chiProc{cmd: exec.CommandContext(ctx, exe, args...), out: filepath.Join(t.TempDir(), "out"), done: make(chan struct{})}
	p.cmd.Dir, p.cmd.Env = dir, itest.Env(env...)
	p.cmd.Cancel = func() error { return p.cmd.Process.Signal(syscall.SIGTERM) }
	p.cmd.WaitDelay = time.Minute
	f, err := os.Create(p.out)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); f.Close(); close(p.done) }()
	p.stop = func() { cancel(); <-p.done }
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			out, _ := os.ReadFile(p.out)
			t.Logf("%s output (end):\n%s", filepath.Base(exe), tailOf(string(out), 4000))
		}
	})
	return p
}

// wait waits for a line of the output matching re and returns its first
// group.
func (p *chiProc) wait(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		out, _ := os.ReadFile(p.out)
		if m := re.FindSubmatch(out); m != nil {
			return string(m[1])
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited before printing %s:\n%s", p.cmd.Path, re, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s printed no %s in a minute:\n%s", p.cmd.Path, re, out)
		}
	}
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func getPage(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s %v\n%s", url, resp.Status, err, body)
	}
	return string(body)
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(getPage(t, url)), v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}
