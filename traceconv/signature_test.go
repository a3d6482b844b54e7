package traceconv

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/internal/costcheck"
	"github.com/tigrisgo/tigris/runtime/writer"
)

func TestSplitSignature(t *testing.T) {
	for _, c := range []struct {
		sig             string
		name            string
		params, results []string
	}{
		{"example.com/shop.(*Store).Find(int, string) (example.com/shop.Owner, error)",
			"example.com/shop.(*Store).Find", []string{"int", "string"}, []string{"example.com/shop.Owner", "error"}},
		{"main.main()", "main.main", nil, nil},
		{"func (*example.com/shop.Store).Find(int) (Owner, error)", "(*example.com/shop.Store).Find", []string{"int"}, []string{"Owner", "error"}},
		{"p.Each(func(int, error) bool, ...map[string][]int) func() (int, error)",
			"p.Each", []string{"func(int, error) bool", "...map[string][]int"}, []string{"func() (int, error)"}},
		{"p.Map[K comparable, V any](map[K]V) []K", "p.Map[K comparable, V any]", []string{"map[K]V"}, []string{"[]K"}},
		{"p.T.M(struct{A int \"json:\\\"a,(\\\"\"; B string}, chan<- int)", "p.T.M",
			[]string{"struct{A int \"json:\\\"a,(\\\"\"; B string}", "chan<- int"}, nil},
		{"p.Raw(struct{A int `x:\"(,\"`})", "p.Raw", []string{"struct{A int `x:\"(,\"`}"}, nil},
		{"p.π(int) error", "p.π", []string{"int"}, []string{"error"}},
	} {
		got, ok := splitSignature(c.sig)
		if !ok || got.Name != c.name || !slices.Equal(got.Params, c.params) || !slices.Equal(got.Results, c.results) {
			t.Errorf("splitSignature(%q) = %q %q %q, %v; want %q %q %q", c.sig, got.Name, got.Params, got.Results, ok, c.name, c.params, c.results)
		}
	}
	for _, bad := range []string{"", "main", "p.f(int", "p.f(int))", "p.f(int) (a, b", "p.f() x)", "(p.f)", `p.f(struct{A int "x})`} {
		if got, ok := splitSignature(bad); ok {
			t.Errorf("splitSignature(%q) = %+v; want not ok", bad, got)
		}
	}
}

func TestKiekerSignature(t *testing.T) {
	for _, c := range []struct {
		def  *writer.ProbeDef
		sig  string
		want string
	}{
		{&testProbes[1], testProbes[1].Signature, "public example.com/shop.Owner,error example.com/shop.Store.Find(int)"},
		{&testProbes[2], testProbes[2].Signature, "private void example.com/shop.decode([]byte)"},
		{nil, "example.com/x.(*T).Do(struct{A int; B int}) func(int) error", "func[int]error example.com/x.T.Do(struct{A int, B int})"},
		{nil, "probe#9", "void probe#9()"},
	} {
		if got := kiekerSignature(&probe{def: c.def, sig: c.sig}); got != c.want {
			t.Errorf("kiekerSignature(%q) = %q; want %q", c.sig, got, c.want)
		}
	}
}

// FuzzSplitSignature checks that any text either fails to split or splits into a
// name and balanced, non-empty types, and that Kieker signatures never break a
// record line.
func FuzzSplitSignature(f *testing.F) {
	for _, s := range []string{
		"example.com/shop.(*Store).Find(int, string) (example.com/shop.Owner, error)",
		"p.Each(func(int, error) bool, ...map[string][]int) func() (int, error)",
		"p.T.M(struct{A int \"json:\\\"a,(\\\"\"; B string})",
		"p.Map[K comparable](K) `",
		"func (*p.T).M()",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sig string) {
		stringBound.Check(t, len(sig), func() { checkSplit(t, sig) })
	})
}

// stringBound is what handling one signature or string may cost: its parts
// and a few copies of it.
var stringBound = costcheck.Bound{
	Fixed:   costcheck.Cost{Bytes: 16 << 10, Allocs: 128},
	PerByte: costcheck.Cost{Bytes: 128, Allocs: 2},
}

// TestSignatureCostLinear: splitting signatures with many parameters or deep
// brackets, and writing long strings as JSON, cost allocation linear in
// their length.
func TestSignatureCostLinear(t *testing.T) {
	for name, gen := range map[string]func(n int) []byte{
		"parameters": func(n int) []byte {
			return []byte("p.F(" + strings.Repeat("map[string][]int, ", n) + "int) (" + strings.Repeat("error, ", n) + "int)")
		},
		"brackets": func(n int) []byte {
			return []byte("p.F(" + strings.Repeat("func(", n) + strings.Repeat(")", n) + ")")
		},
		"unbalanced": func(n int) []byte { return []byte("p.F" + strings.Repeat("((", n)) },
	} {
		t.Run(name, func(t *testing.T) {
			costcheck.Linear(t, gen, func(in []byte) {
				splitSignature(string(in))
				kiekerSignature(&probe{sig: string(in)})
				appendString(nil, string(in))
			}, 200, 8)
		})
	}
}

func checkSplit(t *testing.T, sig string) {
	parts, ok := splitSignature(sig)
	if ok {
		if !strings.Contains(sig, parts.Name) {
			t.Fatalf("name %q is not part of %q", parts.Name, sig)
		}
		for _, p := range append(slices.Clone(parts.Params), parts.Results...) {
			if p == "" || p != strings.TrimSpace(p) || !balanced(p) {
				t.Fatalf("%q: bad type %q in %+v", sig, p, parts)
			}
		}
	}
	k := kiekerSignature(&probe{sig: sig})
	if strings.ContainsAny(k, ";\n\r") {
		t.Fatalf("Kieker signature %q of %q would split its record", k, sig)
	}
}

// FuzzAppendString checks that any string becomes a valid JSON string that
// decodes to it (invalid UTF-8 to U+FFFD, as encoding/json does).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "quote\" back\\ nl\n tab\t ctl\x01", "\xff\xfe bad", "line\u2028sep", "µs π"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b []byte
		stringBound.Check(t, len(s), func() { b = appendString(nil, s) })
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("appendString(%q) = %s: %v", s, b, err)
		}
		want := string([]rune(s)) // each invalid byte becomes U+FFFD
		if back != want {
			t.Fatalf("appendString(%q) decodes to %q; want %q", s, back, want)
		}
	})
}
