package doccheck

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/config"
	"github.com/tigrisgo/tigris/internal/workdir"
	"github.com/tigrisgo/tigris/runtime/dsl"
	"github.com/tigrisgo/tigris/runtime/monitor/admin"
	"github.com/tigrisgo/tigris/runtime/pointcut"
	"github.com/tigrisgo/tigris/runtime/query"
)

// limitsPage is the page that names every limit and its message.
const limitsPage = "docs/limits.md"

// shown is a message docs/limits.md must show as the code gives it.
type shown struct {
	what string
	// msg produces the message by running the code, or, where that is
	// impractical (a timeout, a full queue), returns the text the docs show
	// after checking that source holds the format it is made from.
	msg func(t *testing.T) string
}

// fromSource checks that the file holds format and returns shownText, the
// message as the docs show it (the format with its values filled in).
func fromSource(file, format, shownText string) func(t *testing.T) string {
	return func(t *testing.T) string {
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), format) {
			t.Errorf("%s no longer holds %q: update %s and this test", file, format, limitsPage)
		}
		return shownText
	}
}

// errText returns err's text, failing the test when there is none.
func errText(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		t.Fatal("no error beyond the limit")
	}
	return err.Error()
}

// apiError serves one request to a fresh admin handler and returns the
// status and the error of its JSON reply, as the docs show them.
func apiError(t *testing.T, method, path, body string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	admin.NewHandler(admin.Options{}).ServeHTTP(rec, httptest.NewRequest(method, admin.Prefix+path, strings.NewReader(body)))
	var e struct{ Error string }
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
		t.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
	}
	return fmt.Sprintf("%d` `%s", rec.Code, e.Error)
}

// chainFile is a tigris.yaml of named pointcuts a0…aN, each using the last
// twice (the expansion doubles with every link), and the monitor section
// given.
func chainFile(links int, monitor string) []byte {
	var b strings.Builder
	b.WriteString("pointcuts:\n  a0: execution(* x.F(..))\n")
	for i := 1; i <= links; i++ {
		fmt.Fprintf(&b, "  a%d: a%d||!a%d\n", i, i-1, i-1)
	}
	b.WriteString("monitor:\n" + monitor)
	return []byte(b.String())
}

