package admin

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// newTestAPI is the handler of NewHandler with its api, so a test can look at
// the slots.
func newTestAPI() (*api, http.Handler) {
	a := &api{slots: make(chan struct{}, maxInFlight), readers: make(chan struct{}, maxBodyReads), mux: http.NewServeMux()}
	a.handle("stats", methods{"GET": a.stats})
	a.handle("rules", methods{"GET": a.rules, "POST": a.addRule, "PUT": a.setRules})
	a.handleFree("health", methods{"GET": a.health})
	return a, a.mux
}

// waitFor polls cond (a count the server keeps) until it holds; it fails the
// test after many tries, never on timing alone.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("never: %s", what)
}

// stallBody opens a connection and sends a POST whose body never comes.
func stallBody(t *testing.T, addr, path string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", path)
	return c
}

// TestSlowBodiesHoldNoSlot: clients that send their bodies slowly used to hold
// the four in-flight slots (the handler read the body inside one) until the
// server's read timeout, so even a health check waited. Bodies are now read
// before a slot is taken.
func TestSlowBodiesHoldNoSlot(t *testing.T) {
	reset(t)
	a, hd := newTestAPI()
	srv := httptest.NewServer(hd)
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	var stalled []net.Conn
	defer func() {
		for _, c := range stalled {
			c.Close() // before srv.Close, which waits for them
		}
	}()
	for i := 0; i < maxInFlight+2; i++ {
		stalled = append(stalled, stallBody(t, addr, Prefix+"rules"))
	}
	waitFor(t, "every stalled request is reading its body", func() bool { return len(a.readers) == maxInFlight+2 })
	if n := len(a.slots); n != 0 {
		t.Fatalf("%d slots held by requests still receiving their bodies; want 0", n)
	}
	for _, p := range []string{"health", "stats"} {
		resp, err := http.Get(srv.URL + Prefix + p)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %s while bodies stall", p, resp.Status)
		}
	}
}

// TestBodyDeadline: a body that does not arrive within bodyTimeout gets 408,
// and too many bodies at once get 503.
func TestBodyDeadline(t *testing.T) {
	reset(t)
	defer func(d time.Duration) { bodyTimeout = d }(bodyTimeout)
	bodyTimeout = 50 * time.Millisecond
	a, hd := newTestAPI()
	srv := httptest.NewServer(hd)
	defer srv.Close()
	c := stallBody(t, strings.TrimPrefix(srv.URL, "http://"), Prefix+"rules")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "request body not received within 50ms") {
		t.Errorf("%s: %s; want 408", resp.Status, b)
	}
	if _, m := monitor.Rules(); len(m) != 0 {
		t.Errorf("a timed-out request added rules: %v", m)
	}

	// Fill the readers, then one more body is refused at once.
	for i := 0; i < maxBodyReads; i++ {
		a.readers <- struct{}{}
	}
	wantError(t, do(t, hd, "POST", Prefix+"rules", `{}`), 503, "", 0, "too many requests sending a body at once")
}

// TestSlowReaderHoldsNoSlot: a client that does not read a large reply used
// to hold its slot until the write timeout; the reply is now sent after the
// slot is given back, within replyTimeout.
func TestSlowReaderHoldsNoSlot(t *testing.T) {
	a := &api{slots: make(chan struct{}, 1), readers: make(chan struct{}, 1), mux: http.NewServeMux()}
	var done atomic.Bool
	big := strings.Repeat("x", 32<<20) // more than the socket buffers hold
	a.handle("big", methods{"GET": func(w http.ResponseWriter, r *http.Request) error {
		io.WriteString(w, big)
		done.Store(true)
		return nil
	}})
	srv := httptest.NewServer(a.mux)
	defer srv.Close()
	c, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET %sbig HTTP/1.1\r\nHost: x\r\n\r\n", Prefix)
	// Before, the handler wrote to the connection and blocked there, in its slot.
	waitFor(t, "the handler finished writing its reply", done.Load)
	waitFor(t, "the slot is free while the reply is being sent", func() bool { return len(a.slots) == 0 })
}

