package export

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/internal/costcheck"
)

// stringBound is what parsing one OTEL_RESOURCE_ATTRIBUTES-style list or
// finding one function name may cost: the parts and a copy.
var stringBound = costcheck.Bound{
	Fixed:   costcheck.Cost{Bytes: 4 << 10, Allocs: 32},
	PerByte: costcheck.Cost{Bytes: 64, Allocs: 1},
}

// TestStringCostLinear: long attribute lists and long signatures cost
// allocation linear in their length.
func TestStringCostLinear(t *testing.T) {
	costcheck.Linear(t, func(n int) []byte {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "k%d=v%%20%d,", i, i)
		}
		return []byte(b.String())
	}, func(in []byte) { ParseKeyValues(string(in)) }, 100, 8)
	costcheck.Linear(t, func(n int) []byte {
		return []byte("example.com/p.F" + strings.Repeat("[T]", n) + strings.Repeat("(", n) + "int) error")
	}, func(in []byte) { FunctionName(string(in)) }, 100, 8)
}

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
		var m map[string]string
		var err error
		// Once unmeasured, as costcheck.Linear does: the first wrapped error
		// of the process cost a one-time 18 KB here (seen under go test
		// without -v, 216 bytes on the next call), which is not the input's.
		ParseKeyValues(s)
		stringBound.Check(t, len(s), func() { m, err = ParseKeyValues(s) })
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
		var name string
		stringBound.Check(t, len(s), func() { name = FunctionName(s) })
		if !strings.HasPrefix(strings.TrimPrefix(s, "func "), name) {
			t.Errorf("FunctionName(%q) = %q, not a prefix", s, name)
		}
	})
}
