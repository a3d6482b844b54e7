package dsl

import (
	"errors"
	"fmt"
	"slices"
)

// Candidates are the functions one analysis chooses from, stored by column:
// candidate i has ID IDs[i] and, for every metric m, the value Values[m][i].
type Candidates struct {
	// IDs identify the candidates (probe ids); they must be distinct.
	IDs []uint32
	// Values maps a metric name to one value per candidate. Only the metrics
	// bound to the filter's criteria are read; a NaN marks a value that is not
	// known (a function never called has no mean time) and keeps the candidate
	// out of that criterion's partitions.
	Values map[string][]float64
}

// Grouping is the partition of one criterion's values with the metric's
// direction applied.
type Grouping struct {
	Criterion string    `json:"criterion"`
	Metric    string    `json:"metric"`
	Direction Direction `json:"direction"`
	// Partition is in the metric's own order (Least holds the lowest values);
	// with HigherIsLess the criterion's levels are the reverse.
	Partition Partition `json:"partition"`
	// Levels holds each candidate's level for the criterion, direction applied,
	// in the order of Result.IDs; NoLevel when its value was NaN or infinite.
	Levels []Level `json:"levels"`
}

// Result is the outcome of Evaluate.
type Result struct {
	// Filter is the canonical text of the filter evaluated.
	Filter string `json:"filter"`
	// IDs are the candidates' ids, in input order (a copy).
	IDs []uint32 `json:"ids"`
	// Selected are the ids the filter selects, in ascending order.
	Selected []uint32 `json:"selected"`
	// Groupings holds one entry per criterion of the filter, in the order of
	// Filter.Criteria.
	Groupings []Grouping `json:"groupings"`
	// Why explains, in one line, why a filter over some candidates selected
	// none: the part of the filter that came out empty, what made it so, and a
	// relaxation that would select something. "" when something was selected
	// or there were no candidates.
	Why string `json:"why,omitempty"`
}

// Grouping returns the grouping of criterion, or nil if the filter does not use it.
func (r *Result) Grouping(criterion string) *Grouping {
	for i := range r.Groupings {
		if r.Groupings[i].Criterion == criterion {
			return &r.Groupings[i]
		}
	}
	return nil
}

// Levels returns the level of candidate id for each criterion of the filter,
// which explains why it was or was not selected. Criteria whose value was not
// known for id are missing. It returns nil for an unknown id.
func (r *Result) Levels(id uint32) map[string]Level {
	i := slices.Index(r.IDs, id)
	if i < 0 {
		return nil
	}
	m := make(map[string]Level, len(r.Groupings))
	for _, g := range r.Groupings {
		if l := g.Levels[i]; l.Valid() {
			m[g.Criterion] = l
		}
	}
	return m
}

// Members returns the ids of the candidates whose level for criterion is l, in
// input order; nil if the filter does not use criterion.
func (r *Result) Members(criterion string, l Level) []uint32 {
	g := r.Grouping(criterion)
	if g == nil {
		return nil
	}
	var ids []uint32
	for i, gl := range g.Levels {
		if gl == l {
			ids = append(ids, r.IDs[i])
		}
	}
	return ids
}

// Evaluate selects the candidates that satisfy f with the default Options.
func Evaluate(f *Filter, c Candidates, b Binding) (*Result, error) {
	return (*Options)(nil).Evaluate(f, c, b)
}

// Evaluate groups, for every criterion of f, the values of the metric b binds
// to it (see Group), applies the metric's direction, and evaluates f with set
// union, intersection and difference over the candidates: a FilterDef selects
// the candidates whose level it Selects.
//
// It fails on an invalid binding (a *BindingError), on a bound metric with no
// column in c (unless c is empty), on a column whose length differs from len(c.IDs), and on
// duplicate ids. It does not modify c and is safe for concurrent use.
func (o *Options) Evaluate(f *Filter, c Candidates, b Binding) (*Result, error) {
	if f == nil {
		return nil, errors.New("nil filter")
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := b.Validate(f); err != nil {
		return nil, err
	}
	n := len(c.IDs)
	seen := make(map[uint32]struct{}, n)
	for _, id := range c.IDs {
		if _, dup := seen[id]; dup {
			return nil, fmt.Errorf("duplicate candidate id %d", id)
		}
		seen[id] = struct{}{}
	}
	r := &Result{Filter: f.String(), IDs: slices.Clone(c.IDs), Selected: []uint32{}}
	parts := map[string]Partition{} // by metric: criteria may share one
	sets := map[*FilterDef]bitset{}
	for _, crit := range f.Criteria() {
		name := b[crit]
		col, ok := c.Values[name]
		if !ok && n > 0 {
			return nil, fmt.Errorf("criterion %q: no values for metric %q", crit, name)
		}
		if len(col) != n {
			return nil, fmt.Errorf("metric %q: %d values for %d candidates", name, len(col), n)
		}
		p, ok := parts[name]
		if !ok {
			p = o.Group(col)
			parts[name] = p
		}
		dir := Metrics[name].DirectionFor(crit)
		g := Grouping{Criterion: crit, Metric: name, Direction: dir, Partition: p, Levels: make([]Level, n)}
		for i, v := range col {
			l, ok := p.Level(v)
			switch {
			case !ok:
				l = NoLevel
			case dir == HigherIsLess:
				l = l.reverse()
			}
			g.Levels[i] = l
		}
		r.Groupings = append(r.Groupings, g)
	}
	levels := func(crit string) []Level { return r.Grouping(crit).Levels }
	f.walkDefs(func(d *FilterDef) {
		s := newBitset(n)
		for i, l := range levels(d.Criterion) {
			if d.Modifier.Selects(l) {
				s.set(i)
			}
		}
		sets[d] = s
	})
	sel := f.eval(sets)
	for i := 0; i < n; i++ {
		if sel.has(i) {
			r.Selected = append(r.Selected, c.IDs[i])
		}
	}
	slices.Sort(r.Selected)
	if len(r.Selected) == 0 && n > 0 {
		r.Why = (&explainer{r: r, f: f, sets: sets, n: n}).why()
	}
	return r, nil
}

func (f *Filter) eval(sets map[*FilterDef]bitset) bitset {
	s := f.Head.eval(sets)
	for _, t := range f.Tail {
		r := t.Right.eval(sets)
		switch t.Op {
		case Union:
			s.or(r)
		case Difference:
			s.andNot(r)
		}
	}
	return s
}

func (in *Intersection) eval(sets map[*FilterDef]bitset) bitset {
	s := in.Head.eval(sets)
	for _, o := range in.Tail {
		s.and(o.eval(sets))
	}
	return s
}

// eval returns a set the caller may modify.
func (o *Operand) eval(sets map[*FilterDef]bitset) bitset {
	if o.Def != nil {
		return slices.Clone(sets[o.Def])
	}
	return o.Group.eval(sets)
}

// bitset is a set of candidate indices.
type bitset []uint64

func newBitset(n int) bitset    { return make(bitset, (n+63)/64) }
func (s bitset) set(i int)      { s[i/64] |= 1 << (i % 64) }
func (s bitset) has(i int) bool { return s[i/64]&(1<<(i%64)) != 0 }
func (s bitset) or(t bitset) {
	for i := range s {
		s[i] |= t[i]
	}
}
func (s bitset) and(t bitset) {
	for i := range s {
		s[i] &= t[i]
	}
}
func (s bitset) andNot(t bitset) {
	for i := range s {
		s[i] &^= t[i]
	}
}
