package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tigrisgo/tigris/export"
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
	if strings.Contains(stdout, "earlier runs") || strings.Contains(stdout, " = ") {
		t.Errorf("a first run that sent every record it read explains more:\n%s", stdout)
	}
	// The checkpoint went beside the trace, and the lock file went with
	// the run; a second run sends nothing again, and says so.
	ckpt := filepath.Join(dir, "tigris-export.checkpoint")
	if _, err := os.Stat(ckpt + ".lock"); !os.IsNotExist(err) {
		t.Errorf("the checkpoint's lock file is left behind (%v)", err)
	}
	stdout, _, err = tigris(t, "export", "--once", "--quiet", "--endpoint", r.URL, path)
	if err != nil || !strings.Contains(stdout, "export: 1 streams, 0 records read, 0 spans sent in 0 requests, 0 not delivered, 0 pending (in the checkpoint)\n") ||
		!strings.Contains(stdout, "export: skipped what earlier runs did (checkpoint "+ckpt+"): 3 records read, 3 spans sent, 0 not delivered\n") {
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

// TestExportSummaryAddsUp: records that are no span yet are counted as
// held, and what a checkpoint carried in joins this run's records, so the
// balance line adds up; without a checkpoint, held records are said lost.
func TestExportSummaryAddsUp(t *testing.T) {
	var b strings.Builder
	printExportStats(&b, export.Stats{Streams: 2, Records: 95787, SpansSent: 93186, Requests: 12, RecordsHeld: 2601}, "out/tigris-export.checkpoint")
	if want := "export: 2 streams, 95787 records read, 93186 spans sent in 12 requests, 0 not delivered, 0 pending (in the checkpoint)\n" +
		"export: 95787 records read = 93186 spans sent + 0 not delivered + 0 pending + 2601 records held (in the checkpoint: calls of traces not ended, their root still running or their records settling)\n"; !strings.HasPrefix(b.String(), want) {
		t.Errorf("live run:\n%s\nwant it to begin:\n%s", b.String(), want)
	}
	b.Reset()
	earlier := &export.Stats{Records: 95787, SpansSent: 93186, Requests: 12, RecordsHeld: 2601}
	printExportStats(&b, export.Stats{Streams: 2, Records: 95787 + 10, SpansSent: 93186 + 2611, Requests: 13, Earlier: earlier}, "ckpt")
	if want := "export: 2 streams, 10 records read, 2611 spans sent in 1 requests, 0 not delivered, 0 pending (in the checkpoint)\n" +
		"export: skipped what earlier runs did (checkpoint ckpt): 95787 records read, 93186 spans sent, 0 not delivered\n" +
		"export: 10 records read + 2601 carried in by the checkpoint (0 spans pending, 2601 records held) = 2611 spans sent + 0 not delivered + 0 pending + 0 records held (in the checkpoint: "; !strings.HasPrefix(b.String(), want) {
		t.Errorf("resumed run:\n%s\nwant it to begin:\n%s", b.String(), want)
	}
	b.Reset()
	printExportStats(&b, export.Stats{Streams: 1, Records: 5, SpansSent: 3, Requests: 1, RecordsHeld: 2}, "")
	if !strings.Contains(b.String(), "0 pending (lost: no checkpoint)\n") || !strings.Contains(b.String(), "+ 2 records held (lost: no checkpoint: ") {
		t.Errorf("without a checkpoint:\n%s", b.String())
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