var shownLimits = []shown{
	{"config size", func(t *testing.T) string {
		workdir.Chdir(t, t.TempDir())
		if err := os.WriteFile(config.FileName, []byte("# "+strings.Repeat("x", config.MaxSize)), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := config.Load(config.FileName)
		return errText(t, err)
	}},
	{"YAML aliases", func(t *testing.T) string {
		terms := make([]string, 300)
		for i := range terms {
			terms[i] = fmt.Sprintf("execution(* a.F%d(..))", i)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "version: 1\npointcuts:\n  a0: &p %s\n", strings.Join(terms, " || "))
		for i := 1; i < 100; i++ {
			fmt.Fprintf(&b, "  a%d: *p\n", i)
		}
		b.WriteString("monitor:\n  include: [a0]\n")
		_, err := config.Parse("tigris.yaml", []byte(b.String()))
		return errText(t, err)
	}},
	{"pointcut length", func(t *testing.T) string {
		_, err := pointcut.Parse(strings.Repeat("x", 20000))
		return errText(t, err)
	}},
	{"pointcut nesting", func(t *testing.T) string {
		_, err := pointcut.Parse(strings.Repeat("(", 65) + "all()" + strings.Repeat(")", 65))
		return errText(t, err)
	}},
	{"pointcut expansion", func(t *testing.T) string {
		_, err := config.Parse("tigris.yaml", chainFile(30, "  include: [a30]\n"))
		return errText(t, err)
	}},
	{"include and exclude expansion", func(t *testing.T) string {
		_, err := config.Parse("tigris.yaml", chainFile(10, "  include: [a10, a10, a10]\n  exclude: [a10]\n"))
		return errText(t, err)
	}},
	{"filter length", func(t *testing.T) string {
		_, err := dsl.Parse(strings.Repeat("frequent ∪ ", 2000) + "latent")
		return errText(t, err)
	}},
	{"filter nesting", func(t *testing.T) string {
		_, err := dsl.Parse(strings.Repeat("(", 65) + "frequent" + strings.Repeat(")", 65))
		return errText(t, err)
	}},
	{"admin body size", func(t *testing.T) string {
		return apiError(t, "PUT", "sampling", strings.Repeat(" ", admin.MaxBody+1))
	}},
	{"admin body deadline", fromSource("runtime/monitor/admin/handler.go", `"request body not received within %s", bodyTimeout`, "408` `request body not received within 5s")},
	{"admin bodies at once", fromSource("runtime/monitor/admin/handler.go", `"too many requests sending a body at once (%d); retry", maxBodyReads`, "503` `too many requests sending a body at once (16); retry")},
	{"manual rules (POST)", fromSource("runtime/monitor/admin/endpoints.go", `"there are %d manual rules already, the limit (delete some first: DELETE %srules/{i}, or PUT %srules)"`, "409` `there are 256 manual rules already, the limit (delete some first: …)")},
	{"manual rules (PUT)", func(t *testing.T) string {
		rules := make([]string, 257)
		for i := range rules {
			rules[i] = fmt.Sprintf(`{"pattern": "execution(* a.F%d(..))", "mode": "fine"}`, i)
		}
		return apiError(t, "PUT", "rules", `{"rules": [`+strings.Join(rules, ",")+`]}`)
	}},
	{"recent bytes", func(t *testing.T) string { return apiError(t, "GET", "writer/recent?bytes=0", "") }},
	{"admin criteria", func(t *testing.T) string {
		return apiError(t, "PUT", "analysis", `{"criteria": "`+strings.Repeat("(", 65)+`frequent"}`)
	}},
	{"pprof frames", fromSource("traceconv/scan.go", `"%d call paths are deeper than the profile's frame limit`, "12 call paths are deeper than the profile's frame limit")},
	{"admin client reply", fromSource("adminclient/client.go", `"the reply of %s to %s %s is larger than %d bytes, more than any admin endpoint sends", c.addr, method, shownPath(path), maxReply`,
		"the reply of 127.0.0.1:7070 to GET /tigris/v1/health is larger than 67108864 bytes, more than any admin endpoint sends")},
	{"dash form", fromSource("dash/server.go", `http.Error(w, "reading the form: "+err.Error(), http.StatusBadRequest)`, "400` `reading the form: http: request body too large")},
	{"exit flush", fromSource("runtime/monitor/lifecycle.go", `"writer did not close within %v; some records may be lost", limit`, "tigris: writer did not close within 5s; some records may be lost")},
	{"query text", queryError(strings.Repeat(" ", query.MaxText+1))},
	{"query nesting", queryError("SELECT " + strings.Repeat("(", 65) + "1" + strings.Repeat(")", 65) + " FROM calls")},
	{"query items", queryError("SELECT " + strings.Repeat("duration, ", query.MaxItems) + "duration FROM calls")},
	{"query group by", queryError("SELECT count(*) FROM calls GROUP BY " + strings.Repeat("name, ", query.MaxGroupBy) + "name")},
	{"query IN list", queryError("SELECT * FROM calls WHERE line IN (" + strings.Repeat("1, ", query.MaxInValues) + "1)")},
	{"query LIMIT", queryError("SELECT * FROM calls LIMIT 1000001")},
	{"query sampling interval", queryError("SELECT * FROM SAMPLE(cpu, 1ms)")},
	{"query window", queryError("SELECT count(*) FROM calls WINDOW 1ms")},
	{"query windows per tuple", queryError("SELECT count(*) FROM calls WINDOW 1h SLIDE 10ms")},
	{"query join window", queryError("SELECT * FROM calls a WINDOW JOIN calls b WINDOW 25h")},
	{"trigger FOR", queryError("CREATE TRIGGER t FROM calls WHEN error BEGIN FINE 'within(a)' FOR 100ms END")},
	{"derived streams", func(t *testing.T) string {
		text := "CREATE STREAM s0 AS (SELECT * FROM calls)"
		for i := 1; i <= query.MaxDerived+1; i++ {
			text += fmt.Sprintf("; CREATE STREAM s%d AS (SELECT * FROM s%d)", i, i-1)
		}
		_, err := query.Compile(text, nil)
		return errText(t, err)
	}},
	{"queries at once", fromSource("runtime/query/live/registry.go", `"%w: %d running, %d more would pass the limit of %d (queries.max); cancel one first", ErrTooMany`,
		"409` `too many queries: 8 running, 1 more would pass the limit of 8 (queries.max); cancel one first")},
	{"probes of a query", fromSource("runtime/query/engine/plan.go", `"the query would acquire %d probes; the most is %d (queries.max-probes): narrow WHERE with function, package or MATCHES"`,
		"422` `query refused: the query would acquire 41 probes; the most is 10 (queries.max-probes): narrow WHERE with function, package or MATCHES")},
	{"cost of a query", fromSource("runtime/query/engine/plan.go", `"the query's estimated cost, %s of one core, is over the budget of %s (queries.budget): push down a duration bound or watch fewer functions"`,
		"422` `query refused: the query's estimated cost, 6.1% of one core, is over the budget of 5% (queries.budget): push down a duration bound or watch fewer functions")},
	{"cost of the running queries", fromSource("runtime/query/live/registry.go", `"the running queries' estimated cost, %s of one core, with this query's %s, is over the budget of %s (queries.budget): cancel a query or narrow this one"`,
		"422` `query refused: the running queries' estimated cost, 4.2% of one core, with this query's 1.3%, is over the budget of 5% (queries.budget): cancel a query or narrow this one")},
	{"query streams at once", fromSource("runtime/monitor/admin/queries.go", `"too many query streams at once (%d); retry, or post with detach", maxStreams`,
		"503` `too many query streams at once (16); retry, or post with detach")},
	{"plan work", fromSource("runtime/query/engine/plan.go", `"%s: %d condition(s) on static columns are too large to decide for each of %d probes (%d node evaluations at most): they choose no probes and are checked on each call"`,
		"calls: 1 condition(s) on static columns are too large to decide for each of 1000 probes (4194304 node evaluations at most): they choose no probes and are checked on each call")},
	{"ended query's plan", fromSource("runtime/query/live/summary.go", `"\n… (cut: the query has ended)\n"`, "… (cut: the query has ended)")},
	{"query that can produce nothing", fromSource("runtime/query/live/registry.go", `"it can produce nothing, now or later: " + p.Nothing`,
		"422` `query refused: it can produce nothing, now or later: calls: no probe matches function = '…/repository.(*OwnerRepository).FindByLastName'; probes have function like 'github.com/tigrisgo/tigris/examples/petclinic/internal/repository.(*OwnerRepository).FindByLastName' ('…' stands for a part left out in print: write the whole name, or LIKE with %)")},
	{"end reason", fromSource("runtime/monitor/admin/queries.go", `"a reason of %d bytes; the most is %d", len(s), maxEndReason`, "400` `reason: a reason of 201 bytes; the most is 200")},
	{"query's queue", fromSource("runtime/query/live/dropped.go", `"the query's queue was full (%d calls a source): calls are lost"`,
		"(from 20:46:13.204Z calls are left out: the query's queue was full (65536 calls a source): calls are lost; the rows count only the calls taken)")},
	{"explain token", func(t *testing.T) string {
		rec := httptest.NewRecorder()
		admin.NewHandler(admin.Options{Token: "t"}).ServeHTTP(rec, httptest.NewRequest("POST", admin.Prefix+"queries/explain", strings.NewReader(`{"query":"SELECT 1 AS x FROM calls"}`)))
		var e struct{ Error string }
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d` `%s", rec.Code, e.Error)
	}},
	{"query CPU over a trace", fromSource("tracequery/cpu.go", `"query stopped: it used %v of CPU, more than the %v that --max-cpu allows (--max-cpu 0 lifts the bound)"`,
		"query stopped: it used 1m0.02s of CPU, more than the 1m0s that --max-cpu allows (--max-cpu 0 lifts the bound)")},
	{"panic flush", fromSource("runtime/monitor/fine.go", `"flush on panic: %v", err`, "tigris: flush on panic: not done within 1s")},
}

// queryError compiles text and returns its error, as the page shows it.
func queryError(text string) func(t *testing.T) string {
	return func(t *testing.T) string {
		_, err := query.Compile(text, nil)
		return errText(t, err)
	}
}

// TestLimitsPageShowsMessages: docs/limits.md shows, for every limit above,
// the message the code gives beyond it, word for word.
func TestLimitsPageShowsMessages(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, limitsPage))
	if err != nil {
		t.Fatal(err)
	}
	page := normalize(string(data))
	for _, l := range shownLimits {
		t.Run(l.what, func(t *testing.T) {
			if msg := l.msg(t); !strings.Contains(page, normalize(msg)) {
				t.Errorf("%s does not show the message %q", limitsPage, msg)
			}
		})
	}
}

