package admin

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/runtime/internal/costcheck"
	"github.com/tigrisgo/tigris/runtime/query"
)

// The explain endpoint takes any query in a POST body, in memory bounded by
// its size, and leaves nothing behind; on a program with a token it asks
// for the token on GET and POST alike, since compiling costs the program.
func TestExplainBounded(t *testing.T) {
	reset(t)
	th := NewHandler(Options{Token: "s3cret"})
	text := "SELECT 1" + strings.Repeat("+1", 30000) + " AS x FROM calls WHERE name = 'Ping'"
	body, _ := json.Marshal(ExplainRequest{Query: text})
	short := Prefix + "queries/explain?query=" + strings.ReplaceAll("SELECT * FROM calls WHERE name = 'Ping'", " ", "+")

	wantError(t, do(t, th, "GET", short, ""), 401, "", 0, "missing bearer token")
	wantError(t, do(t, th, "POST", Prefix+"queries/explain", string(body)), 401, "", 0, "missing bearer token")
	if rec := do(t, th, "GET", short, "", "Authorization: Bearer s3cret"); rec.Code != 200 {
		t.Fatalf("GET with the token: %d %s", rec.Code, rec.Body)
	}

	// Warm up (the parser is built on first use), then measure.
	do(t, th, "POST", Prefix+"queries/explain", `{"query":"SELECT 1 AS x FROM calls"}`, "Authorization: Bearer s3cret")
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	var out QueryPosted
	cost := costcheck.Of(func() {
		out = decode[QueryPosted](t, do(t, th, "POST", Prefix+"queries/explain", string(body), "Authorization: Bearer s3cret"), 200)
	})
	if len(out.Statements) != 1 || out.Statements[0].Kind != "explain" || !strings.Contains(out.Statements[0].Plan, "test.example/shop.Ping") {
		t.Fatalf("%.300v", out)
	}
	// Compiling costs about 3.5 KB a byte of text, the plan and the reply
	// (the text three times, as JSON) a few more.
	if limit := costcheck.Allowance(8<<20 + 8<<10*uint64(len(text))); cost.Bytes > limit {
		t.Errorf("explaining %d bytes allocated %d MB; the bound is %d MB", len(text), cost.Bytes>>20, limit>>20)
	}
	out = QueryPosted{}
	if after := heap(); after > before+1<<20 {
		t.Errorf("explaining left %d KB on the heap", (after-before)>>10)
	}
	t.Logf("explaining %d bytes: %d MB allocated", len(text), cost.Bytes>>20)

	// The limit of the language holds on POST, where a URL stops at 16 KiB.
	long, _ := json.Marshal(ExplainRequest{Query: strings.Repeat(" ", query.MaxText+1)})
	wantError(t, do(t, th, "POST", Prefix+"queries/explain", string(long), "Authorization: Bearer s3cret"), 400, "query", 1, "the most is 65536")
}

// Without a token, GET explain works for the queries a URL holds.
func TestExplainOpenWithoutToken(t *testing.T) {
	reset(t)
	h := NewHandler(Options{})
	rec := do(t, h, "GET", Prefix+"queries/explain?query="+strings.ReplaceAll("SELECT count(*) FROM calls", " ", "+"), "")
	if rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	wantError(t, do(t, h, "POST", Prefix+"queries/explain", `{}`), 400, "query", 0, "missing query")
}
