package engine

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/tigrisgo/tigris/runtime/query"
)

// Limits bound what one plan may acquire.
type Limits struct {
	// MaxProbes is the most probes a query may switch on or tap (a trigger's
	// FINE actions count too); 0 means no limit.
	MaxProbes int
	// Budget is the most CPU a query's estimated cost may take, as a share of
	// one core (0.05 is 5 %); 0 means no limit. A plan whose cost cannot be
	// estimated (probes never on) passes.
	Budget float64
}

// Plan is how a query will be answered: which probes and samplers it
// acquires (its leaves), at which mode, with which predicates pushed down to
// the probes, and what that is estimated to cost.
type Plan struct {
	Query  *query.Query
	Leaves []*Leaf
	// Actions are the probes each FINE action of a trigger would switch, in
	// the order of Query.Actions (nil for other actions).
	Actions [][]*Probe
	// CostNs is the estimated CPU cost in ns per second, and Unknown the
	// probes whose rate is unknown (never on: their cost is not in CostNs).
	CostNs  float64
	Unknown int
	// Costs are the per-call costs the estimate used.
	Costs Costs
	// Joins are the plan's window joins and the pairs each is estimated to
	// make per second (their cost, at Costs.TupleNs a pair, is in CostNs).
	Joins []JoinEstimate
	// Refused says why the plan is over the limits; "" when it is within.
	Refused string
	// Notes explain choices, e.g. what could not be pushed down.
	Notes []string
	// Nothing says why the query can produce no tuple at all ("" when it
	// can): a calls source that no probe of the program can feed (no probe
	// matches WHERE's static conditions, or no call can pass its
	// conditions), read alone or by a join, whose other side then has no
	// partner. The program's probes are compiled in, so such a query stays
	// empty for the program's life: a running program refuses it (package
	// live), a trace's catalog answers it with no rows.
	Nothing string
	// acquired are the probes of each source, while the plan is made, and
	// empty why a source that acquired none can have no tuple.
	acquired map[source][]*ProbeNeed
	empty    map[source]string
}

// Leaf is one source that takes data from the program: a calls source (its
// probes) or a sampled runtime stream (its sampler).
type Leaf struct {
	// Path names the source: its alias, inside a derived stream
	// "stream/alias".
	Path   string
	Stream *query.StreamDef
	Every  time.Duration
	Probes []*ProbeNeed
	// pipe and src are where its tuples go.
	pipe *pipeline
	src  int
}

// ProbeNeed is one probe a calls leaf acquires.
type ProbeNeed struct {
	Probe *Probe
	// Fine asks for fine mode (the query reads trace or depth).
	Fine bool
	// MinNs and MaxNs bound the durations delivered (inclusive; MaxNs 0: no
	// bound); Require and Forbid are error/panic facts a delivered call must
	// and must not have. These are decided at the probe's exit.
	MinNs, MaxNs    int64
	Require, Forbid CallFlags
	// pushed are the conjuncts these come from (the first maxPushed of
	// them, Pushed names them), PushedMore how many more there are.
	pushed     []*query.Node
	PushedMore int
	where      *where
	// Pass is the estimated share of calls that pass the pushed-down
	// conditions, -1 when unknown.
	Pass float64
}

// New plans q against cat. Plans over the limits are returned with Refused
// set, so the caller can show them; errors are for queries that cannot run
// at all here.
func New(q *query.Query, cat Catalog, lim Limits) (*Plan, error) {
	if q.Kind == query.KindStream {
		return nil, fmt.Errorf("CREATE STREAM %s defines a stream; it runs when a query reads it", q.Name)
	}
	p := &Plan{Query: q, acquired: map[source][]*ProbeNeed{}, empty: map[source]string{}}
	probes := cat.Probes()
	root, err := p.build(q, "", probes, nil)
	if err != nil {
		return nil, err
	}
	p.Nothing = p.nothing(root)
	for _, a := range q.Actions {
		var hit []*Probe
		if a.Pointcut != nil {
			for _, pr := range probes {
				if pr.Sig != nil && a.Pointcut.MatchExecution(pr.Sig) {
					hit = append(hit, pr)
				}
			}
			if len(hit) == 0 {
				p.Notes = append(p.Notes, fmt.Sprintf("%s matches no probe of the program", a.Text))
			}
		}
		p.Actions = append(p.Actions, hit)
	}
	p.acquired, p.empty = nil, nil
	p.estimate(cat.Costs())
	p.check(lim)
	return p, nil
}

