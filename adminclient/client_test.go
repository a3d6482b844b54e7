package adminclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/internal/admintest"
	"github.com/tigrisgo/tigris/runtime/monitor/admin"
	"github.com/tigrisgo/tigris/runtime/settings"
)

func newClient(t *testing.T, addr string, o Options) *Client {
	t.Helper()
	c, err := New(addr, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestProbesAndRules(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, admintest.Server(t, ""), Options{})
	l, err := c.Probes(ctx, Filter{})
	if err != nil || len(l.Probes) != 3 || l.Probes[0].Signature != admintest.Find {
		t.Fatalf("Probes: %v %+v", err, l)
	}
	l, err = c.Probes(ctx, Filter{Pointcut: "execution(* shop.example/shop.S*(..))"})
	if err != nil || len(l.Probes) != 1 || l.Probes[0].Signature != admintest.Save {
		t.Errorf("Probes with a pointcut: %v %+v", err, l)
	}

	rc, err := c.AddRule(ctx, settings.Rule{Pattern: "execution(* shop.example/shop.Ping(..))", Mode: settings.Off})
	if err != nil || rc.Index != 0 || rc.Rule.Mode != settings.Off {
		t.Fatalf("AddRule: %v %+v", err, rc)
	}
	if l, err := c.Probes(ctx, Filter{Mode: "off"}); err != nil || len(l.Probes) != 1 {
		t.Errorf("Probes in mode off: %v %+v", err, l)
	}
	rl, err := c.SetRules(ctx, []settings.Rule{{Pattern: "execution(* a.B(..))", Mode: settings.Coarse}, {Pattern: "execution(* a.C(..))", Mode: settings.Fine}})
	if err != nil || len(rl.Manual) != 2 {
		t.Fatalf("SetRules: %v %+v", err, rl)
	}
	if rc, err := c.DeleteRule(ctx, 1); err != nil || rc.Rule.Pattern != "execution(* a.C(..))" {
		t.Errorf("DeleteRule: %v %+v", err, rc)
	}
	if rl, err := c.Rules(ctx); err != nil || len(rl.Manual) != 1 {
		t.Errorf("Rules: %v %+v", err, rl)
	}
	if rl, err := c.SetRules(ctx, nil); err != nil || len(rl.Manual) != 0 {
		t.Errorf("SetRules(nil): %v %+v", err, rl)
	}

	// A syntax error: the message, then the pattern with a caret under the column.
	_, err = c.AddRule(ctx, settings.Rule{Pattern: "execution(* shop.F$nd(..))", Mode: settings.Fine})
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.Body.Column != 19 {
		t.Fatalf("bad pattern: %#v", err)
	}
	want := "pattern: 1:19: unexpected character '$'\n    execution(* shop.F$nd(..))\n                      ^"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("bad pattern: %v\nwant it to contain\n%s", err, want)
	}
	if _, err := c.DeleteRule(ctx, 7); !errors.As(err, &e) || e.Status != http.StatusNotFound || e.Hint != "" {
		t.Errorf("DeleteRule(7): %#v", err)
	}
}

func TestSamplingStatsAndState(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, admintest.Server(t, ""), Options{})
	if s, err := c.SetSampling(ctx, "10%"); err != nil || s.Sampling != 0.1 || s.Percent != "10%" {
		t.Errorf("SetSampling: %v %+v", err, s)
	}
	if s, err := c.Sampling(ctx); err != nil || s.Percent != "10%" {
		t.Errorf("Sampling: %v %+v", err, s)
	}
	if _, err := c.SetSampling(ctx, "150%"); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("SetSampling(150%%): %v", err)
	}
	st, err := c.Stats(ctx, StatsQuery{Sort: "count", Top: 2})
	if err != nil || len(st.Stats) != 2 || st.Matched != 3 || st.Stats[0].Count != 30 || st.Sort != "count" || st.Order != "desc" {
		t.Errorf("Stats: %v %+v", err, st)
	}
	if st, err := c.Stats(ctx, StatsQuery{Filter: Filter{Pointcut: "execution(* shop.example/shop.Ping(..))"}}); err != nil || len(st.Stats) != 1 || st.Stats[0].Count != 10 {
		t.Errorf("Stats of Ping: %v %+v", err, st)
	}
	if _, err := c.Stats(ctx, StatsQuery{Sort: "speed"}); err == nil || !strings.Contains(err.Error(), "not a sort key") {
		t.Errorf("Stats by speed: %v", err)
	}
	if w, err := c.Writer(ctx); err != nil || w.Dropped != 0 {
		t.Errorf("Writer: %v %+v", err, w)
	}
	if h, err := c.Health(ctx); err != nil || h.Status != "ok" || h.Probes != 3 {
		t.Errorf("Health: %v %+v", err, h)
	}
	m, err := c.Metrics(ctx, Filter{Pointcut: "execution(* shop.example/shop.Ping(..))"})
	if err != nil || !bytes.Contains(m, []byte(`tigris_probe_calls_total{function="shop.example/shop.Ping",signature="shop.example/shop.Ping()"} 10`)) || bytes.Contains(m, []byte("Save")) {
		t.Errorf("Metrics: %v\n%s", err, m)
	}
}

