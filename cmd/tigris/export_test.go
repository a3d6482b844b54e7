package main

import (
	"net/http"
	"path/filepath"
	"strings"
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
