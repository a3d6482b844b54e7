package dsl

import (
	"fmt"
	"math/bits"
	"strings"
)

// When a filter selects nothing, Evaluate says why in one line (Result.Why):
// which part of the filter came out empty and what made it so, and which
// relaxation would select something. Small programs make this common: with a
// handful of functions a criterion often has too few distinct values for
// "least" or "most" to hold any of them, or its metric is unknown for most of
// them (result sizes), and an intersection with it is empty.

// explainer holds what an evaluation computed, to explain an empty selection.
type explainer struct {
	r    *Result
	f    *Filter
	sets map[*FilterDef]bitset
	n    int
}

// why returns the one-line explanation of an empty selection of n > 0
// candidates.
func (e *explainer) why() string {
	leaves, text, relax := e.filter(e.f)
	var b strings.Builder
	fmt.Fprintf(&b, "nothing qualified among %d function%s: ", e.n, plural(e.n))
	if text != "" {
		b.WriteString(text)
	} else {
		for i, d := range leaves {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%q selects none (%s)", d.String(), e.leafReason(d))
			if i == 2 && len(leaves) > 3 {
				fmt.Fprintf(&b, "; and %d more", len(leaves)-3)
				break
			}
		}
		relax = append(relax, leaves...)
	}
	if s := e.suggest(relax); s != "" {
		b.WriteString("; ")
		b.WriteString(s)
	}
	return b.String()
}

// filter finds why f selects nothing: the leaves that are empty and on which
// the emptiness hangs, or a text when the fault is in how parts combine; relax
// are the leaves worth relaxing in that case.
func (e *explainer) filter(f *Filter) (leaves []*FilterDef, text string, relax []*FilterDef) {
	acc := f.Head.eval(e.sets)
	parts := []*Intersection{f.Head}
	for _, t := range f.Tail {
		r := t.Right.eval(e.sets)
		if t.Op == Difference {
			before := acc.count()
			acc.andNot(r)
			if before > 0 && acc.count() == 0 {
				// The last difference that emptied a non-empty selection is the fault;
				// every part after it is empty too (the result is).
				text = fmt.Sprintf("%q removes all %d function%s the rest selects", `\ `+printed(t.Right.print), before, plural(before))
			}
			continue
		}
		acc.or(r)
		parts = append(parts, t.Right)
	}
	if text != "" {
		return nil, text, nil
	}
	for _, in := range parts { // all empty
		l, t, rl := e.intersectionWhy(in)
		if t != "" {
			return nil, t, rl
		}
		leaves = append(leaves, l...)
	}
	return leaves, "", nil
}

// intersectionWhy finds why in selects nothing (see filter).
func (e *explainer) intersectionWhy(in *Intersection) (leaves []*FilterDef, text string, relax []*FilterDef) {
	ops := append([]*Operand{in.Head}, in.Tail...)
	for _, o := range ops {
		if o.eval(e.sets).count() == 0 {
			if o.Def != nil {
				return []*FilterDef{o.Def}, "", nil
			}
			return e.filter(o.Group)
		}
	}
	// Every operand selects something, but not the same functions.
	acc := ops[0].eval(e.sets)
	for k := 1; k < len(ops); k++ {
		r := ops[k].eval(e.sets)
		before := acc.count()
		acc.and(r)
		if acc.count() == 0 {
			head := &Intersection{Head: ops[0], Tail: ops[1:k]}
			for _, o := range ops {
				if o.Def != nil {
					relax = append(relax, o.Def)
				}
			}
			return nil, fmt.Sprintf("%q (%d) and %q (%d) have no function in common",
				printed(head.print), before, printed(ops[k].print), r.count()), relax
		}
	}
	return nil, "", nil // not empty after all
}

