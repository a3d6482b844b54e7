package dsl

import (
	"math"
	"strings"
	"testing"
)

// TestWhyNothing: an evaluation that selects nothing says which part of the
// filter came out empty, why, and which relaxation would select something.
func TestWhyNothing(t *testing.T) {
	nan := math.NaN()
	paper := "(more frequent ∪ most expensive) ∩ least changeable"
	for _, tc := range []struct {
		name, filter string
		values       map[string][]float64
		want         []string // in Why, in order
	}{
		{
			// A small program: no function returns anything with a size.
			name: "metric unknown", filter: paper,
			values: map[string][]float64{
				"count": {120, 40, 7, 3}, "mean-time": {50, 900, 80, 60},
				"result-size-sd": {nan, nan, nan, nan},
			},
			want: []string{
				"nothing qualified among 4 functions: ",
				`"least changeable" selects none (result-size-sd is unknown for all of them: known only for functions whose first non-error result has a size`,
				`; without "∩ least changeable" the filter would select 2`,
			},
		},
		{
			// Sizes known but constant: every function is plain.
			name: "all equal", filter: paper,
			values: map[string][]float64{
				"count": {120, 40, 7, 3}, "mean-time": {50, 900, 80, 60},
				"result-size-sd": {0, 0, 0, nan},
			},
			want: []string{
				`"least changeable" selects none (the result-size-sd of all 3 with a known value is the same, so all are plain; unknown for 1)`,
				`without "∩ least changeable" the filter would select 2`,
			},
		},
		{
			// Both parts select something, but not the same function; "more"
			// instead of "most" would overlap.
			name: "disjoint", filter: "most frequent ∩ most expensive",
			values: map[string][]float64{
				"count": {200, 100, 50, 12, 2}, "mean-time": {300, 500, 200, 180, 250},
			},
			want: []string{
				`"most frequent" (1) and "most expensive" (1) have no function in common`,
				`; relax it: "more frequent" instead of "most frequent" would select 1`,
			},
		},
		{
			name: "difference", filter: "most frequent \\ more expensive",
			values: map[string][]float64{
				"count": {200, 100, 50, 12, 2}, "mean-time": {500, 250, 200, 180, 300},
			},
			want: []string{`"\\ more expensive" removes all 1 function the rest selects`},
		},
		{
			// Two distinct values are least and most: the middle is empty.
			name: "empty partition", filter: "frequent",
			values: map[string][]float64{"count": {1, 9}},
			want:   []string{`"frequent" selects none (2 known count values group into least 1, less 0, plain 0, more 0, most 1)`},
		},
	} {
		n := len(tc.values["count"])
		c := Candidates{Values: tc.values}
		for i := 0; i < n; i++ {
			c.IDs = append(c.IDs, uint32(i+1))
		}
		r, err := Evaluate(MustParse(tc.filter), c, DefaultBinding())
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(r.Selected) != 0 {
			t.Fatalf("%s: selected %v; the case wants none", tc.name, r.Selected)
		}
		rest := r.Why
		for _, w := range tc.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%s: why %q lacks %q (or not in order)", tc.name, r.Why, w)
				break
			}
			rest = rest[i+len(w):]
		}
		if strings.Contains(r.Why, "\n") {
			t.Errorf("%s: why is not one line: %q", tc.name, r.Why)
		}
	}

	// Something selected, or nothing to select from: nothing to explain.
	r, err := Evaluate(MustParse(paper), table7.c, DefaultBinding())
	if err != nil || r.Why != "" {
		t.Errorf("table 7: why %q, err %v; want none", r.Why, err)
	}
	r, err = Evaluate(MustParse(paper), Candidates{}, DefaultBinding())
	if err != nil || r.Why != "" {
		t.Errorf("no candidates: why %q, err %v; want none", r.Why, err)
	}
}
