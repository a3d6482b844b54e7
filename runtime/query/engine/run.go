package engine

import (
	"math"
	"time"

	"github.com/tigrisgo/tigris/runtime/query"
)

// Row is one output row: values in the order of the query's Schema, and the
// row's time (a window's end, the tuple's time for a row per tuple).
type Row struct {
	Time int64
	Vals []query.Value
}

// Stats count what a Runner saw and could not use.
type Stats struct {
	Tuples uint64 `json:"tuples"` // tuples pushed
	Rows   uint64 `json:"rows"`   // rows emitted
	// Late are tuples for windows already emitted; DroppedGroups tuples of
	// groups beyond MaxGroups; JoinDropped tuples pushed out of a full join
	// buffer.
	Late          uint64 `json:"late"`
	DroppedGroups uint64 `json:"droppedGroups"`
	JoinDropped   uint64 `json:"joinDropped"`
	// Abandoned counts the calls whose work a stop cut short (SetStop).
	Abandoned uint64 `json:"abandoned,omitempty"`
	// JoinPairs counts the pairs a window join made (before WHERE): what
	// Plan.JoinPairs estimates per second.
	JoinPairs uint64 `json:"joinPairs,omitempty"`
	// Memory is the bytes the runner holds now in its join buffers and
	// group tables, counted as they are allocated and freed (memory.go);
	// MemoryPeak the most it held.
	Memory     int64 `json:"memory"`
	MemoryPeak int64 `json:"memoryPeak"`
}

// pipeline runs one SELECT or trigger: its join, WHERE, grouping and
// output. A derived stream's pipeline feeds its rows to the pipeline that
// reads it.
type pipeline struct {
	q         *query.Query
	path      string // a derived stream's, as Leaf.Path; "" for the query's
	children  []*pipeline
	parent    *pipeline
	parentSrc int
	join      *joiner
	agg       *aggregator
	out       func(Row)
	limit     int
	emitted   int
	stats     *Stats
	ctl       *control
	env       env
	// firedCols are, per source, the columns a trigger's row shows.
	firedCols [2][]int
}

func newPipeline(q *query.Query) *pipeline { return &pipeline{q: q} }

// sourceName names source si as Leaf.Path does.
func (p *pipeline) sourceName(si int) string {
	if p.path != "" {
		return p.path + "/" + p.q.Sources[si].Alias
	}
	return p.q.Sources[si].Alias
}

// start readies p and its children to run, p's rows going to out.
func (p *pipeline) start(st *Stats, ctl *control, out func(Row), root bool) {
	p.stats, p.ctl, p.out = st, ctl, out
	if root {
		p.limit = p.q.Limit
	}
	if p.q.Join != nil {
		p.join = newJoiner(p.q, st, ctl)
	}
	if p.q.Aggregated() {
		p.agg = newAggregator(p.q, st)
		p.agg.ctl = ctl
	}
	if p.q.Kind == query.KindTrigger {
		for si, b := range p.q.Sources {
			for ci, c := range b.Stream.Columns {
				if !c.Fine {
					p.firedCols[si] = append(p.firedCols[si], ci)
				}
			}
		}
	}
	for _, c := range p.children {
		c := c
		c.start(st, ctl, func(r Row) {
			t := Tuple{Time: r.Time, Vals: r.Vals}
			c.parent.push(c.parentSrc, &t)
		}, false)
	}
}

func (p *pipeline) done() bool { return p.limit > 0 && p.emitted >= p.limit }

func (p *pipeline) emit(r Row) {
	if p.done() {
		return
	}
	p.emitted++
	p.out(r)
}

// push takes one tuple of source src.
func (p *pipeline) push(src int, t *Tuple) {
	if p.done() {
		return
	}
	if p.join == nil {
		p.process(t, nil)
		return
	}
	p.join.add(src, t, func(l, r *Tuple) { p.process(l, r) })
}

// process runs WHERE and then grouping or output on one tuple, or one pair
// of a join.
func (p *pipeline) process(l, r *Tuple) {
	e := &p.env
	e.tup[0], e.tup[1] = l, r
	e.aggs = nil
	defer func() { e.tup[0], e.tup[1] = nil, nil }()
	if p.q.Where != nil && !eval(p.q.Where, e).Truth() {
		return
	}
	t := l.Time
	if r != nil && r.Time > t {
		t = r.Time
	}
	switch {
	case p.q.Kind == query.KindTrigger:
		row := Row{Time: t, Vals: []query.Value{query.StringValue(p.q.Name)}}
		for si, cols := range p.firedCols {
			for _, ci := range cols {
				row.Vals = append(row.Vals, e.tup[si].col(ci))
			}
		}
		p.emit(row)
	case p.agg != nil:
		p.agg.add(e, t)
	default:
		row := Row{Time: t, Vals: make([]query.Value, 0, len(p.q.Items))}
		for _, it := range p.q.Items {
			row.Vals = append(row.Vals, eval(it.Expr, e))
		}
		p.emit(row)
	}
}

