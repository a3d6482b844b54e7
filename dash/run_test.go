package dash

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/runtime/settings"
)

// syncBuffer is a buffer Run writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runDash runs Run on the shop trace with listen until it printed its
// address, and returns its output.
func runDash(t *testing.T, listen string) (stdout, stderr string) {
	return runDashWith(t, Config{Listen: listen})
}

// runDashWith is runDash with cfg's other settings.
func runDashWith(t *testing.T, cfg Config) (stdout, stderr string) {
	var out, errOut syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	cfg.Target, cfg.Analysis, cfg.Stdout, cfg.Stderr = writeTrace(t, shopDefs, shopRecords), settings.Default().Analysis, &out, &errOut
	go func() {
		done <- Run(ctx, cfg)
	}()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(out.String(), "http://") && time.Now().Before(deadline); {
		select {
		case err := <-done:
			t.Fatalf("Run ended: %v\n%s%s", err, out.String(), errOut.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String()
}

// TestRunLoopbackByDefault: without --listen the page is served on loopback,
// and an address that is not loopback is served only with a warning.
func TestRunLoopbackByDefault(t *testing.T) {
	out, errOut := runDash(t, "")
	if !regexp.MustCompile(`^tigris dash: http://127\.0\.0\.1:\d+/ \(trace .*shop\.tgr: 7 records summarized in .*; Ctrl-C to stop\)\n$`).MatchString(out) || errOut != "" {
		t.Errorf("default listen: stdout %q, stderr %q", out, errOut)
	}
	out, errOut = runDash(t, "0.0.0.0:0")
	if !strings.Contains(errOut, "which is not loopback: whoever reaches it sees the program and can switch its probes") || !strings.Contains(out, "http://127.0.0.1:") {
		t.Errorf("listen on all interfaces: stdout %q, stderr %q", out, errOut)
	}
}

func TestRunBadTarget(t *testing.T) {
	for target, want := range map[string]string{
		"nope.tgr":       "nope.tgr: no such trace file",
		"not an address": "neither a trace file nor an admin address",
		"127.0.0.1:1":    "no tigris admin endpoint at 127.0.0.1:1",
	} {
		err := Run(context.Background(), Config{Target: target, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Run(%q): %v, want %q", target, err, want)
		}
	}
}

// TestRunOpen: --open hands the page's address to the desktop's launcher
// (here a stand-in xdg-open), and says what to do where there is none.
func TestRunOpen(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the launcher stand-in is a shell script for xdg-open")
	}
	dir := t.TempDir()
	opened := filepath.Join(dir, "opened")
	script := "#!/bin/sh\nprintf '%s' \"$1\" > " + opened + "\n"
	if err := os.WriteFile(filepath.Join(dir, "xdg-open"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	t.Setenv("DISPLAY", ":99")
	t.Setenv("WAYLAND_DISPLAY", "")
	out, errOut := runDashWith(t, Config{Open: true})
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(out)
	var got []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got, _ = os.ReadFile(opened); len(got) > 0 {
			break
		}
	}
	if url == "" || string(got) != url || errOut != "" {
		t.Errorf("--open: printed %q, the launcher got %q; stderr %q", out, got, errOut)
	}

	t.Setenv("DISPLAY", "")
	_, errOut = runDashWith(t, Config{Open: true})
	if !strings.Contains(errOut, "no display to open a browser on; open http://127.0.0.1:") {
		t.Errorf("--open without a display: stderr %q", errOut)
	}
}
