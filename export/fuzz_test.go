package export

import (
	"strings"
	"testing"
)

// FuzzParseKeyValues: any input parses or fails cleanly; a parsed key is
// never empty and has no surrounding space.
func FuzzParseKeyValues(f *testing.F) {
	for _, s := range []string{"", "a=b", "service.name=shop,deployment.environment.name=prod%20eu", "a=%zz", "=x", "k=v=w,,", " a = b "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1<<16 {
			return
		}
		m, err := ParseKeyValues(s)
		if err != nil {
			return
		}
		for k := range m {
			if k == "" || strings.TrimSpace(k) != k || strings.Contains(k, ",") {
				t.Errorf("ParseKeyValues(%q): key %q", s, k)
			}
		}
	})
}

// FuzzFunctionName: the name is a prefix of the signature (less a leading
// "func "), found in one pass.
func FuzzFunctionName(f *testing.F) {
	for _, s := range []string{"example.com/shop.(*Store).Find(int) (string, error)", "main.f[...](T)", "func (*a.B).C()", "((((", "a.b)c(", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name := FunctionName(s)
		if !strings.HasPrefix(strings.TrimPrefix(s, "func "), name) {
			t.Errorf("FunctionName(%q) = %q, not a prefix", s, name)
		}
	})
}
