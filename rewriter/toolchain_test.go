package rewriter

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestSameRelease(t *testing.T) {
	for _, tc := range []struct {
		build, self string
		ok          bool
	}{
		{"go1.26.8", "go1.26.8", true},
		{"go1.26.1", "go1.26.8", true},
		{"go1.27rc1", "go1.27.3", true},
		{"go1.27.3", "go1.26.8", false},
		{"go1.26.8", "go1.27.0", false},
		{"devel go1.28-abcdef", "go1.27.3", true}, // not checked
	} {
		err := sameRelease(tc.build, tc.self, "v1.4.2")
		if (err == nil) != tc.ok {
			t.Errorf("sameRelease(%q, %q) = %v", tc.build, tc.self, err)
		}
		if err != nil && (strings.Count(err.Error(), "\n") > 0 || !strings.Contains(err.Error(), "(GOTOOLCHAIN="+tc.build+" go install github.com/tigrisgo/tigris/cmd/tigris@v1.4.2)")) {
			t.Errorf("the message is not one line naming the command to type: %v", err)
		}
	}
	// A build in a checkout: the checkout's go line would pick tigris's own
	// release again, so the command names the toolchain too.
	err := sameRelease("go1.27.3", "go1.26.8", "")
	if want := "(GOTOOLCHAIN=go1.27.3 go install ./cmd/tigris in tigris's checkout)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("checkout: %v; want it to say %s", err, want)
	}
}

// TestSameReleaseKeepsBoth: go install replaces the tigris in GOBIN, so the
// message says so, and how a second one is kept for the other release.
func TestSameReleaseKeepsBoth(t *testing.T) {
	for version, install := range map[string]string{
		"v1.4.2": "github.com/tigrisgo/tigris/cmd/tigris@v1.4.2)",
		"":       "./cmd/tigris in tigris's checkout)",
	} {
		err := sameRelease("go1.27.3", "go1.26.8", version)
		if err == nil {
			t.Fatal("no error for another release")
		}
		msg := err.Error()
		for _, want := range []string{
			"that replaces the installed tigris (built with go1.26)",
			"(GOBIN=$HOME/go/bin/go1.27 GOTOOLCHAIN=go1.27.3 go install " + install,
			"run $HOME/go/bin/go1.27/tigris for go1.27 builds",
		} {
			if !strings.Contains(msg, want) {
				t.Errorf("version %q: %s\nwant it to say %s", version, msg, want)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("version %q: not one line: %s", version, msg)
		}
	}
}

func TestToolGOROOT(t *testing.T) {
	if got := toolGOROOT(filepath.FromSlash("/go/pkg/tool/linux_amd64/compile")); got != filepath.FromSlash("/go") {
		t.Errorf("toolGOROOT = %s", got)
	}
}
