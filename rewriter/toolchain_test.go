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
	if want := "(GOTOOLCHAIN=go1.27.3 go install ./cmd/tigris in tigris's checkout)"; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("checkout: %v; want it to end %s", err, want)
	}
}

func TestToolGOROOT(t *testing.T) {
	if got := toolGOROOT(filepath.FromSlash("/go/pkg/tool/linux_amd64/compile")); got != filepath.FromSlash("/go") {
		t.Errorf("toolGOROOT = %s", got)
	}
}
