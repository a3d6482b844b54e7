package dash

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/adminclient"
	"github.com/tigrisgo/tigris/internal/admintest"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// dashOf serves src as tigris dash does, on a loopback port, and returns its
// base URL.
func dashOf(t *testing.T, src Source, o Options) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(NewServer(src, ln.Addr(), o))
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)
	return ts.URL
}

// liveDash serves the page of the admintest program (which has the token
// programToken when not "") through a client with dashToken.
func liveDash(t *testing.T, programToken, dashToken string, o LiveOptions) (base string, program *adminclient.Client) {
	t.Helper()
	addr := admintest.Server(t, programToken)
	c, err := adminclient.New(addr, adminclient.Options{Token: dashToken})
	if err != nil {
		t.Fatal(err)
	}
	o.TokenGiven = dashToken != ""
	l := NewLive(c, addr, o)
	l.Read(context.Background())
	program, err = adminclient.New(addr, adminclient.Options{Token: programToken})
	if err != nil {
		t.Fatal(err)
	}
	return dashOf(t, l, Options{}), program
}

// get fetches a page and returns its body; hdr are "Name: value" pairs.
func get(t *testing.T, u string, hdr ...string) (*http.Response, string) {
	t.Helper()
	return send(t, "GET", u, nil, hdr...)
}

func send(t *testing.T, method, u string, form url.Values, hdr ...string) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, kv := range hdr {
		k, v, _ := strings.Cut(kv, ": ")
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrfOf is the form token of a page.
func csrfOf(t *testing.T, page string) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no form token on the page")
	}
	return m[1]
}

func manualRules(t *testing.T, c *adminclient.Client) []settings.Rule {
	t.Helper()
	rl, err := c.Rules(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rl.Manual
}

var rowRE = regexp.MustCompile(`<tr data-signature="([^"]+)" data-calls="(\d+)" data-mode="(\w*)">`)

// TestLivePage: the functions table lists the program's functions with
// their calls and modes; the controls are enabled.
func TestLivePage(t *testing.T) {
	base, _ := liveDash(t, "", "", LiveOptions{})
	resp, page := get(t, base+"/")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %s", resp.Status)
	}
	calls := map[string]string{}
	for _, m := range rowRE.FindAllStringSubmatch(page, -1) {
		calls[m[1]] = m[2]
		if m[3] != "coarse" {
			t.Errorf("%s in mode %q, want coarse", m[1], m[3])
		}
	}
	for sig, n := range map[string]int{admintest.Find: 30, admintest.Save: 20, admintest.Ping: 10} {
		if got, _ := strconv.Atoi(calls[sig]); got < n { // other tests of the package may have called them too
			t.Errorf("%s: %q calls on the page, want at least %d (rows %v)", sig, calls[sig], n, calls)
		}
	}
	for _, want := range []string{`id="analyzer"`, `id="modes"`, `id="traces"`, `id="writer"`, "Top functions"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(page, "disabled-why") {
		t.Error("controls disabled against a program without a token")
	}
	if strings.Contains(page, `id="query"`) {
		t.Error("a query box without a query engine")
	}
}

// TestSwitchFromPage switches Find to fine through the page's form, then to
// coarse: one manual rule, changed in place, as the admin API shows it.
func TestSwitchFromPage(t *testing.T) {
	base, program := liveDash(t, "", "", LiveOptions{})
	t.Cleanup(func() { program.SetRules(context.Background(), nil) })
	_, page := get(t, base+"/")
	pattern := patternOf(admintest.Find)
	form := url.Values{"csrf": {csrfOf(t, page)}, "kind": {"mode"}, "pattern": {pattern}, "mode": {"fine"}}
	resp, _ := send(t, "POST", base+"/action", form, "Origin: "+base, "Sec-Fetch-Site: same-origin")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/#functions" {
		t.Fatalf("POST /action: %s to %q", resp.Status, resp.Header.Get("Location"))
	}
	if m := manualRules(t, program); len(m) != 1 || m[0].Pattern != pattern || m[0].Mode != settings.Fine {
		t.Fatalf("manual rules after switching to fine: %+v", m)
	}
	_, page = get(t, base+"/")
	if !strings.Contains(page, `data-signature="`+admintest.Find+`" data-calls=`) || !regexp.MustCompile(`data-signature="shop.example/shop.\(\*Store\).Find\(\) error" data-calls="\d+" data-mode="fine"`).MatchString(page) {
		t.Error("the page does not show Find as fine after the switch")
	}
	if !strings.Contains(page, "Added manual rule 0: fine") || !strings.Contains(page, "tigris ctl rules add") {
		t.Error("the page does not say what the switch did and how tigris ctl does it")
	}
	form.Set("mode", "coarse")
	send(t, "POST", base+"/action", form, "Sec-Fetch-Site: same-origin")
	if m := manualRules(t, program); len(m) != 1 || m[0].Mode != settings.Coarse {
		t.Fatalf("manual rules after switching back: %+v", m)
	}
}

