package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/monitor/analyzer"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// The test binary's probes: package test.example/shop with a configured rule
// that turns Ping off.
const shop = "test.example/shop"

var (
	probes = make([]monitor.Probe, 4)
	infos  = []monitor.ProbeInfo{
		{Package: shop, Recv: "Store", RecvPtr: true, Name: "Find", Params: []string{"int"}, Results: []string{"string", "error"}, File: "shop/store.go", Line: 10, Cyclomatic: 3},
		{Package: shop, Recv: "Store", RecvPtr: true, Name: "Save", Params: []string{"string"}, Results: []string{"error"}, File: "shop/store.go", Line: 20},
		{Package: shop, Name: "Ping", File: "shop/ping.go", Line: 5},
		// A parameter type with the characters a Prometheus label must escape.
		{Package: shop, Name: "Weird", Params: []string{"struct{a \"x\\y\"}"}, File: "shop/weird.go", Line: 7},
	}
	find, save, ping, weird = &probes[0], &probes[1], &probes[2], &probes[3]
)

const embedded = `{"format":1,"mode":"coarse","sampling":1,` +
	`"rules":[{"pattern":"execution(* test.example/shop.Ping(..))","mode":"off"}],` +
	`"writer":{"mode":"null","queue":1,"onFull":"drop","flush":"1s"},"analysis":{"interval":"1m"},` +
	`"queries":{"budget":1}}` // other tests call Ping in tight loops: its rate says nothing of a query

func TestMain(m *testing.M) {
	// The environment must not reconfigure the test's monitor (or start an
	// endpoint of its own).
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "TIGRIS_") {
			os.Unsetenv(name)
		}
	}
	monitor.Register(embedded, probes, infos)
	os.Exit(m.Run())
}

// call runs one measured call of p.
func call(p *monitor.Probe, err error) {
	if c := monitor.Enter(p); c.On() {
		defer c.Exit(err)
	}
}

// reset puts the run-time state back after a test changed it.
func reset(t *testing.T) {
	t.Helper()
	t.Cleanup(func() {
		if err := monitor.SetRules(nil); err != nil {
			t.Error(err)
		}
		if err := monitor.SetSampling(1); err != nil {
			t.Error(err)
		}
	})
}

