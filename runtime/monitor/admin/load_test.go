package admin

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/runtime/internal/num"
	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// TestLoad runs many concurrent clients against a real loopback server while the
// program's own goroutines call probes: reads of every kind, rule additions (some
// switching a probe that is being called), sampling changes and bad requests. No
// request may fail unexpectedly and no rule addition may be lost. It logs the
// request rate.
func TestLoad(t *testing.T) {
	reset(t)
	clients, perClient := 32, 200
	if testing.Short() || raceEnabled() {
		// The race detector slows the server about tenfold; fewer requests
		// per client keep the same concurrency in a bounded time.
		perClient = 50
	}
	const token = "load-test"
	s, err := Start(settings.Admin{Listen: "127.0.0.1:0", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base := "http://" + s.Addr().String()

	// The program's own load: one goroutine calling probes flat out, which on a
	// 2-core machine leaves the server about one core.
	stop := make(chan struct{})
	var calls atomic.Uint64
	var work sync.WaitGroup
	for left := 1; left > 0; left-- {
		work.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for i := range probes {
					call(&probes[i], nil)
				}
				calls.Add(uint64(len(probes)))
			}
		})
	}

	client := &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients},
	}
	// request sends one request; its status must be want, or also full when
	// full is not 0 (a rule addition once the manual rules are at their limit).
	request := func(method, path, body string, want int, full ...int) error {
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			return err
		}
		if method != "GET" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("%s %s: reading the reply: %v", method, path, err)
		}
		if resp.StatusCode != want && !slices.Contains(full, resp.StatusCode) {
			return fmt.Errorf("%s %s: %s; want %d: %s", method, path, resp.Status, want, b)
		}
		if resp.StatusCode != want {
			return errFull
		}
		return nil
	}

	added := make([][]string, clients)
	var refused atomic.Int64
	errs := make(chan error, clients)
	callsBefore := calls.Load()
	began := time.Now()
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		c := c
		wg.Go(func() {
			for i := 0; i < perClient; i++ {
				var err error
				switch i % 10 {
				case 0:
					// Unique per request; every fifth one also switches Ping, which
					// the program is calling.
					pat := fmt.Sprintf("execution(* test.example/load.C%dN%d(..))", c, i)
					if i%50 == 0 {
						pat += " || execution(* test.example/shop.Ping(..))"
					}
					mode := []string{"coarse", "fine", "off"}[(c+i)%3]
					body := fmt.Sprintf(`{"pattern": %q, "mode": %q}`, pat, mode)
					switch err = request("POST", Prefix+"rules", body, 201, 409); err {
					case nil:
						added[c] = append(added[c], pat)
					case errFull:
						refused.Add(1)
						err = nil
					}
				case 1:
					err = request("GET", Prefix+"stats?sort=count&top=5", "", 200)
				case 2:
					err = request("GET", "/metrics", "", 200)
				case 3:
					err = request("GET", Prefix+"probes?"+url.Values{"pointcut": {"execution(* test.example/shop.(*Store).*(..))"}}.Encode(), "", 200)
				case 4:
					err = request("PUT", Prefix+"sampling", fmt.Sprintf(`{"sampling": %v}`, float64(i%11)/10), 200)
				case 5:
					err = request("GET", Prefix+"rules", "", 200)
				case 6:
					err = request("GET", Prefix+"health", "", 200)
				case 7:
					err = request("GET", Prefix+"writer", "", 200)
				case 8:
					err = request("POST", Prefix+"rules", `{"pattern": "execution(* broken", "mode": "fine"}`, 400)
				case 9:
					err = request("PUT", Prefix+"sampling", `{"sampling": 2}`, 400)
				}
				if err != nil {
					errs <- fmt.Errorf("client %d, request %d: %w", c, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(began)
	callsDuring := calls.Load() - callsBefore
	close(stop)
	work.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	total := clients * perClient
	t.Logf("%d clients × %d requests in %v: %.0f requests/s; the program made %d probed calls meanwhile",
		clients, perClient, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds(), callsDuring)

	// No lost updates: every rule a client added is there, once.
	_, manual := monitor.Rules()
	have := map[string]int{}
	for _, r := range manual {
		have[r.Pattern]++
	}
	n := 0
	for c := range added {
		for _, pat := range added[c] {
			n++
			if have[pat] != 1 {
				t.Errorf("rule %q present %d times; want 1", pat, have[pat])
			}
		}
	}
	// Additions were refused only at the limit of manual rules.
	if want := num.Min(total/10, settings.MaxRules); n != want || len(manual) != n || int64(n)+refused.Load() != int64(total/10) {
		t.Errorf("%d rules added, %d refused, %d manual rules present; want %d added", n, refused.Load(), len(manual), want)
	}
	if callsDuring == 0 {
		t.Error("the program's goroutines made no calls during the load: they were blocked")
	}
}

// errFull is request's error for the alternative status it accepted.
var errFull = errors.New("refused: at the limit")

// raceEnabled reports whether the test binary was built with -race.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}
