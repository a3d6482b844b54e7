package dsl

import (
	"encoding/json"
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// table7 is the paper's running example (Table 7): frequency, expensiveness and
// changeability of five PetClinic methods, as the coarse phase measured them.
var table7 = struct {
	names []string
	c     Candidates
}{
	names: []string{"findOwner", "updateOwner", "newVisit", "findVets", "findAll"},
	c: Candidates{
		IDs: []uint32{1, 2, 3, 4, 5},
		Values: map[string][]float64{
			"count":          {12, 2, 50, 200, 100},
			"mean-time":      {180, 500, 250, 300, 200},
			"result-size-sd": {6, 0, 12, 200, 90},
		},
	},
}

func TestTable7(t *testing.T) {
	f := MustParse("(more frequent ∪ most expensive) ∩ least changeable")
	r, err := Evaluate(f, table7.c, DefaultBinding())
	if err != nil {
		t.Fatal(err)
	}
	// Only ClinicService.findVets() is selected (paper, section 4.3).
	if !slices.Equal(r.Selected, []uint32{4}) {
		t.Fatalf("selected %v; want [4] (findVets)", r.Selected)
	}
	// The levels the paper prints in Table 7, after the metric's direction.
	want := map[string][]Level{
		"frequent": {Less, Least, Plain, Most, More},
		// The paper prints newVisit 250 "more" and findVets 300 "expensive":
		// not monotone in the value, so a misprint; 250 is the median.
		"expensive":  {Least, Most, Plain, More, Less},
		"changeable": {More, Most, Plain, Least, Less}, // higher spread = less changeable
	}
	for crit, levels := range want {
		g := r.Grouping(crit)
		if g == nil {
			t.Fatalf("no grouping for %s", crit)
		}
		if g.Partition.Method != MethodQuantiles {
			t.Errorf("%s: method %v; the paper found no normal distribution", crit, g.Partition.Method)
		}
		if !slices.Equal(g.Levels, levels) {
			t.Errorf("%s: levels %v; want %v", crit, g.Levels, levels)
		}
	}
	// Why findVets: most frequent (which "more" includes), least changeable.
	if got := r.Levels(4); !maps.Equal(got, map[string]Level{"frequent": Most, "expensive": More, "changeable": Least}) {
		t.Errorf("findVets levels %v", got)
	}
	// The reading of "more" matters: with "more" meaning only the More
	// partition, the example would select nothing.
	r2, _ := Evaluate(MustParse("(more frequent ∖ most frequent ∪ most expensive) ∩ least changeable"), table7.c, DefaultBinding())
	if len(r2.Selected) != 0 {
		t.Errorf("exclusive reading selected %v; want none", r2.Selected)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Errorf("result is not JSON-encodable: %v", err)
	}
}

// fiveLevels has one candidate per level of "frequent": ids 1..5 are Least..Most.
var fiveLevels = Candidates{
	IDs:    []uint32{1, 2, 3, 4, 5},
	Values: map[string][]float64{"count": {1, 2, 3, 4, 5}, "cyclomatic": {1, 2, 3, 4, 5}},
}

func selected(t *testing.T, expr string, c Candidates, b Binding) []uint32 {
	t.Helper()
	r, err := Evaluate(MustParse(expr), c, b)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return r.Selected
}

func TestModifiers(t *testing.T) {
	tests := []struct {
		expr string
		want []uint32
	}{
		{"least frequent", []uint32{1}},
		{"less frequent", []uint32{1, 2}},
		{"frequent", []uint32{3}},
		{"more frequent", []uint32{4, 5}},
		{"most frequent", []uint32{5}},
		// HigherIsLess: the most complex function is the least maintainable.
		{"least maintainable", []uint32{5}},
		{"less maintainable", []uint32{4, 5}},
		{"maintainable", []uint32{3}},
		{"more maintainable", []uint32{1, 2}},
		{"most maintainable", []uint32{1}},
	}
	for _, tt := range tests {
		if got := selected(t, tt.expr, fiveLevels, DefaultBinding()); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v; want %v", tt.expr, got, tt.want)
		}
	}
}