var space = regexp.MustCompile(`\s+`)

// normalize folds the white space a page wraps its lines with.
func normalize(s string) string { return space.ReplaceAllString(s, " ") }

// limitName says which declarations are limits: a name that starts with max
// or min, or ends in Limit or Timeout.
var limitName = regexp.MustCompile(`^(max|Max|min|Min)[A-Z]|(Limit|Timeout)$`)

// limitConstants classifies every limit the code declares: "page" for those
// docs/limits.md names, or why one is not a limit on what users send. A new
// limit fails TestEveryLimitClassified until it is on the page or here.
var limitConstants = map[string]string{
	"config.MaxSize":                          "page",
	"runtime/pointcut.MaxTerms":               "page",
	"runtime/pointcut.maxExprLen":             "page",
	"runtime/pointcut.maxNesting":             "page",
	"runtime/pointcut.maxRun":                 "page",
	"runtime/dsl.MaxFilterLen":                "page",
	"runtime/dsl.MaxNesting":                  "page",
	"runtime/settings.MinRate":                "page: docs/config.md, Limits (generated)",
	"runtime/settings.MinInterval":            "page: docs/config.md, Limits (generated)",
	"runtime/settings.MinFlush":               "page: docs/config.md, Limits (generated)",
	"runtime/settings.MaxQueue":               "page: docs/config.md, Limits (generated)",
	"runtime/settings.MinRotate":              "page: docs/config.md, Limits (generated)",
	"runtime/settings.MaxRules":               "page",
	"runtime/monitor/admin.MaxBody":           "page",
	"runtime/monitor/admin.maxInFlight":       "page",
	"runtime/monitor/admin.bodyTimeout":       "page",
	"runtime/monitor/admin.replyTimeout":      "page",
	"runtime/monitor/admin.maxBodyReads":      "page",
	"runtime/monitor/admin.MaxRecentBytes":    "page",
	"runtime/monitor/admin.readHeaderTimeout": "page",
	"runtime/monitor/admin.readTimeout":       "page",
	"runtime/monitor/admin.writeTimeout":      "page",
	"runtime/monitor/admin.idleTimeout":       "page",
	"runtime/monitor/admin.maxHeaderBytes":    "page",
	"runtime/writer.maxChunkLen":              "page",
	"runtime/writer.maxStringLen":             "page",
	"runtime/writer.MaxTailAnchor":            "page",
	"runtime/monitor.exitFlushLimit":          "page",
	"runtime/monitor.panicFlushLimit":         "page",
	"adminclient.maxReply":                    "page",
	"adminclient.DefaultTimeout":              "page",
	"dash.maxForm":                            "page",
	"dash.maxNodes":                           "page",
	"dash.maxSeries":                          "page",
	"dash.maxAllRows":                         "page",
	"dash.maxMembers":                         "page",
	"dash.maxListed":                          "page",
	"dash.maxChanges":                         "page",
	"dash.maxTimelineRows":                    "page",

	"runtime/monitor/analyzer.minSampling": "behaviour: the budget controller's floor, docs/analysis.md",
	"runtime/monitor/analyzer.maxMarks":    "internal: mode changes remembered per analysis window",
	"runtime/monitor.samplingLimit":        "internal: the sampling limit in force, a value, not a bound",
	"runtime/monitor.maxRemembered":        "internal: messages the stderr reporter remembers to rate-limit repeats",
	"runtime/monitor.maxTimedOneIn":        "internal: phase 1 still times one call in this many; documented with monitor.coarse-budget in config.md",
	"runtime/dsl.minTested":                "internal: the smallest sample the normality test's p-value approximation accepts",
	"runtime/writer.maxShards":             "internal: the async writer's queues, one per P",
	"runtime/writer.maxEventLen":           "internal: the longest encoding of one record",
	"runtime/writer.minChunkBytes":         "internal: the writer's chunk sizes (below maxChunkLen)",
	"runtime/writer.maxChunkBytes":         "internal: the writer's chunk sizes (below maxChunkLen)",
	"runtime/query.MaxText":                "page",
	"runtime/query.MaxNesting":             "page",
	"runtime/query.MaxItems":               "page",
	"runtime/query.MaxGroupBy":             "page",
	"runtime/query.MaxInValues":            "page",
	"runtime/query.MaxLimit":               "page",
	"runtime/query.MinSample":              "page",
	"runtime/query.MaxSpan":                "page",
	"runtime/query.MinWindow":              "page",
	"runtime/query.MaxSlides":              "page",
	"runtime/query.MinFor":                 "page",
	"runtime/query.MaxDerived":             "page",
	"runtime/query/engine.MaxGroups":       "page",
	"runtime/query/engine.MaxJoinBuffer":   "page",
	"runtime/query/engine.MaxPlanWork":     "page",
	"runtime/query/engine.maxPushed":       "internal: pushed-down conditions a plan names per probe; all are pushed",
	"runtime/query/live.MaxEndedExplain":   "page",
	"runtime/query/live.MaxSampleOneIn":    "page",
	"runtime/query/engine.MinJoinWindow":   "page",
	"runtime/settings.MaxQueries":          "page: docs/config.md, Limits (generated)",
	"runtime/settings.MaxQueryProbes":      "page: docs/config.md, Limits (generated)",
	"runtime/monitor/admin.maxStreams":     "page",
	"runtime/monitor/admin.maxEndReason":   "page",
	"runtime/monitor.MaxTapQueue":          "page",
	"runtime/query/engine.exactLimit":      "internal: percentiles are exact up to this many values, then a sketch within 0.5 %",
	"runtime/query/live.maxLateness":       "internal: the longest a live window waits for late calls, docs/queries.md",
	"export.maxHoles":                      "internal: missing records a partial trace remembers; memory is bounded by --max-memory",
	"export.maxSentDepth":                  "internal: depths at which a partial trace remembers sent calls for links; a go statement that could be deeper gets no link, counted",
	"export.maxWaiting":                    "internal: roots of one linked trace that wait for its link; more go without it",
}

// TestEveryLimitClassified: every limit the code declares (outside examples,
// benchmarks, integration tests and tests) is named on docs/limits.md or
// classified in limitConstants, and every entry there still exists.
func TestEveryLimitClassified(t *testing.T) {
	found := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := e.Name()
		if e.IsDir() {
			if path != root && (slices.Contains([]string{"examples", "bench", "integration", "testdata", "doccheck"}, name) || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || (g.Tok != token.CONST && g.Tok != token.VAR) {
				continue
			}
			for _, s := range g.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					if limitName.MatchString(n.Name) {
						found[filepath.ToSlash(rel)+"."+n.Name] = true
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range found {
		if _, ok := limitConstants[name]; !ok {
			t.Errorf("%s looks like a limit: name it on %s with the message beyond it (and in shownLimits), or classify it in limitConstants", name, limitsPage)
		}
	}
	for name := range limitConstants {
		if !found[name] {
			t.Errorf("limitConstants names %s, which no longer exists", name)
		}
	}
}