func TestAnalysis(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, admintest.Server(t, ""), Options{})
	if a, err := c.Analysis(ctx); err != nil || a.Enabled || a.Metrics["frequent"] != "count" {
		t.Errorf("Analysis: %v %+v", err, a)
	}
	if !(AnalysisChange{}).Empty() {
		t.Error("the zero change is not empty")
	}
	crit, window := "most frequent", "5m"
	a, err := c.SetAnalysis(ctx, AnalysisChange{Criteria: &crit, Window: &window, Metrics: map[string]string{"expensive": "errors"}})
	if err != nil || a.Criteria != crit || a.Window.String() != "5m0s" || a.Metrics["expensive"] != "errors" || a.Metrics["frequent"] != "count" {
		t.Errorf("SetAnalysis: %v %+v", err, a)
	}
	bad := "most frequnt"
	_, err = c.SetAnalysis(ctx, AnalysisChange{Criteria: &bad})
	if err == nil || !strings.Contains(err.Error(), "1:6: expected a criterion") || !strings.Contains(err.Error(), "\n    most frequnt\n         ^") {
		t.Errorf("bad criteria: %v", err)
	}
	cy, err := c.RunAnalysis(ctx)
	if err != nil || cy.Trigger != "manual" || cy.Candidates != 3 || len(cy.Selected) == 0 || len(cy.Partitions) == 0 {
		t.Fatalf("RunAnalysis: %v %+v", err, cy)
	}
	h, err := c.History(ctx)
	if err != nil || len(h) == 0 || h[len(h)-1].Seq != cy.Seq {
		t.Errorf("History: %v %+v", err, h)
	}
}

func TestRawAndToken(t *testing.T) {
	ctx := context.Background()
	addr := admintest.Server(t, "s3cret")
	var raw bytes.Buffer
	c := newClient(t, addr, Options{Raw: &raw})
	if _, err := c.Rules(ctx); err != nil { // reads need no token
		t.Fatal(err)
	}
	var rl admin.RuleList
	if err := json.Unmarshal(raw.Bytes(), &rl); err != nil {
		t.Errorf("Raw got %v:\n%s", err, raw.String())
	}
	_, err := c.SetSampling(ctx, "0.5")
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusUnauthorized || !strings.Contains(err.Error(), "missing bearer token") {
		t.Errorf("no token: %#v", err)
	}
	if _, err := newClient(t, addr, Options{Token: "guess"}).SetSampling(ctx, "0.5"); err == nil || !strings.Contains(err.Error(), "wrong bearer token") {
		t.Errorf("wrong token: %v", err)
	}
	if s, err := newClient(t, addr, Options{Token: "s3cret"}).SetSampling(ctx, "0.5"); err != nil || s.Percent != "50%" {
		t.Errorf("right token: %v %+v", err, s)
	}
}

func TestUnreachableAndNotAdmin(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, err = newClient(t, addr, Options{}).Health(context.Background())
	want := "no tigris admin endpoint at " + addr + ": connection refused; start the program with TIGRIS_ADMIN=" + addr + " (a program built with admin.link: true in tigris.yaml)"
	if err == nil || err.Error() != want {
		t.Errorf("unreachable: %v\nwant %s", err, want)
	}

	other := httptest.NewServer(http.NotFoundHandler())
	defer other.Close()
	_, err = newClient(t, other.URL, Options{}).Health(context.Background())
	if err == nil || !strings.Contains(err.Error(), "GET /tigris/v1/health: 404 Not Found; is "+other.URL+" a tigris admin endpoint of this version?") {
		t.Errorf("not an admin endpoint: %v", err)
	}
}

func TestAddresses(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:7070":        "http://127.0.0.1:7070",
		":7070":                 "http://127.0.0.1:7070",
		"0.0.0.0:9":             "http://127.0.0.1:9",
		"[::]:9":                "http://[::1]:9",
		"localhost:1":           "http://localhost:1",
		"http://10.0.0.1:80/x/": "http://10.0.0.1:80",
	} {
		if got, err := BaseURL(in); err != nil || got != want {
			t.Errorf("BaseURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{"nonsense": `"nonsense": want host:port such as 127.0.0.1:7070`, "http://": `"http://" is not a URL or host:port`} {
		if _, err := New(in, Options{}); err == nil || err.Error() != want {
			t.Errorf("New(%q): %v; want %s", in, err, want)
		}
	}
	t.Setenv("TIGRIS_ADMIN", "off")
	if got := AddrFromEnv(); got != DefaultAddr {
		t.Errorf("TIGRIS_ADMIN=off: %s", got)
	}
	t.Setenv("TIGRIS_ADMIN", "127.0.0.1:9999")
	if got := AddrFromEnv(); got != "127.0.0.1:9999" {
		t.Errorf("TIGRIS_ADMIN=127.0.0.1:9999: %s", got)
	}
}

// TestReplyLimit: a reply over maxReply is an error that says so; it used to
// be cut short and fail as JSON that ends too soon.
func TestReplyLimit(t *testing.T) {
	old := maxReply
	maxReply = 64
	defer func() { maxReply = old }()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status": "ok", "padding": %q}`, strings.Repeat("x", 100))
	}))
	defer srv.Close()
	_, err := newClient(t, srv.URL, Options{}).Health(context.Background())
	want := "the reply of " + srv.URL + " to GET /tigris/v1/health is larger than 64 bytes, more than any admin endpoint sends"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}
