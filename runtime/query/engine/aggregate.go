package engine

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/tigrisgo/tigris/runtime/query"
)

// MaxGroups bounds the groups of one window (or of a query without window):
// tuples of further groups are dropped and counted (Stats.DroppedGroups).
const MaxGroups = 10000

// aggState is one aggregate's running value in one group.
type aggState struct {
	n        int64
	isum     int64
	fsum     float64
	min, max query.Value
	q        *quantiles
}

// group is one GROUP BY key's state: a representative tuple pair (to
// output the grouped columns), the key values and the aggregates.
type group struct {
	key    []query.Value
	rep    [2]Tuple
	hasRep [2]bool
	aggs   []aggState
}

// groupSet is the groups of one window, and the bytes they hold
// (memory.go).
type groupSet struct {
	groups map[string]*group
	bytes  int64
}

// grow counts n more bytes held by gs.
func (gs *groupSet) grow(a *aggregator, n int64) {
	gs.bytes += n
	a.ctl.grow(n)
}

func (gs *groupSet) get(a *aggregator, e *env, key []query.Value, k string) *group {
	g := gs.groups[k]
	if g != nil {
		return g
	}
	if len(gs.groups) >= MaxGroups {
		a.stats.DroppedGroups++
		return nil
	}
	g = &group{key: append([]query.Value(nil), key...), aggs: make([]aggState, len(a.q.Aggs))}
	n := groupBytes + mapEntryBytes + int64(len(k)) + valsBytes(g.key) + int64(cap(g.aggs))*aggBytes
	for i := range e.tup {
		if e.tup[i] != nil {
			g.rep[i], g.hasRep[i] = copyTuple(e.tup[i]), true
			n += valsBytes(g.rep[i].Vals)
		}
	}
	gs.groups[k] = g
	gs.grow(a, n)
	return g
}

func copyTuple(t *Tuple) Tuple {
	c := *t
	if t.Vals != nil {
		c.Vals = append([]query.Value(nil), t.Vals...)
	}
	return c
}

// aggregator groups tuples and computes aggregates, per window or over the
// whole run.
type aggregator struct {
	q     *query.Query
	stats *Stats
	// windows are open windows by start (Unix ns); cum is the whole run's
	// groups when the query has no window.
	windows map[int64]*groupSet
	cum     *groupSet
	// closed is the highest watermark so far: a window that ends by it has
	// been emitted, and a tuple for it is late.
	closed  int64
	keyBuf  []query.Value
	keyText strings.Builder
	ctl     *control
}

func newAggregator(q *query.Query, st *Stats) *aggregator {
	a := &aggregator{q: q, stats: st, windows: map[int64]*groupSet{}}
	if q.Window == nil {
		a.cum = &groupSet{groups: map[string]*group{}}
	}
	a.closed = math.MinInt64
	return a
}