// do serves one request and returns the recorder. hdr are "Name: value" pairs.
func do(t *testing.T, h http.Handler, method, path, body string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	for _, kv := range hdr {
		k, v, _ := strings.Cut(kv, ": ")
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// decode checks the status and decodes the JSON reply.
func decode[T any](t *testing.T, rec *httptest.ResponseRecorder, status int) T {
	t.Helper()
	var v T
	if rec.Code != status {
		t.Fatalf("status %d; want %d; body:\n%s", rec.Code, status, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q; want application/json", ct)
	}
	if err := json.NewDecoder(rec.Body).Decode(&v); err != nil {
		t.Fatalf("decoding %T: %v", v, err)
	}
	return v
}

// wantError checks an error reply: status, a message containing want, and the
// field and column when given (column 0: none expected).
func wantError(t *testing.T, rec *httptest.ResponseRecorder, status int, field string, column int, want string) {
	t.Helper()
	e := decode[ErrorBody](t, rec, status)
	if !strings.Contains(e.Error, want) {
		t.Errorf("error %q does not contain %q", e.Error, want)
	}
	if e.Field != field {
		t.Errorf("field %q; want %q (error %q)", e.Field, field, e.Error)
	}
	if e.Column != column {
		t.Errorf("column %d; want %d (error %q)", e.Column, column, e.Error)
	}
}

func modeOf(t *testing.T, p *monitor.Probe) settings.Mode {
	t.Helper()
	for _, s := range monitor.Probes(nil) {
		if s.ID == p.ID() {
			return s.Mode
		}
	}
	t.Fatalf("probe %d not registered", p.ID())
	return ""
}

var h = NewHandler(Options{})

func TestIndex(t *testing.T) {
	idx := decode[Index](t, do(t, h, "GET", Prefix, ""), 200)
	for _, want := range []string{Prefix + "probes", Prefix + "rules/{i}", Prefix + "analysis/run", "/metrics"} {
		if !slices.Contains(idx.Endpoints, want) {
			t.Errorf("index lacks %s: %v", want, idx.Endpoints)
		}
	}
}

func TestProbes(t *testing.T) {
	all := decode[ProbeList](t, do(t, h, "GET", Prefix+"probes", ""), 200)
	if len(all.Probes) != len(probes) {
		t.Fatalf("%d probes; want %d: %+v", len(all.Probes), len(probes), all.Probes)
	}
	if p := all.Probes[0]; p.Signature != "test.example/shop.(*Store).Find(int) (string, error)" || p.File != "shop/store.go" || p.Line != 10 || p.Mode != settings.Coarse {
		t.Errorf("first probe %+v", p)
	}

	q := url.Values{"pointcut": {"execution(* test.example/shop.(*Store).*(..))"}}
	store := decode[ProbeList](t, do(t, h, "GET", Prefix+"probes?"+q.Encode(), ""), 200)
	if len(store.Probes) != 2 || store.Probes[1].ID != save.ID() {
		t.Errorf("Store probes: %+v", store.Probes)
	}
	off := decode[ProbeList](t, do(t, h, "GET", Prefix+"probes?mode=OFF", ""), 200)
	if len(off.Probes) != 1 || off.Probes[0].ID != ping.ID() {
		t.Errorf("off probes (Ping by the configured rule): %+v", off.Probes)
	}
	fine := decode[ProbeList](t, do(t, h, "GET", Prefix+"probes?mode=fine", ""), 200)
	if fine.Probes == nil || len(fine.Probes) != 0 {
		t.Errorf("fine probes: %#v; want an empty list", fine.Probes)
	}

	q = url.Values{"pointcut": {"execution(* shop.Find(..)"}}
	wantError(t, do(t, h, "GET", Prefix+"probes?"+q.Encode(), ""), 400, "pointcut", 26, "expected")
	wantError(t, do(t, h, "GET", Prefix+"probes?mode=fast", ""), 400, "mode", 0, `"fast" is not a mode`)
}

func TestRules(t *testing.T) {
	reset(t)
	rl := decode[RuleList](t, do(t, h, "GET", Prefix+"rules", ""), 200)
	if len(rl.Configured) != 1 || rl.Configured[0].Mode != settings.Off || rl.Manual == nil || len(rl.Manual) != 0 {
		t.Fatalf("initial rules %+v", rl)
	}

	// Add: the mode is normalised and the probe switches.
	add := decode[RuleChange](t, do(t, h, "POST", Prefix+"rules", `{"pattern": "execution(* test.example/shop.(*Store).Find(..))", "mode": "Fine"}`), 201)
	if add.Index != 0 || add.Rule.Mode != settings.Fine {
		t.Errorf("added %+v", add)
	}
	if m := modeOf(t, find); m != settings.Fine {
		t.Errorf("Find is %s after the rule; want fine", m)
	}
	add = decode[RuleChange](t, do(t, h, "POST", Prefix+"rules", `{"pattern": "execution(* test.example/shop.*(..))", "mode": "off"}`), 201)
	if add.Index != 1 || modeOf(t, find) != settings.Off || modeOf(t, save) != settings.Off {
		t.Errorf("second rule %+v: Find %s, Save %s; want off (last match wins)", add, modeOf(t, find), modeOf(t, save))
	}

	// Bad requests change nothing.
	before := decode[RuleList](t, do(t, h, "GET", Prefix+"rules", ""), 200)
	for _, c := range []struct {
		body, field string
		column      int
		want        string
	}{
		{`{"pattern": "execution(* shop.Find(..)", "mode": "fine"}`, "pattern", 26, "expected"},
		{`{"pattern": "execution(* shop.F$nd(..))", "mode": "fine"}`, "pattern", 19, "unexpected character"},
		{`{"pattern": "nosuchname", "mode": "fine"}`, "pattern", 1, "nosuchname"},
		{`{"pattern": "execution(* shop.Find(..))", "mode": "fast"}`, "mode", 0, `"fast" is not a mode`},
		{`{"pattern": "execution(* shop.Find(..))"}`, "mode", 0, `"" is not a mode`},
		{`{"pattern": "  ", "mode": "fine"}`, "pattern", 0, "empty pattern"},
		{`{"pattern": "execution(* shop.Find(..))", "mode": "fine", "extra": 1}`, "", 0, `unknown field "extra"`},
		{`{"pattern": 7}`, "", 0, "request body"},
		{`{"pattern": "execution(* a.B(..))", "mode": "fine"} {}`, "", 0, "more after the JSON value"},
		{``, "", 0, "empty request body"},
	} {
		wantError(t, do(t, h, "POST", Prefix+"rules", c.body), 400, c.field, c.column, c.want)
	}
	wantError(t, do(t, h, "PUT", Prefix+"rules", `{"rules": [{"pattern": "execution(* a.B(..))", "mode": "fine"}, {"pattern": "execution(* a.B(..)", "mode": "fine"}]}`),
		400, "rules[1].pattern", 20, "expected")
	wantError(t, do(t, h, "PUT", Prefix+"rules", `{"rules": [{"pattern": "execution(* a.B(..))", "mode": "loud"}]}`), 400, "rules[0].mode", 0, `"loud"`)
	wantError(t, do(t, h, "PUT", Prefix+"rules", `{}`), 400, "rules", 0, "missing")
	wantError(t, do(t, h, "DELETE", Prefix+"rules/2", ""), 404, "", 0, "no manual rule 2 (there are 2")
	wantError(t, do(t, h, "DELETE", Prefix+"rules/-1", ""), 404, "", 0, "no manual rule -1")
	wantError(t, do(t, h, "DELETE", Prefix+"rules/first", ""), 400, "index", 0, `"first" is not a rule index`)
	if after := decode[RuleList](t, do(t, h, "GET", Prefix+"rules", ""), 200); !slices.Equal(after.Manual, before.Manual) {
		t.Fatalf("a bad request changed the rules: %+v → %+v", before.Manual, after.Manual)
	}

	// Delete reports the rule it removed.
	del := decode[RuleChange](t, do(t, h, "DELETE", Prefix+"rules/1", ""), 200)
	if del.Index != 1 || del.Rule.Pattern != "execution(* test.example/shop.*(..))" {
		t.Errorf("deleted %+v", del)
	}
	if modeOf(t, find) != settings.Fine || modeOf(t, save) != settings.Coarse {
		t.Errorf("after delete: Find %s, Save %s; want fine, coarse", modeOf(t, find), modeOf(t, save))
	}

	// Replace all, then clear.
	set := decode[RuleList](t, do(t, h, "PUT", Prefix+"rules", `{"rules": [{"pattern": "execution(* test.example/shop.*(..))", "mode": "fine"}]}`), 200)
	if len(set.Manual) != 1 || len(set.Configured) != 1 || modeOf(t, save) != settings.Fine || modeOf(t, ping) != settings.Fine {
		t.Errorf("after PUT: %+v, Save %s, Ping %s", set, modeOf(t, save), modeOf(t, ping))
	}
	clr := decode[RuleList](t, do(t, h, "PUT", Prefix+"rules", `{"rules": []}`), 200)
	if len(clr.Manual) != 0 || modeOf(t, ping) != settings.Off || modeOf(t, find) != settings.Coarse {
		t.Errorf("after clearing: %+v, Ping %s, Find %s", clr, modeOf(t, ping), modeOf(t, find))
	}
}

func TestSampling(t *testing.T) {
	reset(t)
	s := decode[SamplingState](t, do(t, h, "GET", Prefix+"sampling", ""), 200)
	if s.Sampling != 1 || s.Percent != "100%" {
		t.Errorf("initial sampling %+v", s)
	}
	s = decode[SamplingState](t, do(t, h, "PUT", Prefix+"sampling", `{"sampling": 0.25}`), 200)
	if s.Sampling != 0.25 || monitor.Sampling() != 0.25 {
		t.Errorf("after PUT 0.25: %+v, monitor %v", s, monitor.Sampling())
	}
	s = decode[SamplingState](t, do(t, h, "PUT", Prefix+"sampling", `{"sampling": "10%"}`), 200)
	if s.Sampling != 0.1 || s.Percent != "10%" {
		t.Errorf("after PUT 10%%: %+v", s)
	}
	for _, c := range []struct{ body, field, want string }{
		{`{"sampling": 1.5}`, "sampling", "out of range"},
		{`{"sampling": -0.1}`, "sampling", "out of range"},
		{`{"sampling": "150%"}`, "sampling", "out of range"},
		{`{"sampling": "lots"}`, "", `"lots" is not a percentage`},
		{`{"sampling": true}`, "", "is not a rate"},
		{`{}`, "sampling", "missing"},
		{`{"rate": 0.5}`, "", `unknown field "rate"`},
	} {
		wantError(t, do(t, h, "PUT", Prefix+"sampling", c.body), 400, c.field, 0, c.want)
	}
	if monitor.Sampling() != 0.1 {
		t.Errorf("a bad request changed the sampling to %v", monitor.Sampling())
	}
}

func TestStats(t *testing.T) {
	reset(t)
	for left := 30; left > 0; left-- {
		call(find, nil)
	}
	for left := 20; left > 0; left-- {
		call(save, errors.New("disk full"))
	}
	get := func(query string) StatsList {
		t.Helper()
		return decode[StatsList](t, do(t, h, "GET", Prefix+"stats?"+query, ""), 200)
	}
	ids := func(l StatsList) []uint32 {
		var out []uint32
		for _, s := range l.Stats {
			out = append(out, s.ID)
		}
		return out
	}

	byCount := get("sort=count")
	if byCount.Sort != "count" || byCount.Order != "desc" || byCount.Matched != len(probes) {
		t.Errorf("sort=count: %s %s matched %d", byCount.Sort, byCount.Order, byCount.Matched)
	}
	if got := ids(byCount); len(got) != len(probes) || got[0] != find.ID() || got[1] != save.ID() {
		t.Errorf("sort=count order %v; want Find, Save first", got)
	}
	for _, s := range byCount.Stats {
		if s.TotalNs != float64(s.Count)*s.MeanNs {
			t.Errorf("probe %d: totalNs %v != count × mean", s.ID, s.TotalNs)
		}
		if s.ID == save.ID() && s.Errors < 20 {
			t.Errorf("Save errors %d; want ≥ 20", s.Errors)
		}
	}
	if got := ids(get("sort=errors&top=1")); !slices.Equal(got, []uint32{save.ID()}) {
		t.Errorf("sort=errors&top=1: %v; want Save", got)
	}
	if got := ids(get("sort=id&order=desc&top=2")); !slices.Equal(got, []uint32{weird.ID(), ping.ID()}) {
		t.Errorf("sort=id&order=desc&top=2: %v", got)
	}
	if l := get("sort=signature&" + url.Values{"pointcut": {"execution(* test.example/shop.(*Store).*(..))"}}.Encode()); !slices.Equal(ids(l), []uint32{find.ID(), save.ID()}) || l.Matched != 2 {
		t.Errorf("Store stats by signature: %v (matched %d)", ids(l), l.Matched)
	}
	if got := ids(get("mode=off")); !slices.Equal(got, []uint32{ping.ID()}) {
		t.Errorf("mode=off: %v", got)
	}

	wantError(t, do(t, h, "GET", Prefix+"stats?sort=speed", ""), 400, "sort", 0, "want one of concurrency, count")
	wantError(t, do(t, h, "GET", Prefix+"stats?order=sideways", ""), 400, "order", 0, "want asc or desc")
	wantError(t, do(t, h, "GET", Prefix+"stats?top=-1", ""), 400, "top", 0, "not a row count")
	wantError(t, do(t, h, "GET", Prefix+"stats?top=ten", ""), 400, "top", 0, "not a row count")
	wantError(t, do(t, h, "GET", Prefix+"stats?mode=hot", ""), 400, "mode", 0, "not a mode")
	wantError(t, do(t, h, "GET", Prefix+"stats?pointcut=execution(", ""), 400, "pointcut", 11, "")
}

func TestWriterAndHealth(t *testing.T) {
	reset(t)
	decode[RuleChange](t, do(t, h, "POST", Prefix+"rules", `{"pattern": "execution(* test.example/shop.Ping(..))", "mode": "fine"}`), 201)
	before := decode[WriterState](t, do(t, h, "GET", Prefix+"writer", ""), 200)
	for left := 10; left > 0; left-- {
		call(ping, nil)
	}
	ws := decode[WriterState](t, do(t, h, "GET", Prefix+"writer", ""), 200)
	// The test's writer is the null writer: it counts every record as written.
	if !ws.Active || ws.Written != before.Written+10 || ws.Dropped != 0 {
		t.Errorf("writer %+v (before %+v); want active, 10 more written", ws, before)
	}

	hl := decode[Health](t, do(t, h, "GET", Prefix+"health", ""), 200)
	if hl.Status != "ok" || hl.PID != os.Getpid() || hl.Probes != len(probes) || hl.Modes[settings.Fine] != 1 || hl.Modes[settings.Coarse] != 3 || !hl.Writer || hl.UptimeSeconds <= 0 {
		t.Errorf("health %+v", hl)
	}
	if exe, _ := os.Executable(); hl.Binary != exe || exe == "" {
		t.Errorf("health names the binary %q, want %q", hl.Binary, exe)
	}
	if rec := do(t, h, "HEAD", Prefix+"health", ""); rec.Code != 200 {
		t.Errorf("HEAD health: %d", rec.Code)
	}
}

// exposition matches one line of the Prometheus text format as this package
// writes it: a comment, or a sample with optional labels.
var exposition = regexp.MustCompile(`^(# (HELP|TYPE) [a-z_]+ .*|[a-z_]+(\{[a-z_]+="([^"\\\n]|\\["\\n])*"(,[a-z_]+="([^"\\\n]|\\["\\n])*")*\})? ([-+0-9.e]+|NaN|\+Inf|-Inf))$`)

func TestMetrics(t *testing.T) {
	reset(t)
	for left := 7; left > 0; left-- {
		call(weird, nil)
	}
	rec := do(t, h, "GET", "/metrics", "")
	if rec.Code != 200 || rec.Header().Get("Content-Type") != metricsContentType {
		t.Fatalf("GET /metrics: %d %q\n%s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	text := rec.Body.String()
	types := map[string]int{}
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if !exposition.MatchString(line) {
			t.Errorf("line %d is not valid exposition: %q", i+1, line)
		}
		if f := strings.Fields(line); len(f) == 4 && f[1] == "TYPE" {
			types[f[2]]++
		}
	}
	for name, n := range types {
		if n != 1 {
			t.Errorf("TYPE %s appears %d times", name, n)
		}
	}
	if types["tigris_probe_calls_total"] != 1 || types["tigris_writer_dropped_records_total"] != 1 {
		t.Errorf("missing metric families: %v", types)
	}
	want := `tigris_probe_calls_total{function="test.example/shop.Weird",signature="test.example/shop.Weird(struct{a \"x\\y\"})"} 7`
	if !strings.Contains(text, want+"\n") {
		t.Errorf("no line %s in:\n%s", want, text)
	}
	weirdLabels := `function="test.example/shop.Weird",signature="test.example/shop.Weird(struct{a \"x\\y\"})"`
	if !strings.Contains(text, "# TYPE tigris_probe_duration_seconds summary\n") ||
		!strings.Contains(text, "tigris_probe_duration_seconds_count{"+weirdLabels+"} 7\n") {
		t.Errorf("no duration summary for Weird in:\n%s", text)
	}
	ones := 0
	for _, m := range []string{"off", "coarse", "fine"} {
		if strings.Contains(text, "tigris_probe_mode{"+weirdLabels+`,mode="`+m+`"} 1`+"\n") {
			ones++
		} else if !strings.Contains(text, "tigris_probe_mode{"+weirdLabels+`,mode="`+m+`"} 0`+"\n") {
			t.Errorf("no mode %s series for Weird", m)
		}
	}
	if ones != 1 {
		t.Errorf("Weird is in %d modes at once", ones)
	}
	// Ping is off and was never called in this test binary before? It may have
	// been (TestWriterAndHealth); the filter is what is checked here.
	off := do(t, h, "GET", "/metrics?mode=coarse", "").Body.String()
	if strings.Contains(off, "Ping") {
		t.Errorf("mode=coarse lists Ping:\n%s", off)
	}
	if v1 := do(t, h, "GET", Prefix+"metrics", "").Body.String(); !strings.Contains(v1, want) {
		t.Errorf("%smetrics differs from /metrics", Prefix)
	}
	wantError(t, do(t, h, "GET", "/metrics?pointcut=(", ""), 400, "pointcut", 2, "")
}

func TestProbeLabels(t *testing.T) {
	for sig, want := range map[string]string{
		"example.com/shop.(*Store).Find(int) (string, error)": `function="example.com/shop.(*Store).Find",signature="example.com/shop.(*Store).Find(int) (string, error)"`,
		"example.com/shop.Max[...](T, T) T":                   `function="example.com/shop.Max[...]",signature="example.com/shop.Max[...](T, T) T"`,
		"main.f(struct{a \"\xff\"})":                          `function="main.f",signature="main.f(struct{a \"` + "\uFFFD" + `\"})"`,
	} {
		if got := probeLabels(sig); got != want {
			t.Errorf("probeLabels(%q) = %s, want %s", sig, got, want)
		}
	}
}

func TestEscapeAndFormat(t *testing.T) {
	if got := escapeLabel("a\\b\"c\nd"); got != `a\\b\"c\nd` {
		t.Errorf("escapeLabel = %s", got)
	}
	if got := escapeHelp("a\\b\"c\nd"); got != `a\\b"c\nd` {
		t.Errorf("escapeHelp = %s", got)
	}
	for v, want := range map[float64]string{1: "1", 0.5: "0.5", 1e21: "1e+21"} {
		if got := formatValue(v); got != want {
			t.Errorf("formatValue(%v) = %s; want %s", v, got, want)
		}
	}
}

func TestAuth(t *testing.T) {
	reset(t)
	th := NewHandler(Options{Token: "s3cret"})
	const body = `{"pattern": "execution(* test.example/shop.Ping(..))", "mode": "fine"}`
	rec := do(t, th, "POST", Prefix+"rules", body)
	wantError(t, rec, 401, "", 0, "missing bearer token")
	if rec.Header().Get("WWW-Authenticate") == "" {
		t.Error("401 without WWW-Authenticate")
	}
	wantError(t, do(t, th, "POST", Prefix+"rules", body, "Authorization: Bearer s3cre"), 401, "", 0, "wrong bearer token")
	wantError(t, do(t, th, "POST", Prefix+"rules", body, "Authorization: Basic s3cret"), 401, "", 0, "missing bearer token")
	wantError(t, do(t, th, "PUT", Prefix+"sampling", `{"sampling": 0}`, "Authorization: Bearer nope"), 401, "", 0, "wrong")
	wantError(t, do(t, th, "DELETE", Prefix+"rules/0", "", "Authorization: Bearer"), 401, "", 0, "missing")
	wantError(t, do(t, th, "POST", Prefix+"analysis/run", ""), 401, "", 0, "missing")
	if _, m := monitor.Rules(); len(m) != 0 || monitor.Sampling() != 1 {
		t.Fatalf("a refused request changed something: rules %v, sampling %v", m, monitor.Sampling())
	}
	// Reads need no token.
	decode[RuleList](t, do(t, th, "GET", Prefix+"rules", ""), 200)
	decode[RuleChange](t, do(t, th, "POST", Prefix+"rules", body, "Authorization: Bearer s3cret"), 201)
}

func TestOversizeBody(t *testing.T) {
	reset(t)
	big := `{"pattern": "execution(* a.` + strings.Repeat("x", MaxBody) + `(..))", "mode": "fine"}`
	wantError(t, do(t, h, "POST", Prefix+"rules", big), 413, "", 0, "larger than 1048576 bytes")
	// Trailing white space past the limit is caught too.
	wantError(t, do(t, h, "PUT", Prefix+"sampling", `{"sampling": 0.5}`+strings.Repeat(" ", MaxBody)), 413, "", 0, "larger than")
	if _, m := monitor.Rules(); len(m) != 0 || monitor.Sampling() != 1 {
		t.Errorf("an oversize request changed something")
	}
}

func TestMethodsAndPaths(t *testing.T) {
	for _, c := range []struct{ method, path, allow string }{
		{"DELETE", Prefix + "probes", "GET"},
		{"POST", Prefix + "health", "GET"},
		{"GET", Prefix + "rules/0", "DELETE"},
		{"PATCH", Prefix + "rules", "GET, POST, PUT"},
		{"GET", Prefix + "analysis/run", "POST"},
		{"PUT", "/metrics", "GET"},
	} {
		rec := do(t, h, c.method, c.path, "")
		wantError(t, rec, 405, "", 0, "is not allowed")
		if got := rec.Header().Get("Allow"); got != c.allow {
			t.Errorf("%s %s: Allow %q; want %q", c.method, c.path, got, c.allow)
		}
	}
	for _, p := range []string{Prefix + "nope", "/tigris/v2/probes", "/", Prefix + "rules/1/2"} {
		wantError(t, do(t, h, "GET", p, ""), 404, "", 0, "no endpoint")
	}
}

func TestPanicBecomes500(t *testing.T) {
	var logged bytes.Buffer
	defer func(w io.Writer) { stderr = w }(stderr)
	stderr = &logged
	a := &api{slots: make(chan struct{}, 1)}
	ph := a.wrap(methods{"GET": func(http.ResponseWriter, *http.Request) error { panic("boom") }}, true)
	wantError(t, do(t, ph, "GET", "/x", ""), 500, "", 0, "internal error: boom")
	if !strings.Contains(logged.String(), "internal error serving GET /x: boom") {
		t.Errorf("stderr: %q", logged.String())
	}
	// The slot was given back.
	wantError(t, do(t, ph, "GET", "/x", ""), 500, "", 0, "boom")
}

func TestPosition(t *testing.T) {
	inner := errors.New("1:14: unexpected token")
	for _, c := range []struct {
		err       error
		line, col int
	}{
		{inner, 1, 14},
		{fmt.Errorf("rule %q: %w", "a:1: b", inner), 1, 14},
		{fmt.Errorf("criteria: %v", errors.New("2:3: unknown criterion")), 2, 3},
		{errors.New("no position here: 12 apples"), 0, 0},
		{errors.New("12:x: nope"), 0, 0},
		{nil, 0, 0},
	} {
		if l, col := position(c.err); l != c.line || col != c.col {
			t.Errorf("position(%v) = %d:%d; want %d:%d", c.err, l, col, c.line, c.col)
		}
	}
}

func TestStart(t *testing.T) {
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0", "192.0.2.1:0"} {
		if s, err := Start(settings.Admin{Listen: addr}); err == nil {
			s.Close()
			t.Errorf("Start(%s) without a token: no error", addr)
		} else if !strings.Contains(err.Error(), "without a token") {
			t.Errorf("Start(%s): %v", addr, err)
		}
	}
	if _, err := Start(settings.Admin{}); err == nil {
		t.Error("Start with no address: no error")
	}

	var out bytes.Buffer
	defer func(w io.Writer) { stderr = w }(stderr)
	stderr = &out
	if err := Launch(settings.Admin{Listen: "localhost:0"}); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^tigris: admin endpoint on http://127\.0\.0\.1:\d+/tigris/v1/\n$`).MatchString(out.String()) {
		t.Errorf("start-up line %q", out.String())
	}

	// Exposed with a token: it serves, and the token guards changes.
	s, err := Start(settings.Admin{Listen: "0.0.0.0:0", Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	port := s.Addr().String()[strings.LastIndexByte(s.Addr().String(), ':'):]
	resp, err := http.Get("http://127.0.0.1" + port + Prefix + "health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET health: %s", resp.Status)
	}
	resp, err = http.Post("http://127.0.0.1"+port+Prefix+"analysis/run", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("POST without the token: %s", resp.Status)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := http.Get("http://127.0.0.1" + port + Prefix + "health"); err == nil {
		t.Error("the server still answers after Close")
	}
}

// TestBadInputElsewhere: the remaining malformed requests are refused with a
// message, and change nothing.
func TestBadInputElsewhere(t *testing.T) {
	reset(t)
	th := NewHandler(Options{Token: "s3cret"})
	const auth = "Authorization: Bearer s3cret"
	wantError(t, do(t, h, "GET", "/metrics?mode=loud", ""), 400, "mode", 0, `"loud" is not a mode`)
	wantError(t, do(t, h, "GET", Prefix+"probes?mode=loud", ""), 400, "mode", 0, `"loud" is not a mode`)
	wantError(t, do(t, th, "PUT", Prefix+"rules", `null`, auth), 400, "rules", 0, "missing")
	wantError(t, do(t, th, "PUT", Prefix+"rules", `rules: []`, auth), 400, "", 0, "request body")
	wantError(t, do(t, th, "PUT", Prefix+"rules", `{"rules": []}`), 401, "", 0, "missing bearer token")
	wantError(t, do(t, th, "PUT", Prefix+"analysis", `{"enabled": true}`), 401, "", 0, "missing bearer token")
	wantError(t, do(t, th, "DELETE", Prefix+"rules/99999999999999999999", "", auth), 400, "index", 0, "is not a rule index")
	if _, m := monitor.Rules(); len(m) != 0 || analyzer.Analysis().Enabled {
		t.Errorf("a refused request changed something: rules %v, analysis on %v", m, analyzer.Analysis().Enabled)
	}
}
