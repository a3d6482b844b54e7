package app_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/bench/evaluation/loadgen"
	"github.com/tigrisgo/tigris/examples/petclinic/internal/app"
)

// start runs the app on a free port and returns its URL and a function that stops it
// and returns Run's error.
func start(t *testing.T, db string) (string, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- app.Run(ctx, app.Config{Addr: "127.0.0.1:0", DB: db, Stdout: pw})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("no address announced: %v (Run: %v)", err, <-done)
	}
	go io.Copy(io.Discard, pr)
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") || strings.HasSuffix(url, ":0") {
		cancel()
		t.Fatalf("announced %q, want 'listening on http://127.0.0.1:PORT'", line)
	}
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(15 * time.Second):
			t.Fatal("Run did not return after its context ended")
			return nil
		}
	}
	t.Cleanup(func() { stop() })
	return url, stop
}

func TestRunServesAndShutsDown(t *testing.T) {
	url, stop := start(t, "")
	resp, err := http.Get(url + "/api/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("health: %s", resp.Status)
	}
	if err := stop(); err != nil {
		t.Fatalf("Run after a graceful shutdown = %v, want nil", err)
	}
	if _, err := http.Get(url + "/api/health"); err == nil {
		t.Error("the server still answers after Run returned")
	}
}

func TestRunReportsListenErrors(t *testing.T) {
	url, _ := start(t, "")
	addr := strings.TrimPrefix(url, "http://")
	err := app.Run(context.Background(), app.Config{Addr: addr})
	if err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("Run on a busy port = %v", err)
	}
}

// TestUnderLoad drives the real service with the paper's workload generator, with the
// in-memory database (one connection) and a file database (WAL, several connections).
func TestUnderLoad(t *testing.T) {
	for _, db := range []string{":memory:", "temp"} {
		t.Run(db, func(t *testing.T) {
			url, stop := start(t, db)
			requests := int64(1500)
			if testing.Short() {
				requests = 300
			}
			stats, err := loadgen.Run(context.Background(), loadgen.Options{
				BaseURL:   url,
				Requests:  requests,
				ThinkTime: -1,
				Interval:  50 * time.Millisecond,
				Seed:      3,
			})
			if err != nil {
				t.Fatal(err)
			}
			if stats.Requests != requests {
				t.Errorf("%d requests completed, want %d", stats.Requests, requests)
			}
			for code, n := range stats.ErrorsByStatus() {
				if code != http.StatusNotFound {
					t.Errorf("%d answers with status %d (last error %q)", n, code, stats.LastError)
				}
			}
			if errs := stats.Endpoints["GET /api/owners/{id}"].Errors; errs != stats.Errors {
				t.Errorf("%d errors, %d from owner lookups: want every error to be an unknown owner", stats.Errors, errs)
			}
			var b strings.Builder
			stats.WriteTable(&b)
			t.Logf("%v\n%s", stats, b.String())
			if err := stop(); err != nil {
				t.Errorf("shutdown after load: %v", err)
			}
		})
	}
}