// TestHealthTakesNoSlot: with every slot busy, health still answers.
func TestHealthTakesNoSlot(t *testing.T) {
	a, hd := newTestAPI()
	for i := 0; i < maxInFlight; i++ {
		a.slots <- struct{}{}
	}
	decode[Health](t, do(t, hd, "GET", Prefix+"health", ""), 200)
}

// TestManualRulesLimit: the manual rules stop at settings.MaxRules, with 409
// for one more and 400 for a list that is too long; tens of thousands used to
// be accepted.
func TestManualRulesLimit(t *testing.T) {
	reset(t)
	var list strings.Builder
	list.WriteString(`{"rules": [`)
	for i := 0; i < settings.MaxRules+1; i++ {
		if i > 0 {
			list.WriteString(",")
		}
		fmt.Fprintf(&list, `{"pattern": "execution(* a.F%d(..))", "mode": "fine"}`, i)
	}
	list.WriteString("]}")
	wantError(t, do(t, h, "PUT", Prefix+"rules", list.String()), 400, "rules", 0, "257 rules are more than the limit of 256")
	if _, m := monitor.Rules(); len(m) != 0 {
		t.Fatalf("a refused list changed the rules: %d", len(m))
	}
	for i := 0; i < settings.MaxRules; i++ {
		decode[RuleChange](t, do(t, h, "POST", Prefix+"rules", fmt.Sprintf(`{"pattern": "execution(* a.F%d(..))", "mode": "fine"}`, i)), 201)
	}
	wantError(t, do(t, h, "POST", Prefix+"rules", `{"pattern": "execution(* a.G(..))", "mode": "fine"}`), 409, "rules",
		0, "there are 256 manual rules already, the limit (delete some first")
	decode[RuleChange](t, do(t, h, "DELETE", Prefix+"rules/0", ""), 200)
	decode[RuleChange](t, do(t, h, "POST", Prefix+"rules", `{"pattern": "execution(* a.G(..))", "mode": "fine"}`), 201)
}

// TestBearerCaseInsensitive: the scheme of Authorization is case-insensitive
// (RFC 9110, 11.1); "bearer x" used to get 401.
func TestBearerCaseInsensitive(t *testing.T) {
	reset(t)
	th := NewHandler(Options{Token: "s3cret"})
	for _, auth := range []string{"bearer s3cret", "BEARER s3cret", "Bearer  s3cret", "bEaReR s3cret "} {
		rec := do(t, th, "PUT", Prefix+"sampling", `{"sampling": 0.5}`, "Authorization: "+auth)
		if rec.Code != 200 {
			t.Errorf("Authorization: %q: %d %s", auth, rec.Code, rec.Body)
		}
	}
	for _, auth := range []string{"bearers3cret", "bearer", "Basic s3cret", "bearer S3CRET"} {
		if rec := do(t, th, "PUT", Prefix+"sampling", `{"sampling": 0.5}`, "Authorization: "+auth); rec.Code != 401 {
			t.Errorf("Authorization: %q: %d; want 401", auth, rec.Code)
		}
	}
}

// TestSamplingLimits: the admin API refuses what tigris.yaml and TIGRIS_SAMPLING
// refuse (settings.CheckSampling): -0, denormals, out of range.
func TestSamplingLimits(t *testing.T) {
	reset(t)
	for body, want := range map[string]string{
		`{"sampling": -0}`:     "-0 is negative zero",
		`{"sampling": 5e-324}`: "5e-324 is below the smallest positive share",
		`{"sampling": "-0%"}`:  "-0 is negative zero",
		`{"sampling": 1.5}`:    "150% is out of range",
	} {
		wantError(t, do(t, h, "PUT", Prefix+"sampling", body), 400, "sampling", 0, want)
	}
	for _, ok := range []string{`{"sampling": 0}`, `{"sampling": 1e-9}`, `{"sampling": "100%"}`} {
		decode[SamplingState](t, do(t, h, "PUT", Prefix+"sampling", ok), 200)
	}
}