// add folds one tuple (pair) at time t into its windows' groups.
func (a *aggregator) add(e *env, t int64) {
	key := a.keyBuf[:0]
	a.keyText.Reset()
	for _, g := range a.q.GroupBy {
		v := eval(g, e)
		key = append(key, v)
		writeKey(&a.keyText, v)
	}
	a.keyBuf = key
	k := a.keyText.String()
	if a.cum != nil {
		if g := a.cum.get(a, e, key, k); g != nil {
			a.fold(a.cum, g, e)
		}
		return
	}
	w := a.q.Window
	size, slide := int64(w.Size), int64(w.Slide)
	// The windows [s, s+size) with s a multiple of slide that hold t.
	last := floorDiv(t, slide) * slide
	for s := last; s > t-size; s -= slide {
		if a.ctl.halt() {
			return
		}
		if s+size <= a.closed {
			a.stats.Late++
			continue
		}
		gs := a.windows[s]
		if gs == nil {
			gs = &groupSet{groups: map[string]*group{}}
			a.windows[s] = gs
			gs.grow(a, mapEntryBytes)
		}
		if g := gs.get(a, e, key, k); g != nil {
			a.fold(gs, g, e)
		}
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// writeKey writes a value's key form: type and value, unambiguous.
func writeKey(b *strings.Builder, v query.Value) {
	b.WriteByte(byte('0' + v.T))
	switch v.T {
	case query.String:
		b.WriteString(strconv.Itoa(len(v.S)))
		b.WriteByte(':')
		b.WriteString(v.S)
	case query.Float:
		b.WriteString(strconv.FormatFloat(v.F, 'g', -1, 64))
	default:
		b.WriteString(strconv.FormatInt(v.I, 10))
	}
	b.WriteByte(';')
}

// fold adds the tuple (pair) in e to group g of gs.
func (a *aggregator) fold(gs *groupSet, g *group, e *env) {
	for i, ag := range a.q.Aggs {
		s := &g.aggs[i]
		if ag.Arg == nil { // count(*)
			s.n++
			continue
		}
		v := eval(ag.Arg, e)
		if v.T == query.Null {
			continue
		}
		s.n++
		switch ag.Func {
		case "sum", "avg":
			if v.T == query.Float {
				s.fsum += v.F
			} else {
				s.isum += v.I
			}
		case "min":
			if s.n == 1 || lessValue(v, s.min) {
				s.min = v
			}
		case "max":
			if s.n == 1 || lessValue(s.max, v) {
				s.max = v
			}
		case "count":
		default: // quantiles
			if s.q == nil {
				s.q = &quantiles{}
				gs.grow(a, s.q.bytes())
			}
			before := s.q.bytes()
			s.q.add(v.Num())
			if d := s.q.bytes() - before; d != 0 {
				gs.grow(a, d)
			}
		}
	}
}

func lessValue(a, b query.Value) bool {
	c, ok := compareValues(a, b)
	return ok && c < 0
}

// result is the value of aggregate i of g.
func (a *aggregator) result(g *group, i int) query.Value {
	ag, s := a.q.Aggs[i], &g.aggs[i]
	switch ag.Func {
	case "count":
		return query.IntValue(s.n)
	}
	if s.n == 0 {
		return query.Value{}
	}
	switch ag.Func {
	case "sum":
		if ag.Type == query.Float {
			return query.FloatValue(s.fsum)
		}
		return query.Value{T: ag.Type, I: s.isum}
	case "avg":
		if ag.Type == query.Float {
			if ag.Arg.Type == query.Float {
				return query.FloatValue(s.fsum / float64(s.n))
			}
			return query.FloatValue(float64(s.isum) / float64(s.n))
		}
		return query.Value{T: ag.Type, I: int64(math.Round(float64(s.isum) / float64(s.n)))}
	case "min":
		return s.min
	case "max":
		return s.max
	}
	x, ok := s.q.at(ag.Q)
	if !ok {
		return query.Value{}
	}
	if ag.Type == query.Float {
		return query.FloatValue(x)
	}
	return query.Value{T: ag.Type, I: int64(math.Round(x))}
}

// rows renders a group set's groups as output rows, in the order of their
// GROUP BY values, with time t (a window's end). HAVING applies.
func (a *aggregator) rows(gs *groupSet, t int64, win [2]int64, out func(Row)) {
	groups := make([]*group, 0, len(gs.groups))
	for _, g := range gs.groups {
		groups = append(groups, g)
	}
	sort.Slice(groups, func(i, j int) bool { return keyLess(groups[i].key, groups[j].key) })
	e := &env{}
	for _, g := range groups {
		if a.ctl.halt() {
			return
		}
		e.aggs = e.aggs[:0]
		for i := range a.q.Aggs {
			e.aggs = append(e.aggs, a.result(g, i))
		}
		for i := range g.rep {
			e.tup[i] = nil
			if g.hasRep[i] {
				e.tup[i] = &g.rep[i]
			}
		}
		if a.q.Having != nil && !eval(a.q.Having, e).Truth() {
			continue
		}
		row := Row{Time: t}
		if a.q.Window != nil {
			row.Vals = append(row.Vals, query.TimeValue(win[0]), query.TimeValue(win[1]))
		}
		for _, it := range a.q.Items {
			row.Vals = append(row.Vals, eval(it.Expr, e))
		}
		out(row)
	}
}

func keyLess(a, b []query.Value) bool {
	for i := range a {
		if i >= len(b) {
			return false
		}
		c, ok := compareValues(a[i], b[i])
		if !ok {
			if a[i].T != b[i].T {
				return a[i].T < b[i].T
			}
			continue
		}
		if c != 0 {
			return c < 0
		}
	}
	return len(a) < len(b)
}

// advance emits and forgets the windows that end at or before watermark, in
// order of their start.
func (a *aggregator) advance(watermark int64, out func(Row)) {
	if a.cum != nil {
		return
	}
	var starts []int64
	size := int64(a.q.Window.Size)
	for s := range a.windows {
		if s+size <= watermark {
			starts = append(starts, s)
		}
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	for _, s := range starts {
		if !a.ctl.halt() {
			a.rows(a.windows[s], s+size, [2]int64{s, s + size}, out)
		}
		a.ctl.grow(-a.windows[s].bytes)
		delete(a.windows, s) // emitted, or abandoned: either way closed
	}
	// Every window that ends by the watermark is closed now, whether it had
	// tuples or not: a tuple for one of them is late.
	if watermark > a.closed {
		a.closed = watermark
	}
}

// running renders the whole run's groups so far (a query without window).
func (a *aggregator) running(t int64, out func(Row)) {
	if a.cum != nil {
		a.rows(a.cum, t, [2]int64{}, out)
	}
}