// TestRefusals: requests that would switch probes from another origin, with
// a wrong or no form token, or through a foreign host name are refused and
// change nothing.
func TestRefusals(t *testing.T) {
	base, program := liveDash(t, "", "", LiveOptions{})
	t.Cleanup(func() { program.SetRules(context.Background(), nil) })
	_, page := get(t, base+"/")
	token := csrfOf(t, page)
	form := func(csrf string) url.Values {
		return url.Values{"csrf": {csrf}, "kind": {"mode"}, "pattern": {patternOf(admintest.Ping)}, "mode": {"off"}}
	}
	u, _ := url.Parse(base)
	for _, c := range []struct {
		name   string
		form   url.Values
		hdr    []string
		status int
	}{
		{"a form posted by another site", form(token), []string{"Sec-Fetch-Site: cross-site", "Origin: https://evil.example"}, http.StatusForbidden},
		{"a form posted from another origin of the same site", form(token), []string{"Sec-Fetch-Site: same-site", "Origin: http://localhost:1"}, http.StatusForbidden},
		{"an older browser's cross-origin post", form(token), []string{"Origin: https://evil.example"}, http.StatusForbidden},
		{"no form token", form(""), []string{"Sec-Fetch-Site: same-origin"}, http.StatusForbidden},
		{"a wrong form token", form(strings.Repeat("0", 32)), []string{"Sec-Fetch-Site: same-origin"}, http.StatusForbidden},
		{"a DNS name rebound to loopback", form(token), []string{"Host: evil.example:" + u.Port(), "Sec-Fetch-Site: same-origin"}, http.StatusMisdirectedRequest},
	} {
		resp, body := send(t, "POST", base+"/action", c.form, c.hdr...)
		if resp.StatusCode != c.status {
			t.Errorf("%s: %s, want %d\n%s", c.name, resp.Status, c.status, body)
		}
	}
	if resp, _ := get(t, base+"/", "Host: evil.example:"+u.Port()); resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("GET through a foreign host name: %s", resp.Status)
	}
	if m := manualRules(t, program); len(m) != 0 {
		t.Errorf("refused requests added rules: %+v", m)
	}
	if resp, _ := get(t, base+"/action?kind=mode&mode=off&pattern=x"); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /action: %s, want 405 (a GET changes nothing)", resp.Status)
	}
	resp, _ := get(t, base+"/")
	for _, h := range []string{"Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options"} {
		if resp.Header.Get(h) == "" {
			t.Errorf("the page has no %s header", h)
		}
	}
}

// TestTokenNeverForwarded: with the program's token, the page, its assets,
// its changes and their results, and its downloads never carry the token.
func TestTokenNeverForwarded(t *testing.T) {
	const secret = "s3cr3t-admin-token-4f9a"
	base, program := liveDash(t, secret, secret, LiveOptions{})
	t.Cleanup(func() { program.SetRules(context.Background(), nil) })
	check := func(what string, resp *http.Response, body string) {
		t.Helper()
		if strings.Contains(body, secret) {
			t.Errorf("%s: the body holds the admin token", what)
		}
		for k, vs := range resp.Header {
			for _, v := range vs {
				if strings.Contains(v, secret) {
					t.Errorf("%s: header %s holds the admin token", what, k)
				}
			}
		}
	}
	resp, page := get(t, base+"/")
	check("GET /", resp, page)
	if strings.Contains(page, "disabled-why") {
		t.Fatal("controls disabled although tigris dash has the program's token")
	}
	token := csrfOf(t, page)
	for _, a := range []url.Values{
		{"kind": {"mode"}, "pattern": {patternOf(admintest.Save)}, "mode": {"fine"}},
		{"kind": {"rule"}, "pattern": {"execution(* nope.(x"}, "mode": {"fine"}}, // refused by the program
		{"kind": {"sampling"}, "rate": {"50%"}},
		{"kind": {"run"}},
	} {
		a.Set("csrf", token)
		resp, body := send(t, "POST", base+"/action", a, "Sec-Fetch-Site: same-origin")
		check("POST /action "+a.Get("kind"), resp, body)
		resp, body = get(t, base+"/")
		check("the page after "+a.Get("kind"), resp, body)
	}
	if m := manualRules(t, program); len(m) != 1 {
		t.Errorf("the authorized switch did not reach the program: %+v", m)
	}
	for _, p := range []string{"/assets/dash.js", "/assets/dash.css", "/download?format=chrome", "/download?format=pprof&trace=1", "/nope"} {
		resp, body := get(t, base+p)
		check("GET "+p, resp, body)
	}
}