func TestOperators(t *testing.T) {
	// frequent: 1..5 = Least..Most; expensive reversed: 1..5 = Most..Least.
	c := Candidates{
		IDs:    []uint32{10, 20, 30, 40, 50},
		Values: map[string][]float64{"count": {1, 2, 3, 4, 5}, "mean-time": {5, 4, 3, 2, 1}},
	}
	tests := []struct {
		exprs []string
		want  []uint32
	}{
		{[]string{"more frequent ∪ more expensive", "more frequent | more expensive", "more frequent or more expensive"},
			[]uint32{10, 20, 40, 50}},
		{[]string{"less frequent ∩ more expensive", "less frequent & more expensive", "less frequent AND more expensive"},
			[]uint32{10, 20}},
		{[]string{`less frequent \ most expensive`, "less frequent ∖ most expensive", "less frequent - most expensive", "less frequent minus most expensive"},
			[]uint32{20}},
		{[]string{"frequent ∪ expensive"}, []uint32{30}},
		{[]string{"frequent ∩ most expensive"}, []uint32{}},
		{[]string{`frequent \ frequent`}, []uint32{}},
		// Precedence: ∩ first, then ∪ and \ left to right.
		{[]string{"most frequent ∪ less frequent ∩ most expensive", "most frequent ∪ (less frequent ∩ most expensive)"},
			[]uint32{10, 50}},
		{[]string{"(most frequent ∪ less frequent) ∩ most expensive"}, []uint32{10}},
		{[]string{`less frequent \ least frequent ∪ least frequent`, `(less frequent \ least frequent) ∪ least frequent`},
			[]uint32{10, 20}},
		{[]string{`less frequent \ (least frequent ∪ least frequent)`}, []uint32{20}},
		{[]string{`more frequent \ most frequent \ more frequent`}, []uint32{}},
		{[]string{`more frequent \ (most frequent \ more frequent)`}, []uint32{40, 50}},
	}
	for _, tt := range tests {
		for _, expr := range tt.exprs {
			if got := selected(t, expr, c, DefaultBinding()); !slices.Equal(got, tt.want) {
				t.Errorf("%s: %v; want %v", expr, got, tt.want)
			}
		}
	}
}

func TestDirections(t *testing.T) {
	for name, m := range Metrics {
		if m.Name != name {
			t.Errorf("Metrics[%q].Name = %q", name, m.Name)
		}
		for c, d := range m.For {
			if !IsCriterion(c) || (d != HigherIsMore && d != HigherIsLess) {
				t.Errorf("%s: bad direction %v for %q", name, d, c)
			}
		}
	}
	tests := []struct{ metric, criterion string }{
		{"inter-arrival", "frequent"},    // longer gaps: less frequent
		{"result-size-sd", "changeable"}, // higher spread: less changeable
		{"cyclomatic", "maintainable"},
		{"statements", "maintainable"},
		{"params", "maintainable"},
	}
	for _, tt := range tests {
		if d := Metrics[tt.metric].DirectionFor(tt.criterion); d != HigherIsLess {
			t.Errorf("%s for %s: %v; want higher-is-less", tt.metric, tt.criterion, d)
		}
	}
	if d := Metrics["inter-arrival"].DirectionFor("latent"); d != HigherIsMore {
		t.Errorf("inter-arrival for latent: %v", d)
	}
	if d := Metrics["count"].DirectionFor("expensive"); d != HigherIsMore {
		t.Errorf("an unlisted pair: %v; want higher-is-more", d)
	}
	// The longest gap between calls is the least frequent function.
	c := Candidates{IDs: []uint32{1, 2, 3}, Values: map[string][]float64{"inter-arrival": {10, 1000, 100}}}
	if got := selected(t, "least frequent", c, Binding{"frequent": "inter-arrival"}); !slices.Equal(got, []uint32{2}) {
		t.Errorf("least frequent by inter-arrival: %v", got)
	}
	if got := selected(t, "most latent", c, Binding{"latent": "inter-arrival"}); !slices.Equal(got, []uint32{2}) {
		t.Errorf("most latent by inter-arrival: %v", got)
	}
}

func TestDefaultBinding(t *testing.T) {
	b := DefaultBinding()
	if err := b.Validate(nil); err != nil {
		t.Fatal(err)
	}
	for c, m := range b {
		if Metrics[m].DirectionFor(c) != Metrics[m].For[c] {
			t.Errorf("default %s → %s is not one of the metric's intended uses", c, m)
		}
	}
	b["frequent"] = "inter-arrival"
	if DefaultBinding()["frequent"] != "count" {
		t.Error("DefaultBinding shares its map")
	}
}