// source is one source of one query: the leaves of a plan that reads a
// derived stream more than once share its acquisition.
type source struct {
	q  *query.Query
	si int
}

// build makes the pipeline of q (a derived stream's when path is set) and
// its leaves.
func (p *Plan) build(q *query.Query, path string, probes []*Probe, parent *pipeline) (*pipeline, error) {
	pipe := newPipeline(q)
	pipe.path = path
	for si, b := range q.Sources {
		name := b.Alias
		if path != "" {
			name = path + "/" + b.Alias
		}
		switch {
		case b.Derived != nil:
			child, err := p.build(b.Derived, name, probes, pipe)
			if err != nil {
				return nil, err
			}
			child.parent, child.parentSrc = pipe, si
			pipe.children = append(pipe.children, child)
		case b.Stream.Sampled:
			p.Leaves = append(p.Leaves, &Leaf{Path: name, Stream: b.Stream, Every: b.Every, pipe: pipe, src: si})
		default:
			leaf := &Leaf{Path: name, Stream: b.Stream, pipe: pipe, src: si}
			key := source{q, si}
			needs, ok := p.acquired[key]
			if !ok {
				var undecided int
				var why string
				needs, undecided, why = acquire(q, si, probes)
				p.acquired[key] = needs
				if why != "" {
					p.empty[key] = why
				}
				if undecided > 0 {
					p.Notes = append(p.Notes, fmt.Sprintf("%s: %d condition(s) on static columns are too large to decide for each of %d probes (%d node evaluations at most): they choose no probes and are checked on each call", name, undecided, len(probes), MaxPlanWork))
				}
			}
			leaf.Probes = needs
			if why := p.empty[key]; why != "" && !ok {
				p.Notes = append(p.Notes, why)
			}
			p.Leaves = append(p.Leaves, leaf)
		}
	}
	return pipe, nil
}

// acquire decides, probe by probe, whether source si of q needs it and
// what can be decided at its exit. The WHERE condition is evaluated with the
// probe's static columns known: false leaves the probe alone; what remains
// of each conjunct is pushed down when it is a duration bound or an
// error/panic fact of this source.
// It reports how many conjuncts were too large to decide per probe
// (MaxPlanWork; acquire.go says what this costs).
// When it acquires none, it says why (where.nothing).
func acquire(q *query.Query, si int, probes []*Probe) ([]*ProbeNeed, int, string) {
	w := prepare(q, si)
	w.bound(len(probes))
	var out []*ProbeNeed
	for _, pr := range probes {
		if n := w.need(pr); n != nil {
			out = append(out, n)
		}
	}
	if len(out) > 0 {
		return out, w.undecided, ""
	}
	return nil, w.undecided, w.nothing(q.Sources[si].Alias, probes)
}

// nothing says why the pipeline can produce no tuple, "" when it can: a
// source that can have none, read alone or by a join.
func (p *Plan) nothing(pipe *pipeline) string {
	for si := range pipe.q.Sources {
		if why := p.sourceNothing(pipe, si); why != "" {
			return why
		}
	}
	return ""
}

func (p *Plan) sourceNothing(pipe *pipeline, si int) string {
	b := pipe.q.Sources[si]
	if b.Derived != nil {
		for _, c := range pipe.children {
			if c.parentSrc == si {
				return p.nothing(c)
			}
		}
		return ""
	}
	return p.empty[source{pipe.q, si}]
}

// readsFine says whether q reads a fine column of source si (trace, depth,
// trace_id).
func readsFine(q *query.Query, si int) bool {
	var nodes []*query.Node
	nodes = append(nodes, q.Where, q.Having)
	nodes = append(nodes, q.GroupBy...)
	for _, it := range q.Items {
		nodes = append(nodes, it.Expr)
	}
	for _, a := range q.Aggs {
		nodes = append(nodes, a.Arg)
	}
	found := false
	for _, n := range nodes {
		walk(n, func(n *query.Node) {
			if n.Kind == query.NCol && n.Src == si && q.Sources[si].Stream == query.Calls && query.Calls.Columns[n.Col].Fine {
				found = true
			}
		})
	}
	return found
}

func walk(n *query.Node, f func(*query.Node)) {
	if n == nil {
		return
	}
	f(n)
	for _, k := range n.Kids {
		walk(k, f)
	}
}

