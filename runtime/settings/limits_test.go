package settings

import (
	"errors"
	"flag"
	"math"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the limits table in docs/config.md")

// TestLimitsDoc keeps the table of docs/config.md, "Limits", equal to
// LimitsMarkdown. Run with -update to rewrite it.
func TestLimitsDoc(t *testing.T) {
	const path = "../../docs/config.md"
	const begin, end = "<!-- begin limits: generated from settings.Limits -->\n", "<!-- end limits -->"
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("no docs/config.md: the module is not in the tigris repository")
	}
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q … %q section", path, begin, end)
	}
	want := LimitsMarkdown()
	if got := doc[i+len(begin) : j]; got != want {
		if *update {
			if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s, Limits, differs from settings.Limits; run go test -run TestLimitsDoc -update\n got:\n%s\nwant:\n%s", path, got, want)
	}
}

// TestLimitsInValidate: every Limit is applied by Validate, to its field, with
// its message, and the defaults pass.
func TestLimitsInValidate(t *testing.T) {
	def := Default()
	for _, l := range Limits {
		if msg := l.check(&def); msg != "" {
			t.Errorf("%s: the default fails: %s", l.Field, msg)
		}
		r := Default()
		l.bad(&r)
		var es Errors
		if err := r.Validate(); !errors.As(err, &es) || len(es) != 1 || es[0].Field != l.Field || es[0].Msg != l.check(&r) {
			t.Errorf("%s: Validate() = %v; want that limit's message", l.Field, err)
		}
	}
}

// TestRates: what a sampling rate and a budget accept. Before, -0, denormals
// and rates the sampler rounds to 0 passed.
func TestRates(t *testing.T) {
	negZero := math.Copysign(0, -1)
	for _, tc := range []struct {
		v      float64
		budget bool
		want   string // "" accepted
	}{
		{0, false, ""},
		{1e-9, false, ""},
		{0.5, false, ""},
		{1, false, ""},
		{0.999, true, ""},
		{negZero, false, "-0 is negative zero (write 0; want 0% to 100%)"},
		{negZero, true, "-0 is negative zero (write 0; want 0% to less than 100%; 0 disables the budget)"},
		{5e-324, false, "5e-324 is below the smallest positive share, 0.0000001% (1e-09), which the sampler can tell from 0 (write 0 for none)"},
		{1e-10, true, "1e-10 is below the smallest positive share"},
		{math.NaN(), false, "NaN is not a number (want 0% to 100%)"},
		{math.Inf(1), false, "+Inf is not a number"},
		{1.0000001, false, "100.00001% is out of range (want 0% to 100%)"},
		{1, true, "100% is out of range (want 0% to less than 100%; 0 disables the budget)"},
		{-0.1, false, "-10% is out of range"},
	} {
		got := checkRate(tc.v, tc.budget)
		if tc.want == "" && got != "" || !strings.HasPrefix(got, tc.want) || tc.want != "" && got == "" {
			t.Errorf("checkRate(%v, budget %v) = %q; want %q", tc.v, tc.budget, got, tc.want)
		}
	}
	if err := CheckSampling(negZero); err == nil || err.Error() != "sampling: -0 is negative zero (write 0; want 0% to 100%)" {
		t.Errorf("CheckSampling(-0) = %v", err)
	}
	if err := CheckSampling(0.25); err != nil {
		t.Errorf("CheckSampling(0.25) = %v", err)
	}
}

// TestLimitsFromEnv: the TIGRIS_* front end reports each limit under the
// variable's name. Before, TIGRIS_INTERVAL=1ns and TIGRIS_SAMPLING=-0% passed.
func TestLimitsFromEnv(t *testing.T) {
	for name, tc := range map[string]struct{ value, want string }{
		"TIGRIS_INTERVAL": {"1ns", "TIGRIS_INTERVAL: 1ns is shorter than the minimum 100ms (want e.g. 2m)"},
		"TIGRIS_SAMPLING": {"-0%", "TIGRIS_SAMPLING: -0 is negative zero (write 0; want 0% to 100%)"},
		"TIGRIS_BUDGET":   {"1e-320", "TIGRIS_BUDGET: 1e-320 is below the smallest positive share"},
		"TIGRIS_WINDOW":   {"-1m", "TIGRIS_WINDOW: -1m0s is negative"},
		"TIGRIS_QUEUE":    {"1073741824", "TIGRIS_QUEUE: 1073741824 is not a queue length (want an integer from 1 to 16777216)"},
		"TIGRIS_ROTATE":   {"4KiB", "TIGRIS_ROTATE: 4KiB is smaller than the minimum 1MiB"},
		"TIGRIS_FLUSH":    {"1us", "TIGRIS_FLUSH: 1µs is shorter than the minimum 10ms (want e.g. 1s)"},
		"TIGRIS_RULES":    {strings.Repeat("fine:x;", MaxRules+1), "TIGRIS_RULES: 257 rules are more than the limit of 256"},
	} {
		r := Default()
		err := ApplyEnv(&r, env(map[string]string{name: tc.value}))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s=%s: %v\nwant %s", name, tc.value, err, tc.want)
		}
	}
	r := Default()
	if err := ApplyEnv(&r, env(map[string]string{"TIGRIS_INTERVAL": "100ms", "TIGRIS_SAMPLING": "0%", "TIGRIS_FLUSH": "10ms", "TIGRIS_ROTATE": "1MiB"})); err != nil {
		t.Errorf("values at the limits: %v", err)
	}
	if r.Analysis.Interval != MinInterval || r.Sampling != 0 || math.Signbit(r.Sampling) {
		t.Errorf("interval %v, sampling %v", r.Analysis.Interval, r.Sampling)
	}
}
