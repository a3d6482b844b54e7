package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tigrisgo/tigris/export/otlptest"
)

func TestExportCommand(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "off") // the command would set the process's limit
	dir := t.TempDir()
	path := writeTrace(t, dir)
	r := otlptest.New(t)
	stdout, stderr, err := tigris(t, "export", "--once", "--quiet", "--endpoint", r.URL, "--service-name", "app", "--resource", "deployment.environment.name=test", path)
	if err != nil {
		t.Fatalf("export: %v\n%s%s", err, stdout, stderr)
	}
	if !strings.Contains(stdout, "3 records read, 3 spans sent in 1 requests, 0 not delivered, 0 pending") {
		t.Errorf("summary:\n%s", stdout)
	}
	spans := r.Spans()
	if len(spans) != 3 {
		t.Fatalf("%d spans received", len(spans))
	}
	for _, sp := range spans {
		if sp.Resource["service.name"] != "app" || sp.Resource["deployment.environment.name"] != "test" {
			t.Errorf("resource %v", sp.Resource)
		}
	}
	// The checkpoint went beside the trace; a second run sends nothing again.
	if stdout, _, err = tigris(t, "export", "--once", "--quiet", "--endpoint", r.URL, path); err != nil || !strings.Contains(stdout, " 3 spans sent") {
		t.Errorf("second run: %v\n%s", err, stdout)
	}
	if n, dups := r.Count(); n != 3 || dups != 0 {
		t.Errorf("after a second run: %d spans, %d twice", n, dups)
	}

	// A receiver that refuses: the spans are counted, the exit status says so.
	r.Status.Store(http.StatusBadRequest)
	other := t.TempDir()
	stdout, _, err = tigris(t, "export", "--once", "--quiet", "--endpoint", r.URL, "--checkpoint", filepath.Join(other, "ckpt"), path)
	if err == nil || !strings.Contains(err.Error(), "3 spans were not delivered") || !strings.Contains(stdout, "3 not delivered") {
		t.Errorf("refused: %v\n%s", err, stdout)
	}
	if _, _, err := tigris(t, "export", "--compression", "zstd", path); err == nil || !strings.Contains(err.Error(), "--compression") {
		t.Errorf("--compression zstd: %v", err)
	}
}

// TestExportCompressionFlagWins: --compression overrides
// OTEL_EXPORTER_OTLP_COMPRESSION, which applies when the flag is not given.
func TestExportCompressionFlagWins(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "off")
	t.Setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
	var mu sync.Mutex
	var encodings []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		encodings = append(encodings, r.Header.Get("Content-Encoding"))
		mu.Unlock()
	}))
	defer srv.Close()
	path := writeTrace(t, t.TempDir())
	for _, c := range []struct {
		args []string
		want string
	}{{nil, "gzip"}, {[]string{"--compression", "none"}, ""}, {[]string{"--compression", "gzip"}, "gzip"}} {
		mu.Lock()
		encodings = nil
		mu.Unlock()
		args := append([]string{"export", "--once", "--quiet", "--checkpoint", "none", "--endpoint", srv.URL}, c.args...)
		if stdout, stderr, err := tigris(t, append(args, path)...); err != nil {
			t.Fatalf("%v: %v\n%s%s", c.args, err, stdout, stderr)
		}
		mu.Lock()
		if len(encodings) == 0 || encodings[0] != c.want {
			t.Errorf("%v with OTEL_EXPORTER_OTLP_COMPRESSION=gzip: Content-Encoding %q, want %q", c.args, encodings, c.want)
		}
		mu.Unlock()
	}
}