// conjuncts flattens the top-level ANDs of n.
func conjuncts(n *query.Node) []*query.Node {
	if n.Kind != query.NAnd {
		return []*query.Node{n}
	}
	var out []*query.Node
	for _, k := range n.Kids {
		out = append(out, conjuncts(k)...)
	}
	return out
}

var (
	litTrue  = &query.Node{Kind: query.NLit, Type: query.Bool, Val: query.BoolValue(true), Text: "TRUE"}
	litFalse = &query.Node{Kind: query.NLit, Type: query.Bool, Val: query.BoolValue(false), Text: "FALSE"}
)

// simplify folds what the probe's static columns decide in n: a node whose
// value is known becomes a literal. Columns of other sources, and dynamic
// columns, stay.
func simplify(n *query.Node, si int, pr *Probe) *query.Node {
	switch n.Kind {
	case query.NLit:
		return n
	case query.NCol:
		if n.Src == si && isStatic(n.Col) {
			t := &Tuple{Call: Call{Probe: pr}}
			v := t.col(n.Col)
			return &query.Node{Kind: query.NLit, Type: v.T, Val: v, Text: v.String()}
		}
		return n
	case query.NAnd, query.NOr:
		var kids []*query.Node
		for _, k := range n.Kids {
			r := simplify(k, si, pr)
			if r.Kind == query.NLit {
				t := r.Val.Truth()
				if n.Kind == query.NAnd && !t {
					return litFalse
				}
				if n.Kind == query.NOr && t {
					return litTrue
				}
				continue
			}
			kids = append(kids, r)
		}
		switch len(kids) {
		case 0:
			if n.Kind == query.NAnd {
				return litTrue
			}
			return litFalse
		case 1:
			return kids[0]
		}
		m := *n
		m.Kids = kids
		m.Text = joinTexts(kids, n.Kind)
		return &m
	case query.NMatches:
		if n.Kids[0].Src == si {
			if pr.Sig == nil {
				return litFalse
			}
			return boolLit(n.Pointcut.MatchExecution(pr.Sig))
		}
		return n
	}
	// Other operators: known when every operand is.
	kids := make([]*query.Node, len(n.Kids))
	known := true
	for i, k := range n.Kids {
		kids[i] = simplify(k, si, pr)
		if kids[i].Kind != query.NLit {
			known = false
		}
	}
	if !known {
		return n
	}
	m := *n
	m.Kids = kids
	v := eval(&m, &env{})
	return &query.Node{Kind: query.NLit, Type: v.T, Val: v, Text: v.String()}
}

func boolLit(b bool) *query.Node {
	if b {
		return litTrue
	}
	return litFalse
}

// isStatic says whether calls column c is known before a call.
func isStatic(c int) bool { return query.Calls.Columns[c].Static }

// push folds n into need when the probe's exit can decide it: a comparison
// of this source's duration with a constant, or its error or panicked fact
// (possibly negated), or an AND of those. It reports whether it did.
func push(n *query.Node, si int, need *ProbeNeed) bool {
	isCol := func(k *query.Node, col int) bool { return k.Kind == query.NCol && k.Src == si && k.Col == col }
	switch n.Kind {
	case query.NAnd:
		// All or nothing: a partial push would still be right (the query
		// applies the whole condition), but the plan would say less.
		saved := *need
		for _, k := range n.Kids {
			if !push(k, si, need) {
				*need = saved
				return false
			}
		}
		return true
	case query.NCol:
		switch {
		case isCol(n, query.CallError):
			need.Require |= CallError
			return true
		case isCol(n, query.CallPanicked):
			need.Require |= CallPanic
			return true
		}
	case query.NNot:
		k := n.Kids[0]
		switch {
		case isCol(k, query.CallError):
			need.Forbid |= CallError
			return true
		case isCol(k, query.CallPanicked):
			need.Forbid |= CallPanic
			return true
		}
	case query.NCmp:
		a, b, op := n.Kids[0], n.Kids[1], n.Op
		if b.Kind != query.NLit {
			a, b, op = b, a, flip(op)
		}
		if b.Kind != query.NLit {
			return false
		}
		switch {
		case isCol(a, query.CallDuration) && b.Type == query.Duration:
			return bound(need, op, b.Val.I)
		case (isCol(a, query.CallError) || isCol(a, query.CallPanicked)) && b.Type == query.Bool && (op == "=" || op == "!="):
			flag := CallError
			if a.Col == query.CallPanicked {
				flag = CallPanic
			}
			if b.Val.Truth() == (op == "=") {
				need.Require |= flag
			} else {
				need.Forbid |= flag
			}
			return true
		}
	}
	return false
}

