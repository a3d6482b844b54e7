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
		err := sameRelease(tc.build, tc.self)
		if (err == nil) != tc.ok {
			t.Errorf("sameRelease(%q, %q) = %v", tc.build, tc.self, err)
		}
		if err != nil && (strings.Count(err.Error(), "\n") > 0 || !strings.Contains(err.Error(), "GOTOOLCHAIN="+tc.build)) {
			t.Errorf("the message is not one line naming what to do: %v", err)
		}
	}
}

func TestToolGOROOT(t *testing.T) {
	if got := toolGOROOT(filepath.FromSlash("/go/pkg/tool/linux_amd64/compile")); got != filepath.FromSlash("/go") {
		t.Errorf("toolGOROOT = %s", got)
	}
}
