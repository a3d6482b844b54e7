package config

import (
	"strconv"
	"strings"

	"github.com/tigrisgo/tigris/internal/sorted"
	"github.com/tigrisgo/tigris/runtime/dsl"
)

// checkAnalysis checks the analysis section against the dsl package: criteria
// parses as TigrisDSL, every metrics entry binds a known criterion to a known
// metric, and every criterion the filter uses has a metric. It checks the criteria
// even when analysis is disabled: the admin endpoint can enable it at run time.
func (d *decoder) checkAnalysis() {
	a := &d.cfg.Runtime.Analysis
	for _, k := range d.metricKeys {
		name := deref(k).Value
		if !dsl.IsCriterion(name) {
			d.errorf(k, "analysis.metrics", "unknown criterion %q (%s)", name, suggest(name, dsl.Criteria))
			continue
		}
		if m := a.Metrics[name]; dsl.Metrics[m].Name == "" {
			n := d.where["analysis.metrics."+name].node
			d.errorf(n, "analysis.metrics."+name, "unknown metric %q (%s)", m, suggest(m, sorted.Keys(dsl.Metrics)))
		}
	}
	if d.criteria == nil {
		return
	}
	n := deref(d.criteria)
	if strings.TrimSpace(n.Value) == "" {
		return // no filter; Validate objects if analysis is enabled
	}
	f, err := dsl.Parse(n.Value)
	if err != nil {
		d.exprError(n, "analysis.criteria", err)
		return
	}
	for _, c := range f.Criteria() {
		if _, ok := a.Metrics[c]; ok {
			continue
		}
		line, col := n.Line, n.Column
		if def := findDef(f, c); def != nil {
			line, col = d.src.exprPos(n, def.Pos.Offset)
		}
		d.errs = append(d.errs, &Error{File: d.src.name, Line: line, Col: col, Key: "analysis.criteria",
			Msg: "criterion " + strconv.Quote(c) + " has no metric (bind one in analysis.metrics: " +
				strings.Join(sorted.Keys(dsl.Metrics), ", ") + ")"})
	}
}

// findDef returns the first FilterDef of f that names criterion c.
func findDef(f *dsl.Filter, c string) *dsl.FilterDef {
	var inFilter func(*dsl.Filter) *dsl.FilterDef
	inOperand := func(o *dsl.Operand) *dsl.FilterDef {
		if o.Def != nil {
			if o.Def.Criterion == c {
				return o.Def
			}
			return nil
		}
		return inFilter(o.Group)
	}
	inIntersection := func(in *dsl.Intersection) *dsl.FilterDef {
		for _, o := range append([]*dsl.Operand{in.Head}, in.Tail...) {
			if def := inOperand(o); def != nil {
				return def
			}
		}
		return nil
	}
	inFilter = func(f *dsl.Filter) *dsl.FilterDef {
		if def := inIntersection(f.Head); def != nil {
			return def
		}
		for _, t := range f.Tail {
			if def := inIntersection(t.Right); def != nil {
				return def
			}
		}
		return nil
	}
	return inFilter(f)
}
