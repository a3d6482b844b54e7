package export

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/integration/internal/itest"
)

// The Collector: built by the OpenTelemetry Collector Builder from published
// modules with the OTLP receiver and the otlphttp and debug exporters, the
// smallest distribution that receives OTLP, forwards it (to the test's
// receiver, which decodes what the Collector made of it) and prints it.
const (
	builderVersion = "v0.165.0"
	builderConfig  = `dist:
  name: otelcol-tigris
  description: OpenTelemetry Collector for the tigris export tests
  output_path: %s
receivers:
  - gomod: go.opentelemetry.io/collector/receiver/otlpreceiver v0.165.0
exporters:
  - gomod: go.opentelemetry.io/collector/exporter/debugexporter v0.165.0
  - gomod: go.opentelemetry.io/collector/exporter/otlphttpexporter v0.165.0
providers:
  - gomod: go.opentelemetry.io/collector/confmap/provider/fileprovider v1.71.0
  - gomod: go.opentelemetry.io/collector/confmap/provider/envprovider v1.71.0
`
)

var (
	collectorOnce sync.Once
	collectorBin  string
	collectorErr  string
	collectorSkip bool
)

// collector returns the Collector binary, building it the first time.
func collector(t *testing.T) string {
	t.Helper()
	itest.RequireGo(t)
	collectorOnce.Do(func() { collectorBin, collectorErr, collectorSkip = buildCollector(t) })
	if collectorSkip {
		t.Skipf("the OpenTelemetry Collector cannot be built here (the module proxy is not reachable):\n%s", collectorErr)
	}
	if collectorBin == "" {
		t.Fatalf("building the OpenTelemetry Collector:\n%s", collectorErr)
	}
	return collectorBin
}

func buildCollector(t *testing.T) (bin, failure string, skip bool) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256([]byte(builderConfig))
	dir := filepath.Join(cache, "tigris-itest", "otelcol-"+builderVersion+"-"+hex.EncodeToString(sum[:6]))
	bin = filepath.Join(dir, "otelcol-tigris")
	if itest.FileExists(bin) {
		return bin, "", false
	}
	start := time.Now()
	// The build runs outside the repository and its workspace, with the
	// go command's own caches.
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOFLAGS=") && !strings.HasPrefix(kv, "GOWORK=") {
			env = append(env, kv)
		}
	}
	env = append(env, "GOWORK=off", "GOBIN="+filepath.Join(dir, "bin"))
	run := func(name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err.Error(), false
	}
	builder := filepath.Join(dir, "bin", "builder")
	if !itest.FileExists(builder) {
		if out, err := run(itest.GoExe, "install", "go.opentelemetry.io/collector/cmd/builder@"+builderVersion); err != nil {
			return "", fmt.Sprintf("go install builder: %v\n%s", err, out), unreachable(out)
		}
	}
	work, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", err.Error(), false
	}
	defer os.RemoveAll(work)
	cfg := filepath.Join(work, "builder.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(builderConfig, filepath.Join(work, "dist"))), 0o644); err != nil {
		return "", err.Error(), false
	}
	if out, err := run(builder, "--config", cfg); err != nil {
		return "", fmt.Sprintf("builder: %v\n%s", err, tail(out, 4000)), unreachable(out)
	}
	// Rename into place: a build that dies half-way leaves no binary.
	if err := os.Rename(filepath.Join(work, "dist", "otelcol-tigris"), bin); err != nil {
		return "", err.Error(), false
	}
	t.Logf("built the OpenTelemetry Collector %s in %s: %s", builderVersion, time.Since(start).Round(time.Second), bin)
	return bin, "", false
}

func unreachable(out string) bool {
	for _, sign := range []string{"dial tcp", "no such host", "i/o timeout", "GOPROXY=off", "connection refused"} {
		if strings.Contains(out, sign) {
			return true
		}
	}
	return false
}

// TestCollectorBuild builds the Collector (or finds it built). CI runs it
// first with a long timeout, so the other tests find the binary.
func TestCollectorBuild(t *testing.T) {
	bin := collector(t)
	out, err := exec.Command(bin, "components").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "otlpreceiver "+builderVersion) || !strings.Contains(string(out), "otlphttpexporter "+builderVersion) {
		t.Errorf("%s components: %v\n%s", bin, err, out)
	}
}

// collectorConfig receives OTLP/HTTP on addr and forwards to sink (the
// test's receiver) and, for traces, to the debug exporter at basic verbosity
// (a line per batch: detailed verbosity formats every batch in full before
// its logger samples the lines out, which slowed the Collector to a few
// thousand spans a second).
func collectorConfig(t *testing.T, dir, addr, sink string) string {
	t.Helper()
	cfg := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
exporters:
  otlphttp:
    endpoint: %s
    compression: none
  debug:
    verbosity: basic
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [otlphttp, debug]
    metrics:
      receivers: [otlp]
      exporters: [otlphttp]
`, addr, sink)
	path := filepath.Join(dir, "otelcol.yaml")
	itest.WriteFile(t, path, cfg)
	return path
}

// startCollector starts the Collector and waits for its OTLP port.
func startCollector(t *testing.T, cfg, addr string) *proc {
	t.Helper()
	cmd := exec.Command(collector(t), "--config", cfg)
	p := start(t, "otelcol", cmd, nil)
	waitListening(t, addr, p)
	return p
}
