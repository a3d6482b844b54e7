package dash

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// Finding Chromium, or installing Debian's.

var (
	installOnce sync.Once
	installLog  string
)

// chromium returns the Chromium to drive: $TIGRIS_CHROMIUM, else chromium
// (or chromium-browser, google-chrome) on PATH. Missing, it is installed
// from the distribution's packages (apt-get install chromium) when this
// process may (root on a system with apt-get); where that is impossible the
// test is skipped with the reason, unless TIGRIS_REQUIRE_BROWSER is set (CI
// sets it: there, a browser test that cannot run is a failure).
func chromium(t *testing.T) string {
	t.Helper()
	if p := find(); p != "" {
		return p
	}
	why := ""
	switch _, err := exec.LookPath("apt-get"); {
	case err != nil:
		why = "no chromium on PATH and no apt-get to install it"
	case os.Geteuid() != 0:
		why = "no chromium on PATH, and installing it (apt-get install chromium) needs root"
	default:
		installOnce.Do(func() { installLog = install() })
		if p := find(); p != "" {
			return p
		}
		why = "no chromium on PATH, and apt-get install chromium failed:\n" + installLog
	}
	if os.Getenv("TIGRIS_REQUIRE_BROWSER") != "" {
		t.Fatalf("TIGRIS_REQUIRE_BROWSER is set but the browser test cannot run: %s", why)
	}
	t.Skipf("skipping the browser test: %s (set TIGRIS_CHROMIUM to a Chromium, or install Debian's chromium package)", why)
	return ""
}

func find() string {
	if p := os.Getenv("TIGRIS_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// install runs apt-get and returns its output.
func install() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var out strings.Builder
	for _, args := range [][]string{{"update", "-qq"}, {"install", "-y", "-qq", "--no-install-recommends", "chromium"}} {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			out.WriteString("apt-get " + strings.Join(args, " ") + ": " + err.Error() + "\n")
			break
		}
	}
	s := out.String()
	if len(s) > 4000 {
		s = "…" + s[len(s)-4000:]
	}
	return s
}