// leafReason says why filterdef d selected nothing, from its criterion's
// grouping: the metric unknown, all values equal, or no value in d's partitions.
func (e *explainer) leafReason(d *FilterDef) string {
	g := e.r.Grouping(d.Criterion)
	p := &g.Partition
	m := Metrics[g.Metric]
	switch {
	case p.N == 0:
		s := fmt.Sprintf("%s is unknown for all of them", g.Metric)
		if m.Unknown != "" {
			s += ": " + m.Unknown
		}
		return s
	case p.Counts[2] == p.N:
		s := fmt.Sprintf("the %s of all %d with a known value is the same, so all are plain", g.Metric, p.N)
		if p.N == 1 {
			s = fmt.Sprintf("%s is known for one function only, which is plain", g.Metric)
		}
		if p.Excluded > 0 {
			s += fmt.Sprintf("; unknown for %d", p.Excluded)
		}
		return s
	}
	var parts []string
	for _, l := range Levels {
		parts = append(parts, fmt.Sprintf("%s %d", l, levelCount(g, l)))
	}
	s := fmt.Sprintf("%d known %s values group into %s", p.N, g.Metric, strings.Join(parts, ", "))
	if p.Excluded > 0 {
		s += fmt.Sprintf("; unknown for %d", p.Excluded)
	}
	return s
}

// levelCount is how many candidates criterion g puts at level l (direction
// applied).
func levelCount(g *Grouping, l Level) int {
	n := 0
	for _, x := range g.Levels {
		if x == l {
			n++
		}
	}
	return n
}

// suggest tries, for each leaf in order, the smallest relaxations (least to
// less, most to more; then leaving the filterdef out of its intersection) and
// names the first that selects something.
func (e *explainer) suggest(leaves []*FilterDef) string {
	dropping := map[*FilterDef]bool{}
	e.f.walkIntersections(func(in *Intersection) {
		if len(in.Tail) == 0 {
			return
		}
		for _, o := range append([]*Operand{in.Head}, in.Tail...) {
			if o.Def != nil {
				dropping[o.Def] = true
			}
		}
	})
	for _, d := range leaves {
		if wider := d.Modifier.wider(); wider != d.Modifier {
			alt := &FilterDef{Modifier: wider, Criterion: d.Criterion}
			if k := e.with(d, e.selects(alt)); k > 0 {
				return fmt.Sprintf("relax it: %q instead of %q would select %d", alt.String(), d.String(), k)
			}
		}
		if dropping[d] {
			all := newBitset(e.n)
			for i := 0; i < e.n; i++ {
				all.set(i)
			}
			if k := e.with(d, all); k > 0 {
				return fmt.Sprintf("without %q the filter would select %d", "∩ "+d.String(), k)
			}
		}
	}
	return ""
}

// with counts what the filter selects when d selects s instead.
func (e *explainer) with(d *FilterDef, s bitset) int {
	sets := make(map[*FilterDef]bitset, len(e.sets))
	for k, v := range e.sets {
		sets[k] = v
	}
	sets[d] = s
	return e.f.eval(sets).count()
}

// selects is the set filterdef d selects under the evaluation's groupings.
func (e *explainer) selects(d *FilterDef) bitset {
	s := newBitset(e.n)
	for i, l := range e.r.Grouping(d.Criterion).Levels {
		if d.Modifier.Selects(l) {
			s.set(i)
		}
	}
	return s
}

// wider is the modifier that selects more than l and includes it: "least"
// becomes "less", "most" becomes "more"; the others stay.
func (l Level) wider() Level {
	switch l {
	case Least:
		return Less
	case Most:
		return More
	}
	return l
}

func (f *Filter) walkIntersections(fn func(*Intersection)) {
	for _, in := range append([]*Intersection{f.Head}, tails(f)...) {
		fn(in)
		for _, o := range append([]*Operand{in.Head}, in.Tail...) {
			if o.Group != nil {
				o.Group.walkIntersections(fn)
			}
		}
	}
}

func tails(f *Filter) []*Intersection {
	out := make([]*Intersection, len(f.Tail))
	for i, t := range f.Tail {
		out[i] = t.Right
	}
	return out
}

// printed renders a node with its print method.
func printed(print func(*strings.Builder)) string {
	var b strings.Builder
	print(&b)
	return b.String()
}

func (s bitset) count() int {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
