package settings

import (
	"fmt"
	"math"
	"testing"

	"github.com/tigrisgo/tigris/runtime/internal/costcheck"
)

// FuzzDecode: embedded settings come from a binary; whatever the bytes, Decode
// returns an error or settings that validate and encode back to the same value.
func FuzzDecode(f *testing.F) {
	def := Default()
	text, err := def.Encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(text)
	f.Add(`{"format":1}`)
	f.Add(`{"format":1,"sampling":2}`)
	f.Add(`{"format":1,"rules":[{"pattern":"execution(* a.B(..))","mode":"fine"}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		valuesBound.Check(t, len(s), func() { checkDecode(t, s) })
	})
}

// valuesBound is what one input of the fuzz targets may cost: JSON decoding
// and the value parsers allocate in proportion to the text.
var valuesBound = costcheck.Bound{
	Fixed:   costcheck.Cost{Bytes: 64 << 10, Allocs: 512},
	PerByte: costcheck.Cost{Bytes: 1 << 10, Allocs: 16},
}

func checkDecode(t *testing.T, s string) {
	r, err := Decode(s)
	if err != nil {
		return
	}
	if err := r.Validate(); err != nil {
		t.Fatalf("Decode(%q) accepted settings that do not validate: %v", s, err)
	}
	again, err := r.Encode()
	if err != nil {
		t.Fatalf("decoded settings do not encode: %v", err)
	}
	if _, err := Decode(again); err != nil {
		t.Fatalf("re-encoded settings do not decode: %v\n%s", err, again)
	}
}

// TestCostLinear: linked settings with many rules and TIGRIS_RULES with
// many rules cost allocation linear in their length.
func TestCostLinear(t *testing.T) {
	rules := func(n int) []Rule {
		rs := make([]Rule, n)
		for i := range rs {
			rs[i] = Rule{Pattern: fmt.Sprintf("execution(* example.com/x%d.*(..))", i), Mode: Fine}
		}
		return rs
	}
	t.Run("Decode", func(t *testing.T) {
		costcheck.Linear(t, func(n int) []byte {
			r := Default()
			r.Rules = rules(n)
			s, err := r.Encode()
			if err != nil {
				t.Fatal(err)
			}
			return []byte(s)
		}, func(in []byte) { Decode(string(in)) }, 30, 8)
	})
	t.Run("ParseRules", func(t *testing.T) {
		costcheck.Linear(t, func(n int) []byte { return []byte(FormatRules(rules(n))) },
			func(in []byte) { ParseRules(string(in)) }, 30, 8)
	})
}

// FuzzParseValues: the TIGRIS_* value parsers return a value or an error, never
// panic, and what they format parses back.
func FuzzParseValues(f *testing.F) {
	for _, s := range []string{"10%", "0.1", "256MiB", "1GB", "off", "2m", "1h30m", "+fine:execution(* a.*(..)); off:within(b/...)", "none", "", "-5", "1e400%", "-0%", "4.9e-324", "0x400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		valuesBound.Check(t, len(s), func() { checkValues(t, s) })
	})
}

func checkValues(t *testing.T, s string) {
	// Rates outside [0,1] are rejected where they are used (Validate); inside,
	// formatting may round to a few digits but must parse back close.
	if p, err := ParsePercent(s); err == nil && p >= 0 && p <= 1 {
		if q, err := ParsePercent(FormatPercent(p)); err != nil || (q-p > 1e-4 || p-q > 1e-4) {
			t.Errorf("ParsePercent(FormatPercent(%v)) = %v, %v", p, q, err)
		}
	}
	if n, err := ParseSize(s); err == nil {
		if m, err := ParseSize(FormatSize(n)); err != nil || m != n {
			t.Errorf("ParseSize(FormatSize(%d)) = %d, %v", n, m, err)
		}
	}
	_, _ = ParseDuration(s)
	_, _ = ParseBool(s)
	_, _ = ParseQueue(s)
	_, _ = ParseRotate(s)
	if b, err := ParseBudget(s); err == nil && checkRate(b, true) == "" && (b < 0 || b >= 1 || math.Signbit(b)) {
		t.Errorf("budget %v passed the limits", b)
	}
	if rules, err := ParseRules(s); err == nil {
		if again, err := ParseRules(FormatRules(rules)); err != nil || len(again) != len(rules) {
			t.Errorf("ParseRules(FormatRules(%v)) = %v, %v", rules, again, err)
		}
	}
	r := Default()
	_ = ApplyEnv(&r, func(name string) string { return s })
}
