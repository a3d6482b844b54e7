package rewriter

import (
	"strings"
	"testing"
)

// TestMonitorDependency: packages the monitor runtime imports, and every package
// of their test binaries, are compiled unchanged; others are instrumented.
func TestMonitorDependency(t *testing.T) {
	deps := map[string]string{monitorPath: "m.a", "strings": "s.a", "sort": "o.a"}
	for _, tc := range []struct {
		importPath, variant, want string
	}{
		{"strings", "", "the monitor runtime depends on it"},
		{"strings", "strings.test", "the monitor runtime depends on it"},
		{"strings_test", "strings.test", "test binary of strings"},
		{"main", "sort.test", "test binary of sort"},
		{"flag", "sort.test", "test binary of sort"},
		{"encoding/csv", "", ""},
		{"encoding/csv", "encoding/csv.test", ""},
		{"example.com/app", "example.com/app.test", ""},
	} {
		got := monitorDependency(&CompileJob{ImportPath: tc.importPath, TestVariant: tc.variant}, deps)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s [%s]: %q; want %q", tc.importPath, tc.variant, got, tc.want)
		}
	}
}