// advance tells p (and first its children, whose rows it reads) that no
// tuple older than watermark will come.
func (p *pipeline) advance(watermark int64) {
	for _, c := range p.children {
		c.advance(watermark)
	}
	if p.agg != nil {
		p.agg.advance(watermark, p.emit)
	}
	if p.join != nil {
		p.join.evict(watermark)
	}
}

// Runner runs a Plan: the caller pushes the tuples of its leaves, in about
// the order of their times, and advances the watermark; rows come out
// through the function given to NewRunner. It is not safe for concurrent
// use; a Plan runs once.
type Runner struct {
	plan  *Plan
	root  *pipeline
	stats Stats
	ctl   control
	out   func(Row)
}

// NewRunner starts running p; its rows go to out.
func NewRunner(p *Plan, out func(Row)) *Runner {
	r := &Runner{plan: p, out: out}
	r.ctl.stats = &r.stats
	if len(p.Leaves) > 0 {
		root := p.Leaves[0].pipe
		for root.parent != nil {
			root = root.parent
		}
		r.root = root
	} else {
		r.root = newPipeline(p.Query)
	}
	r.root.start(&r.stats, &r.ctl, func(row Row) {
		r.stats.Rows++
		out(row)
	}, true)
	if r.root.q.Kind == query.KindTrigger {
		r.root.limit = 0
	}
	return r
}

// Push hands the runner a tuple of leaf i (an index of Plan.Leaves).
func (r *Runner) Push(i int, t *Tuple) {
	r.stats.Tuples++
	l := r.plan.Leaves[i]
	l.pipe.push(l.src, t)
}

// Advance says no tuple older than watermark (Unix ns) will be pushed:
// windows that end by it are emitted and join buffers forget what no later
// tuple can pair with.
func (r *Runner) Advance(watermark int64) { r.root.advance(watermark) }

// Running emits the current rows of a query that aggregates without a
// window, with time now; other queries emit nothing.
func (r *Runner) Running(now int64) {
	if r.root.agg != nil && r.root.agg.cum != nil {
		// Snapshots of one growing result: LIMIT does not count them.
		r.root.agg.running(now, func(row Row) {
			r.stats.Rows++
			r.out(row)
		})
	}
}

// Finish ends the run: every open window is emitted, and the rows of a
// query without window, with time now.
func (r *Runner) Finish(now int64) {
	r.Advance(math.MaxInt64)
	r.Running(now)
}

// Done reports whether the query's LIMIT has been reached.
func (r *Runner) Done() bool { return r.root.done() }

// Stats returns what the runner counted so far.
func (r *Runner) Stats() Stats {
	st := r.stats
	st.Memory, st.MemoryPeak = r.ctl.mem, r.ctl.peak
	return st
}

// MinJoinWindow is the shortest a join's window is cut to by ShortenJoins.
const MinJoinWindow = 10 * time.Millisecond

// ShortenJoins divides the window of every window join of the plan by
// factor (at least 2), to no less than MinJoinWindow (nor, for a shorter
// window, than as written): a tuple then pairs only with the partners that
// close, and the buffers forget the older ones at the next Advance. It
// returns the longest window now in force and whether any was shortened;
// 0 and false when the plan has no join. Pairs of times farther apart are
// no longer made: a caller that sheds load this way says so.
func (r *Runner) ShortenJoins(factor int64) (time.Duration, bool) {
	if factor < 2 {
		factor = 2
	}
	var longest int64
	changed := false
	var walk func(p *pipeline)
	walk = func(p *pipeline) {
		for _, c := range p.children {
			walk(c)
		}
		j := p.join
		if j == nil {
			return
		}
		floor := int64(MinJoinWindow)
		if w := int64(p.q.Join.Within); w < floor {
			floor = w
		}
		if w := j.within / factor; j.within > floor {
			if w < floor {
				w = floor
			}
			j.within, changed = w, true
		}
		if j.within > longest {
			longest = j.within
		}
	}
	walk(r.root)
	return time.Duration(longest), changed
}