func TestEvaluateErrors(t *testing.T) {
	f := MustParse("more frequent ∩ most usage-pattern")
	c := Candidates{IDs: []uint32{1, 2}, Values: map[string][]float64{"count": {1, 2}, "errors": {0, 1}}}
	tests := []struct {
		name string
		f    *Filter
		c    Candidates
		b    Binding
		is   error
		want string
	}{
		{"unbound", f, c, DefaultBinding(), ErrUnbound, `criterion "usage-pattern": no metric bound (bind one of: concurrency, count`},
		{"unknown metric", MustParse("frequent"), c, Binding{"frequent": "calls"}, ErrUnknownMetric, `criterion "frequent": unknown metric "calls" (valid: `},
		{"unknown criterion", MustParse("frequent"), c, Binding{"frequent": "count", "often": "count"}, ErrUnknownCriterion, `binding "often": unknown criterion (valid: frequent,`},
		{"missing column", MustParse("frequent ∪ expensive"), c, DefaultBinding(), nil, `criterion "expensive": no values for metric "mean-time"`},
		{"short column", MustParse("frequent"), Candidates{IDs: []uint32{1, 2, 3}, Values: c.Values}, DefaultBinding(), nil, `metric "count": 2 values for 3 candidates`},
		{"duplicate id", MustParse("frequent"), Candidates{IDs: []uint32{1, 1}, Values: c.Values}, DefaultBinding(), nil, "duplicate candidate id 1"},
	}
	for _, tt := range tests {
		_, err := Evaluate(tt.f, tt.c, tt.b)
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want %q", tt.name, err, tt.want)
		}
		if tt.is != nil {
			var be *BindingError
			if !errors.Is(err, tt.is) || !errors.As(err, &be) {
				t.Errorf("%s: %v is not a *BindingError wrapping %v", tt.name, err, tt.is)
			}
		}
	}
	if _, err := (&Options{Alpha: 2}).Evaluate(MustParse("frequent"), c, DefaultBinding()); err == nil {
		t.Error("invalid options accepted")
	}
	// An explicit binding makes usage-pattern usable.
	b := DefaultBinding()
	b["usage-pattern"] = "errors"
	if _, err := Evaluate(f, c, b); err != nil {
		t.Errorf("explicit binding: %v", err)
	}
}

func TestEvaluateUnknownValues(t *testing.T) {
	nan := math.NaN()
	c := Candidates{
		IDs: []uint32{1, 2, 3, 4, 5, 6},
		Values: map[string][]float64{
			"count":     {1, 2, 3, 4, 5, 6},
			"mean-time": {nan, 10, 20, 30, 40, math.Inf(1)},
		},
	}
	r, err := Evaluate(MustParse(`more frequent \ most expensive`), c, DefaultBinding())
	if err != nil {
		t.Fatal(err)
	}
	g := r.Grouping("expensive")
	if g.Partition.Excluded != 2 || g.Levels[0] != NoLevel || g.Levels[5] != NoLevel {
		t.Errorf("NaN/Inf not excluded: %+v", g)
	}
	// More frequent: 5 and 6. Candidate 5 is the most expensive of the four
	// known times and goes; candidate 6 has no known time, is in no partition
	// of expensive, and the difference keeps it.
	if !slices.Equal(r.Selected, []uint32{6}) {
		t.Errorf("selected %v; want [6]", r.Selected)
	}
	if _, ok := r.Levels(6)["expensive"]; ok {
		t.Errorf("Levels(6) reports an excluded criterion: %v", r.Levels(6))
	}
	if r.Levels(99) != nil {
		t.Error("Levels of an unknown id")
	}
	if got := r.Members("expensive", Most); !slices.Equal(got, []uint32{5}) {
		t.Errorf("Members(expensive, Most) = %v", got)
	}
	if r.Members("latent", Most) != nil || r.Grouping("latent") != nil {
		t.Error("grouping for a criterion the filter does not use")
	}
	if _, err := json.Marshal(r); err != nil {
		t.Errorf("result is not JSON-encodable: %v", err)
	}
}

