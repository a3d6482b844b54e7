package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestMain fails the package if a Run left a goroutine behind.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := waitForLeaks(2 * time.Second); leaked != "" {
			fmt.Fprintf(os.Stderr, "leaked goroutines:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

func waitForLeaks(wait time.Duration) string {
	deadline := time.Now().Add(wait)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var leaked []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "loadgen.(*run)") {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 || time.Now().After(deadline) {
			return strings.Join(leaked, "\n\n")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// fast returns options for a quick run against url.
func fast(url string) Options {
	return Options{BaseURL: url, ThinkTime: time.Millisecond, Interval: 20 * time.Millisecond, Timeout: 5 * time.Second, Seed: 7}
}

func TestRefusesNonLoopbackTargets(t *testing.T) {
	for _, u := range []string{
		"http://example.com",
		"http://example.com:8080/petclinic",
		"http://10.0.0.1:8080",
		"http://192.168.1.20",
		"http://0.0.0.0:8080",
		"http://[::]:8080",
		"http://[2001:db8::1]:80",
		"http://localhost.example.com",
		"http://127.0.0.1.nip.io",
	} {
		t.Run(u, func(t *testing.T) {
			start := time.Now()
			_, err := Run(context.Background(), Options{BaseURL: u, Requests: 10})
			if err == nil {
				t.Fatalf("Run(%q) = nil error, want a refusal", u)
			}
			if !errors.Is(err, ErrNotLoopback) {
				t.Errorf("Run(%q) = %v, want ErrNotLoopback", u, err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("refusal took %v: did it try to connect?", d)
			}
		})
	}
}

func TestAcceptsLoopbackTargets(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:1", "http://127.1.2.3:1", "http://[::1]:1", "http://localhost:1", "http://LOCALHOST:1/prefix/"} {
		if _, base, err := (Options{BaseURL: u, Requests: 1}).withDefaults(); err != nil {
			t.Errorf("%q refused: %v", u, err)
		} else if strings.HasSuffix(base.Path, "/") {
			t.Errorf("%q: base path %q keeps its trailing slash", u, base.Path)
		}
	}
	for _, u := range []string{"ftp://127.0.0.1", "127.0.0.1:8080", "http://127.0.0.1/?x=1", "http:///api"} {
		if _, _, err := (Options{BaseURL: u, Requests: 1}).withDefaults(); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
}

func TestDialerRefusesNonLoopback(t *testing.T) {
	d := &net.Dialer{Timeout: time.Second}
	for _, addr := range []string{"10.1.2.3:80", "example.com:80", "[2001:db8::1]:443"} {
		if _, err := dialLoopback(context.Background(), d, "tcp", addr); !errors.Is(err, ErrNotLoopback) {
			t.Errorf("dialLoopback(%q) = %v, want ErrNotLoopback", addr, err)
		}
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/health", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) })
	mux.HandleFunc("GET /api/vets", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://192.0.2.1/api/vets", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	o := fast(srv.URL)
	o.Requests = 20
	o.Patterns = []Pattern{{Name: "vets", Start: Vets, Table: map[Action][]Step{Vets: {{Vets, 1}}}}}
	s, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status[http.StatusFound] != 20 || s.Errors != 20 {
		t.Errorf("statuses %v, errors %d; want 20 × 302 counted as errors", s.Status, s.Errors)
	}
}

func TestInvalidOptions(t *testing.T) {
	ok := "http://127.0.0.1:1"
	bad := []Pattern{{Name: "p", Start: Vets, Table: map[Action][]Step{
		Vets:       {{FindOwners, 1}, {"teleport", 1}},
		FindOwners: {{Vets, 0}},
		"nowhere":  {{Vets, 1}},
	}}}
	for name, o := range map[string]Options{
		"no stop":       {BaseURL: ok},
		"negative":      {BaseURL: ok, Duration: -time.Second},
		"min > max":     {BaseURL: ok, Requests: 1, MinUsers: 5, MaxUsers: 3},
		"no patterns":   {BaseURL: ok, Requests: 1, Patterns: []Pattern{}},
		"bad pattern":   {BaseURL: ok, Requests: 1, Patterns: bad},
		"dead end":      {BaseURL: ok, Requests: 1, Patterns: []Pattern{{Name: "p", Start: Vets, Table: map[Action][]Step{Vets: {{Health, 1}}}}}},
		"duplicate":     {BaseURL: ok, Requests: 1, Patterns: slices.Concat(DefaultPatterns(), DefaultPatterns()[:1])},
		"negative step": {BaseURL: ok, Requests: 1, UserStep: -1},
	} {
		if _, err := Run(context.Background(), o); err == nil {
			t.Errorf("%s: Run accepted %+v", name, o)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	_, _, err := (Options{BaseURL: ok, Requests: 1, Patterns: bad}).withDefaults()
	for _, want := range []string{`"teleport"`, `weight 0`, `"nowhere"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad pattern error %v does not mention %s", err, want)
		}
	}
}

func TestDefaultPatternsAreValid(t *testing.T) {
	if err := validatePatterns(DefaultPatterns()); err != nil {
		t.Fatal(err)
	}
}

func TestUnreachableTarget(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if _, err := Run(context.Background(), Options{BaseURL: "http://" + addr, Requests: 5}); err == nil || !strings.Contains(err.Error(), "not reachable") {
		t.Errorf("Run against a closed port = %v, want 'not reachable'", err)
	}
}

func TestStopsAtRequestTarget(t *testing.T) {
	f, srv := newFakeClinic(t, 0)
	o := fast(srv.URL)
	o.Requests = 537
	o.MinUsers, o.MaxUsers = 5, 20
	s, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests != 537 {
		t.Errorf("Stats.Requests = %d, want 537", s.Requests)
	}
	if got := f.requests.Load(); got != 537+1 { // + the health check before the start
		t.Errorf("the server saw %d requests, want 538", got)
	}
	var sum, perEndpoint int64
	for _, n := range s.Status {
		sum += n
	}
	for _, e := range s.Endpoints {
		perEndpoint += e.Requests
	}
	if sum != s.Requests || perEndpoint != s.Requests {
		t.Errorf("status counts add up to %d and endpoint counts to %d, want %d", sum, perEndpoint, s.Requests)
	}
	if s.Throughput <= 0 || s.Latency.P50 <= 0 || s.Latency.Max < s.Latency.P99 || s.Latency.P99 < s.Latency.P50 {
		t.Errorf("implausible summary: %v", s)
	}
	t.Log(s)
}

func TestStopsAtDuration(t *testing.T) {
	f, srv := newFakeClinic(t, time.Millisecond)
	o := fast(srv.URL)
	o.Duration = 300 * time.Millisecond
	start := time.Now()
	s, err := Run(context.Background(), o)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if took < 300*time.Millisecond || took > 3*time.Second {
		t.Errorf("a 300ms run took %v", took)
	}
	if s.Requests == 0 || s.Requests != f.requests.Load()-1 {
		t.Errorf("Stats.Requests = %d, server saw %d (+1 health check)", s.Requests, f.requests.Load())
	}
	if s.Elapsed < 300*time.Millisecond {
		t.Errorf("Elapsed = %v, want at least the duration", s.Elapsed)
	}
}

func TestCancel(t *testing.T) {
	_, srv := newFakeClinic(t, 2*time.Millisecond)
	o := fast(srv.URL)
	o.Duration = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	s, err := Run(ctx, o)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run = %v, want the context's error", err)
	}
	if time.Since(start) > 3*time.Second {
		t.Errorf("cancelled run took %v to return", time.Since(start))
	}
	if s.Requests == 0 {
		t.Error("no statistics returned with the context's error")
	}
	if s.Status[0] != 0 {
		t.Errorf("%d abandoned requests counted as failures", s.Status[0])
	}
}

func TestUserCountStaysWithinBounds(t *testing.T) {
	f, srv := newFakeClinic(t, 2*time.Millisecond)
	o := fast(srv.URL)
	o.MinUsers, o.MaxUsers, o.UserStep = 3, 9, 4
	o.Interval = 5 * time.Millisecond
	o.Duration = 600 * time.Millisecond
	var (
		mu   sync.Mutex
		seen []int
	)
	o.Progress = func(s Stats) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, s.Users)
	}
	s, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	distinct := map[int]bool{}
	for _, n := range seen {
		distinct[n] = true
		if n < 3 || n > 9 {
			t.Errorf("Progress saw %d users, want within [3, 9]", n)
		}
	}
	if len(seen) < 10 || len(distinct) < 3 {
		t.Errorf("user counts %v: want many progress calls and a changing count", seen)
	}
	if s.MinUsers < 3 || s.MaxUsers > 9 || s.MinUsers > s.MaxUsers {
		t.Errorf("Stats users range [%d, %d], want within [3, 9]", s.MinUsers, s.MaxUsers)
	}
	if m := f.maxInFlight.Load(); m > 9 {
		t.Errorf("the server saw %d requests in flight at once, want at most MaxUsers = 9", m)
	}
	var started int64
	for _, n := range s.UsersStarted {
		started += n
	}
	if started <= 9 {
		t.Errorf("only %d users started: users were never replaced", started)
	}
}

func TestWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cur, hitLo, hitHi := 5, false, false
	for range 10_000 {
		next := walk(rng, cur, 5, 20, 10)
		if next < 5 || next > 20 {
			t.Fatalf("walk(%d) = %d, outside [5, 20]", cur, next)
		}
		if d := next - cur; d == 0 && cur != 5 && cur != 20 || d > 10 || d < -10 {
			t.Fatalf("walk(%d) = %d: step %d not in ±[1, 10]", cur, next, d)
		}
		hitLo, hitHi = hitLo || next == 5, hitHi || next == 20
		cur = next
	}
	if !hitLo || !hitHi {
		t.Errorf("the walk never reached a bound (low %v, high %v)", hitLo, hitHi)
	}
	if got := walk(rng, 7, 7, 7, 0); got != 7 {
		t.Errorf("walk with min = max = 7 gave %d", got)
	}
}

func TestProgressAtMostOncePerInterval(t *testing.T) {
	_, srv := newFakeClinic(t, 0)
	o := fast(srv.URL)
	o.Interval = 50 * time.Millisecond
	o.Duration = 520 * time.Millisecond
	var calls int
	var last Stats
	o.Progress = func(s Stats) { calls++; last = s }
	s, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	// A ticker drops the ticks a busy machine misses, so a loaded run may
	// see fewer; never more than one an interval.
	if calls < 1 || calls > 11 {
		t.Errorf("Progress called %d times in 520ms at a 50ms interval, want 1 to 11", calls)
	}
	if last.Requests > s.Requests || last.Users == 0 {
		t.Errorf("last progress %v inconsistent with the final %v", last, s)
	}
}

func TestDefaultWorkloadExercisesEveryEndpoint(t *testing.T) {
	f, srv := newFakeClinic(t, 0)
	o := fast(srv.URL)
	o.ThinkTime = -1
	o.Requests = 3000
	s, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range []string{"GET /api/health", "GET /api/vets", "GET /api/pettypes", "GET /api/owners",
		"GET /api/owners/{id}", "PUT /api/owners/{id}", "POST /api/owners", "POST /api/owners/{id}/pets",
		"POST /api/owners/{id}/pets/{petId}/visits", "GET /api/reports/visits"} {
		if s.Endpoints[ep].Requests == 0 {
			t.Errorf("endpoint %s never requested", ep)
		}
	}
	// The only errors are lookups of unknown owners: every body sent is valid.
	for code, n := range s.ErrorsByStatus() {
		if code != 404 {
			t.Errorf("%d answers with status %d (last error %q)", n, code, s.LastError)
		}
	}
	if s.Endpoints["GET /api/owners/{id}"].Errors == 0 || s.Errors != s.Endpoints["GET /api/owners/{id}"].Errors {
		t.Errorf("want some 404s, all from owner lookups: %v", s)
	}
	// The hot spot is hot and the report is rare.
	vets, report := s.Endpoints["GET /api/vets"].Requests, s.Endpoints["GET /api/reports/visits"].Requests
	if vets < 5*report || report*100 > s.Requests*5 {
		t.Errorf("vets %d, report %d of %d requests: want vets frequent and the report rare", vets, report, s.Requests)
	}
	if f.count("PUT /api/owners/{id}") != s.Endpoints["PUT /api/owners/{id}"].Requests {
		t.Errorf("server and client disagree on PUT count")
	}
	var b strings.Builder
	s.WriteTable(&b)
	t.Logf("%v\n%s", s, b.String())
}

func TestPatternNextFollowsWeights(t *testing.T) {
	p := Pattern{Name: "p", Start: Vets, Table: map[Action][]Step{Vets: {{Vets, 1}, {Health, 3}}, Health: {{Vets, 1}}}}
	rng := rand.New(rand.NewPCG(3, 4))
	counts := map[Action]int{}
	for range 40_000 {
		counts[p.next(Vets, rng)]++
	}
	if share := float64(counts[Health]) / 40_000; math.Abs(share-0.75) > 0.01 {
		t.Errorf("Health chosen %.3f of the time, want 0.75", share)
	}
	ps := []Pattern{{Name: "a", Weight: 1}, {Name: "b", Weight: 0}, {Name: "c", Weight: 2}}
	picks := map[string]int{}
	for range 40_000 {
		picks[pickPattern(ps, rng).Name]++
	}
	for name, want := range map[string]float64{"a": 0.25, "b": 0.25, "c": 0.5} {
		if share := float64(picks[name]) / 40_000; math.Abs(share-want) > 0.01 {
			t.Errorf("pattern %s picked %.3f of the time, want %.2f", name, share, want)
		}
	}
}

func TestHistogramQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var h histogram
	var xs []float64
	for range 100_000 {
		d := time.Duration(math.Exp(rng.NormFloat64()*1.5) * float64(time.Millisecond))
		h.add(d)
		xs = append(xs, float64(d))
	}
	sort.Float64s(xs)
	l := h.latency()
	for q, got := range map[float64]time.Duration{0.5: l.P50, 0.9: l.P90, 0.95: l.P95, 0.99: l.P99} {
		want := xs[int(q*float64(len(xs)))-1]
		if rel := math.Abs(float64(got)-want) / want; rel > 0.02 {
			t.Errorf("p%g = %v, exact %v: off by %.1f%%", q*100, got, time.Duration(want), rel*100)
		}
	}
	if l.Max != time.Duration(xs[len(xs)-1]) {
		t.Errorf("Max = %v, want %v", l.Max, time.Duration(xs[len(xs)-1]))
	}
	for _, v := range []uint64{0, 1, 63, 64, 65, 127, 128, 1000, 1 << 40, math.MaxInt64} {
		i := bucketOf(v)
		if i < 0 || i >= histBuckets {
			t.Fatalf("bucketOf(%d) = %d out of range", v, i)
		}
		if mid := bucketMid(i); bucketOf(mid) != i {
			t.Errorf("bucketMid(%d) = %d lies in bucket %d", i, mid, bucketOf(mid))
		}
	}
	var empty histogram
	if empty.latency() != (Latency{}) {
		t.Error("empty histogram has a latency")
	}
}

func TestTimeoutsCountAsNoAnswer(t *testing.T) {
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/health", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) })
	mux.HandleFunc("GET /api/vets", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(release)
	o := fast(srv.URL)
	o.Requests, o.MinUsers, o.MaxUsers = 4, 2, 2
	o.Timeout = 50 * time.Millisecond
	o.Patterns = []Pattern{{Name: "vets", Start: Vets, Table: map[Action][]Step{Vets: {{Vets, 1}}}}}
	s, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status[0] != 4 || s.Errors != 4 || !strings.Contains(s.LastError, "timeout") {
		t.Errorf("statuses %v, errors %d, last error %q; want 4 timeouts", s.Status, s.Errors, s.LastError)
	}
}

// TestTraceHook: Trace sees every request of the users, not the health
// check, with its endpoint; what it adds reaches the server, and done gets
// each request's status.
func TestTraceHook(t *testing.T) {
	f, _ := newFakeClinic(t, 0)
	var headers atomic.Int64
	routes := f.routes()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Traceparent") != "" {
			headers.Add(1)
		}
		routes.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	o := fast(srv.URL)
	o.Requests = 200
	var mu sync.Mutex
	endpoints, statuses := map[string]int{}, map[int]int64{}
	o.Trace = func(req *http.Request, endpoint string) func(int) {
		req.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
		mu.Lock()
		endpoints[endpoint]++
		mu.Unlock()
		return func(status int) {
			mu.Lock()
			statuses[status]++
			mu.Unlock()
		}
	}
	s, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if headers.Load() != s.Requests {
		t.Errorf("%d requests carried the header, want %d", headers.Load(), s.Requests)
	}
	for e, st := range s.Endpoints {
		if int64(endpoints[e]) != st.Requests {
			t.Errorf("endpoint %s: Trace saw %d requests, the statistics %d", e, endpoints[e], st.Requests)
		}
	}
	for code, n := range s.Status {
		if statuses[code] != n {
			t.Errorf("status %d: done got %d, the statistics %d", code, statuses[code], n)
		}
	}
}