func flip(op string) string {
	switch op {
	case "<":
		return ">"
	case ">":
		return "<"
	case "<=":
		return ">="
	case ">=":
		return "<="
	}
	return op
}

// bound narrows need's duration range by "duration op d" (inclusive bounds;
// a strict bound is the next nanosecond).
func bound(need *ProbeNeed, op string, d int64) bool {
	lo, hi := int64(0), int64(0)
	switch op {
	case ">":
		lo = d + 1
	case ">=":
		lo = d
	case "<":
		hi = d - 1
	case "<=":
		hi = d
	case "=":
		lo, hi = d, d
	default:
		return false
	}
	if lo > need.MinNs {
		need.MinNs = lo
	}
	if hi != 0 && (need.MaxNs == 0 || hi < need.MaxNs) {
		need.MaxNs = hi
		if hi <= 0 {
			need.MaxNs = -1 // nothing passes; -1 keeps "no bound" (0) apart
		}
	}
	return true
}

// estimate sets CostNs and each need's Pass from the probes' statistics.
func (p *Plan) estimate(c Costs) {
	p.Costs = c
	seen := map[uint32]bool{}
	for _, l := range p.Leaves {
		if l.Every > 0 {
			p.CostNs += c.SampleNs * float64(time.Second) / float64(l.Every)
			continue
		}
		for _, n := range l.Probes {
			pr := n.Probe
			if pr.Rate < 0 {
				p.Unknown++
				continue
			}
			n.Pass = passShare(n, pr)
			per := 0.0
			if !seen[pr.ID] {
				if pr.Mode == "off" {
					per += c.CoarseNs
				}
				if n.Fine && pr.Mode != "fine" {
					per += c.FineNs
				}
				seen[pr.ID] = true
			}
			per += n.Pass * c.TupleNs
			p.CostNs += pr.Rate * per
		}
	}
	for _, hit := range p.Actions {
		for _, pr := range hit {
			if pr.Rate > 0 && pr.Mode != "fine" {
				p.CostNs += pr.Rate * c.FineNs // while the action holds
			}
		}
	}
	p.estimateJoins()
	for _, j := range p.Joins {
		p.CostNs += j.Pairs * c.TupleNs
	}
}

// JoinEstimate is what a window join is expected to do: the tuples per
// second each side delivers (Rates), the window, and the pairs it makes per
// second. Keyed is the equality its index uses ("" for none); Pairs does not
// count on it (how many values the key takes is not known), so it is an
// upper bound then.
type JoinEstimate struct {
	Sources string // the two sources, as the plan names them
	Rates   [2]float64
	Window  time.Duration
	Pairs   float64
	Keyed   string
}

// estimateJoins fills Joins. A pair is made once, when the later of its
// tuples arrives, so a join makes r0·r1·w pairs a second per side that may
// come first (both without FOLLOWED BY): every pair of tuples within the
// window. A side holds at most MaxJoinBuffer tuples, so a tuple meets at
// most that many. Rates are those of the probes' coarse statistics times the
// share that passes the pushed-down conditions, 1/interval for a sampler,
// and, for a derived stream, what its own sources deliver (a join: its
// pairs; a window with GROUP BY at most MaxGroups rows a window).
func (p *Plan) estimateJoins() {
	seen := map[*pipeline]bool{}
	for _, l := range p.Leaves {
		for pipe := l.pipe; pipe != nil && !seen[pipe]; pipe = pipe.parent {
			seen[pipe] = true
			if pipe.q.Join == nil {
				continue
			}
			j := JoinEstimate{Window: pipe.q.Join.Within, Sources: pipe.sourceName(0) + ", " + pipe.sourceName(1)}
			j.Rates[0], j.Rates[1] = p.sourceRate(pipe, 0), p.sourceRate(pipe, 1)
			j.Pairs = pairRate(pipe.q.Join, j.Rates)
			if k := joinKey(pipe.q); k != nil {
				j.Keyed = k.Text
			}
			p.Joins = append(p.Joins, j)
		}
	}
}