func TestEvaluateFew(t *testing.T) {
	b := DefaultBinding()
	f := MustParse("most frequent ∪ frequent")
	r, err := Evaluate(f, Candidates{}, b)
	if err != nil || len(r.Selected) != 0 || r.Selected == nil {
		t.Errorf("no candidates: %+v, %v", r, err)
	}
	one := Candidates{IDs: []uint32{7}, Values: map[string][]float64{"count": {3}}}
	if got := selected(t, "frequent", one, b); !slices.Equal(got, []uint32{7}) {
		t.Errorf("one candidate is Plain: %v", got)
	}
	if got := selected(t, "most frequent ∪ least frequent", one, b); len(got) != 0 {
		t.Errorf("one candidate is neither most nor least: %v", got)
	}
	same := Candidates{IDs: []uint32{1, 2, 3}, Values: map[string][]float64{"count": {4, 4, 4}}}
	if got := selected(t, "frequent", same, b); !slices.Equal(got, []uint32{1, 2, 3}) {
		t.Errorf("equal values are all Plain: %v", got)
	}
	two := Candidates{IDs: []uint32{1, 2}, Values: map[string][]float64{"count": {4, 9}}}
	if got := selected(t, "most frequent", two, b); !slices.Equal(got, []uint32{2}) {
		t.Errorf("two candidates: most frequent %v", got)
	}
}

func TestEvaluateSharedMetric(t *testing.T) {
	c := Candidates{IDs: []uint32{1, 2, 3, 4, 5}, Values: map[string][]float64{"mean-time": {1, 2, 3, 4, 5}}}
	r, err := Evaluate(MustParse("most expensive ∩ most latent"), c, DefaultBinding())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Selected, []uint32{5}) || len(r.Groupings) != 2 {
		t.Errorf("selected %v, %d groupings", r.Selected, len(r.Groupings))
	}
}

// TestCanonicalSemantics checks on random filters and random data that the
// canonical text selects exactly what the original selects.
func TestCanonicalSemantics(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	crits := []string{"frequent", "expensive", "changeable"}
	for left := 500; left > 0; left-- {
		expr := randomFilter(r, crits, 4)
		f, err := Parse(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		g, err := Parse(f.String())
		if err != nil {
			t.Fatalf("canonical %q of %q: %v", f.String(), expr, err)
		}
		if g.String() != f.String() {
			t.Fatalf("canonical text is not a fixpoint: %q → %q", f.String(), g.String())
		}
		n := 1 + r.IntN(30)
		c := Candidates{Values: map[string][]float64{}}
		for i := 0; i < n; i++ {
			c.IDs = append(c.IDs, uint32(i))
		}
		for _, m := range []string{"count", "mean-time", "result-size-sd"} {
			col := make([]float64, n)
			for i := range col {
				col[i] = float64(r.IntN(8))
			}
			c.Values[m] = col
		}
		a, err1 := Evaluate(f, c, DefaultBinding())
		b, err2 := Evaluate(g, c, DefaultBinding())
		if err1 != nil || err2 != nil || !slices.Equal(a.Selected, b.Selected) {
			t.Fatalf("%q and its canonical %q select %v and %v (%v %v)", expr, f.String(), a.Selected, b.Selected, err1, err2)
		}
		// An empty selection is always explained, never a non-empty one.
		if (len(a.Selected) == 0) != (a.Why != "") || strings.Contains(a.Why, "\n") || strings.HasSuffix(a.Why, ": ") {
			t.Fatalf("%q selects %v; why %q", expr, a.Selected, a.Why)
		}
	}
}

func randomFilter(r *rand.Rand, crits []string, depth int) string {
	if depth == 0 || r.IntN(3) == 0 {
		mod := []string{"", "least ", "less ", "more ", "most "}[r.IntN(5)]
		def := mod + crits[r.IntN(len(crits))]
		if r.IntN(4) == 0 {
			return "(" + def + ")"
		}
		return def
	}
	ops := []string{" ∪ ", " ∩ ", ` \ `, " | ", " & ", " - ", " or ", " and ", " minus "}
	s := randomFilter(r, crits, depth-1) + ops[r.IntN(len(ops))] + randomFilter(r, crits, depth-1)
	if r.IntN(2) == 0 {
		return "(" + s + ")"
	}
	return s
}