// TestControlsDisabledWhy: a program with a token, a dashboard without (or
// read-only): the controls are disabled and the page says why; a post is
// refused.
func TestControlsDisabledWhy(t *testing.T) {
	for _, c := range []struct {
		name, dashToken string
		o               LiveOptions
		why             string
	}{
		{"no token", "", LiveOptions{}, "has an admin token and tigris dash was given none"},
		{"wrong token", "nope", LiveOptions{}, "refused tigris dash's token: wrong bearer token"},
		{"read-only", "tok", LiveOptions{ReadOnly: true}, "started with --read-only"},
	} {
		t.Run(c.name, func(t *testing.T) {
			base, program := liveDash(t, "tok", c.dashToken, c.o)
			_, page := get(t, base+"/")
			if !strings.Contains(page, escaped(c.why)) {
				t.Errorf("the page does not say %q", c.why)
			}
			if !strings.Contains(page, `class="mode-btn fine" aria-pressed="false" disabled`) {
				t.Error("the switch buttons are not disabled")
			}
			form := url.Values{"csrf": {csrfOf(t, page)}, "kind": {"mode"}, "pattern": {patternOf(admintest.Find)}, "mode": {"fine"}}
			send(t, "POST", base+"/action", form, "Sec-Fetch-Site: same-origin")
			if m := manualRules(t, program); len(m) != 0 {
				t.Errorf("a disabled control changed the rules: %+v", m)
			}
			if _, page = get(t, base+"/"); !strings.Contains(page, "Not done: ") {
				t.Error("the refused change is not reported")
			}
		})
	}
}

// escaped escapes an apostrophe as html/template does.
func escaped(s string) string { return strings.ReplaceAll(s, "'", "&#39;") }

// TestQueryHook: with a query engine the page has the box, and a query's
// lines stream back; the post is protected like any change.
func TestQueryHook(t *testing.T) {
	addr := admintest.Server(t, "")
	c, _ := adminclient.New(addr, adminclient.Options{})
	l := NewLive(c, addr, LiveOptions{})
	l.Read(context.Background())
	var got string
	base := dashOf(t, l, Options{Query: QueryFunc(func(ctx context.Context, q string, rows func([]byte) error) error {
		got = q
		for _, line := range []string{`{"n":1}`, `{"n":2}`, `{"n":3}`} {
			if err := rows([]byte(line)); err != nil {
				return err
			}
		}
		return nil
	})})
	_, page := get(t, base+"/")
	if !strings.Contains(page, `id="query-form"`) {
		t.Fatal("no query box with a query engine")
	}
	form := url.Values{"csrf": {csrfOf(t, page)}, "q": {"SELECT 1"}}
	resp, body := send(t, "POST", base+"/query", form, "Sec-Fetch-Site: same-origin")
	if resp.StatusCode != 200 || body != "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n" || got != "SELECT 1" {
		t.Errorf("POST /query: %s %q (query %q)", resp.Status, body, got)
	}
	if resp, _ := send(t, "POST", base+"/query", form, "Sec-Fetch-Site: cross-site"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-site query: %s", resp.Status)
	}
}

// resourceRE finds what a page or style sheet makes the browser load: the
// src and href of elements that load (not links), and CSS url() and @import.
var resourceRE = regexp.MustCompile(`<(?:script|link|img|iframe|source|embed|object|audio|video)\b[^>]*?\s(?:src|href|data)="([^"]*)"|url\(\s*['"]?([^'")]*)|@import\s+['"]?([^'";\s]*)`)

// TestNothingFromElsewhere: the page works offline: everything it and its
// style sheet and script load comes from the dashboard itself, and its
// Content-Security-Policy forbids the rest.
func TestNothingFromElsewhere(t *testing.T) {
	f, err := OpenFile(writeTrace(t, shopDefs, shopRecords), FileOptions{Analysis: settings.Default().Analysis})
	if err != nil {
		t.Fatal(err)
	}
	fileBase := dashOf(t, f, Options{})
	liveBase, _ := liveDash(t, "", "", LiveOptions{})
	for _, base := range []string{fileBase, liveBase} {
		resp, page := get(t, base+"/")
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "http") {
			t.Errorf("Content-Security-Policy %q", csp)
		}
		bodies := map[string]string{"/": page}
		for _, m := range resourceRE.FindAllStringSubmatch(page, -1) {
			if u := m[1] + m[2] + m[3]; strings.HasPrefix(u, "/assets/") {
				_, bodies[u] = get(t, base+u)
			}
		}
		if len(bodies) < 4 {
			t.Errorf("the page loads %d of its own files; want the style sheet, the script and the icon", len(bodies)-1)
		}
		for name, body := range bodies {
			for _, m := range resourceRE.FindAllStringSubmatch(body, -1) {
				u := m[1] + m[2] + m[3]
				if !(strings.HasPrefix(u, "/") && !strings.HasPrefix(u, "//") || strings.HasPrefix(u, "#") || strings.HasPrefix(u, "data:")) {
					t.Errorf("%s loads %q, which is not the dashboard's own", name, u)
				}
			}
		}
	}
}