// pairRate is the pairs per second of a join whose sides deliver rates.
func pairRate(js *query.JoinSpec, rates [2]float64) float64 {
	w := js.Within.Seconds()
	met := func(other float64) float64 { return math.Min(other*w, MaxJoinBuffer) }
	switch js.Followed {
	case 1: // the left comes first: pairs are made as the right arrives
		return rates[1] * met(rates[0])
	case 2:
		return rates[0] * met(rates[1])
	}
	return rates[0]*met(rates[1]) + rates[1]*met(rates[0])
}

// sourceRate estimates the tuples per second source si of pipe delivers.
func (p *Plan) sourceRate(pipe *pipeline, si int) float64 {
	for _, c := range pipe.children {
		if c.parentSrc == si {
			return p.outputRate(c)
		}
	}
	rate := 0.0
	for _, l := range p.Leaves {
		if l.pipe != pipe || l.src != si {
			continue
		}
		if l.Every > 0 {
			return float64(time.Second) / float64(l.Every)
		}
		for _, n := range l.Probes {
			if n.Probe.Rate > 0 {
				pass := n.Pass
				if pass < 0 {
					pass = 1
				}
				rate += n.Probe.Rate * pass
			}
		}
	}
	return rate
}

// outputRate estimates the rows per second pipe (a derived stream's) gives
// its reader, counting all it takes as passing WHERE.
func (p *Plan) outputRate(pipe *pipeline) float64 {
	in := p.sourceRate(pipe, 0)
	if pipe.q.Join != nil {
		in = pairRate(pipe.q.Join, [2]float64{in, p.sourceRate(pipe, 1)})
	}
	if w := pipe.q.Window; pipe.q.Aggregated() && w != nil {
		slide := w.Slide
		if slide <= 0 {
			slide = w.Size
		}
		groups := 1.0
		if len(pipe.q.GroupBy) > 0 {
			groups = MaxGroups
		}
		return math.Min(in, groups*float64(time.Second)/float64(slide))
	}
	return in
}

// passShare estimates the share of calls in need's duration range from the
// probe's mean and deviation (a normal approximation) and its facts.
func passShare(n *ProbeNeed, pr *Probe) float64 {
	share := 1.0
	if n.MinNs > 0 || n.MaxNs != 0 {
		cdf := func(x float64) float64 {
			if pr.SDNs <= 0 {
				if x < pr.MeanNs {
					return 0
				}
				return 1
			}
			return 0.5 * math.Erfc(-(x-pr.MeanNs)/(pr.SDNs*math.Sqrt2))
		}
		hi := 1.0
		if n.MaxNs != 0 {
			hi = cdf(float64(n.MaxNs))
		}
		share = hi - cdf(float64(n.MinNs))
		if share < 0 {
			share = 0
		}
	}
	if n.Require != 0 {
		share *= 0.1 // errors and panics are rare; no statistic says how rare per probe here
	}
	return share
}

// check sets Refused when the plan is over lim.
func (p *Plan) check(lim Limits) {
	ids := map[uint32]bool{}
	for _, l := range p.Leaves {
		for _, n := range l.Probes {
			ids[n.Probe.ID] = true
		}
	}
	for _, hit := range p.Actions {
		for _, pr := range hit {
			ids[pr.ID] = true
		}
	}
	switch {
	case lim.MaxProbes > 0 && len(ids) > lim.MaxProbes:
		p.Refused = fmt.Sprintf("the query would acquire %d probes; the most is %d (queries.max-probes): narrow WHERE with function, package or MATCHES", len(ids), lim.MaxProbes)
	case lim.Budget > 0 && p.CostNs > lim.Budget*float64(time.Second):
		p.Refused = fmt.Sprintf("the query's estimated cost, %s of one core, is over the budget of %s (queries.budget): push down a duration bound or watch fewer functions", percent(p.CostNs/float64(time.Second)), percent(lim.Budget))
	}
}

// Probes lists the distinct probes the plan acquires, by id.
func (p *Plan) Probes() []*Probe {
	m := map[uint32]*Probe{}
	for _, l := range p.Leaves {
		for _, n := range l.Probes {
			m[n.Probe.ID] = n.Probe
		}
	}
	out := make([]*Probe, 0, len(m))
	for _, pr := range m {
		out = append(out, pr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func percent(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.4f", f*100), "0"), ".") + "%"
}
