package admin

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/runtime/internal/costcheck"
	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/monitor/analyzer"
)

// requestBound is what one request may cost the program: a fixed part (a
// statistics snapshot, the index, a reply buffer) and, per byte of the
// request, what decoding it and parsing the patterns and filters in it
// allocate (a pointcut term of about 20 bytes costs about 80 kB to parse).
var requestBound = costcheck.Bound{
	Fixed:   costcheck.Cost{Bytes: 2 << 20, Allocs: 8 << 10},
	PerByte: costcheck.Cost{Bytes: 8 << 10, Allocs: 64},
}

var fuzzMethods = []string{"GET", "POST", "PUT", "DELETE", "PATCH"}

// FuzzRequest sends arbitrary requests to the admin API of a program with a
// token: a method, a path below Prefix, a body and an Authorization header.
// No request gets a 500 (a panic or an error the API did not expect), every
// reply but those of /metrics and writer/recent is JSON, and what a request costs stays within
// requestBound, linear in its size.
func FuzzRequest(f *testing.F) {
	for _, s := range []struct {
		method     uint8
		path, body string
		auth       string
	}{
		{0, "stats?sort=total&top=3", "", ""},
		{1, "rules", `{"pattern": "execution(* test.example/shop.*(..))", "mode": "fine"}`, "Bearer s3cret"},
		{2, "rules", `{"rules": [{"pattern": "within(test.example/...)", "mode": "coarse"}]}`, "bearer s3cret"},
		{2, "sampling", `{"sampling": "5%"}`, "Bearer s3cret"},
		{2, "analysis", `{"enabled": true, "criteria": "((more frequent ∩ expensive))", "interval": "1m"}`, "Bearer s3cret"},
		{3, "rules/0", "", "Bearer s3cret"},
		{1, "analysis/run", "", "Bearer s3cret"},
		{0, "writer/recent?bytes=100", "", ""},
		{2, "rules", `{"rules": [` + strings.Repeat(`{"pattern": "!(execution(* a.F(..)))", "mode": "fine"},`, 20) + `{}]}`, "Bearer s3cret"},
		{1, "auth", "", "Basic x"},
	} {
		f.Add(s.method, s.path, []byte(s.body), s.auth)
	}
	th := NewHandler(Options{Token: "s3cret"})
	saved := analyzer.Analysis()
	f.Fuzz(func(t *testing.T, method uint8, path string, body []byte, auth string) {
		req, err := http.NewRequest(fuzzMethods[int(method)%len(fuzzMethods)], "http://127.0.0.1"+Prefix+path, strings.NewReader(string(body)))
		if err != nil {
			return // not a request a client could send
		}
		req.Header.Set("Authorization", auth)
		rec := httptest.NewRecorder()
		requestBound.Check(t, len(path)+len(body)+len(auth), func() { th.ServeHTTP(rec, req) })
		defer func() {
			monitor.SetRules(nil)
			monitor.SetSampling(1)
			analyzer.SetAnalysis(saved)
		}()
		if rec.Code == http.StatusInternalServerError {
			t.Fatalf("%s %s: 500 %s", req.Method, req.URL, rec.Body)
		}
		ct := rec.Header().Get("Content-Type")
		stream := rec.Code == http.StatusOK && (strings.HasPrefix(req.URL.Path, Prefix+"metrics") || strings.HasPrefix(req.URL.Path, Prefix+"writer/recent"))
		if !strings.HasPrefix(ct, "application/json") && !stream {
			t.Fatalf("%s %s: %d with Content-Type %q", req.Method, req.URL, rec.Code, ct)
		}
	})
}

// TestRequestCostLinear: replacing the manual rules with a list of n costs
// allocation linear in the list (each pattern parsed once, each probe
// matched against each rule once).
func TestRequestCostLinear(t *testing.T) {
	reset(t)
	gen := func(n int) []byte {
		var b strings.Builder
		b.WriteString(`{"rules": [`)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"pattern": "execution(* test.example/shop%d.*(..)) || within(x%d)", "mode": "fine"}`, i, i)
		}
		b.WriteString("]}")
		return []byte(b.String())
	}
	costcheck.Linear(t, gen, func(body []byte) {
		if rec := do(t, h, "PUT", Prefix+"rules", string(body)); rec.Code != 200 {
			t.Fatalf("PUT rules: %d %s", rec.Code, rec.Body)
		}
	}, 30, 8)
}

// TestDeepFilterRefused: a filter of half a megabyte of "(" in a PUT analysis
// (within MaxBody) used to be parsed by recursion, needing more stack than Go
// allows a goroutine: the program ended. It is now a 400 naming the field.
func TestDeepFilterRefused(t *testing.T) {
	saved := analyzer.Analysis()
	t.Cleanup(func() { analyzer.SetAnalysis(saved) })
	deep := strings.Repeat("(", 500_000) + "frequent"
	wantError(t, do(t, h, "PUT", Prefix+"analysis", `{"criteria": "`+deep+`"}`), 400, "criteria", 1, "filter is longer than 16384 bytes")
	nested := strings.Repeat("(", 100) + "frequent" + strings.Repeat(")", 100)
	wantError(t, do(t, h, "PUT", Prefix+"analysis", `{"criteria": "`+nested+`"}`), 400, "criteria", 65, "filter nested deeper than 64 parentheses")
}
