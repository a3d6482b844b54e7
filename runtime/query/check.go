package query

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"

	"github.com/tigrisgo/tigris/runtime/pointcut"
)

// Kind is what a statement does.
type Kind uint8

const (
	KindSelect  Kind = iota // a continuous query: rows
	KindStream              // CREATE STREAM: a name for a derived stream
	KindTrigger             // CREATE TRIGGER: actions when a condition holds
)

// Query is one checked statement: names resolved, types known, aggregates
// collected. Values are immutable and safe for concurrent use.
type Query struct {
	Kind    Kind
	Explain bool
	// Name is the stream's or trigger's name; "" for a SELECT.
	Name string
	// Text is the statement in canonical form (keywords upper case, one
	// space between tokens), what EXPLAIN and listings show.
	Text string
	// Sources are one stream, or the two of a join (left first).
	Sources []*Bound
	Join    *JoinSpec
	// Where is the WHERE condition, or a trigger's WHEN; nil when none.
	Where *Node
	// Items are the output columns before window bounds; Aggs the aggregate
	// calls they and Having use.
	Items   []*OutItem
	Aggs    []*Agg
	GroupBy []*Node
	Window  *WindowSpec
	Having  *Node
	// Limit ends the query after that many rows; 0 means none.
	Limit   int
	Actions []*ActionSpec
	// Schema is the output: a windowed aggregate adds window_start and
	// window_end before the items.
	Schema []Column
	// derived is how many derived streams deep the query reads.
	derived int
}

// Aggregated reports whether the query computes aggregates (or groups).
func (q *Query) Aggregated() bool { return len(q.Aggs) > 0 || len(q.GroupBy) > 0 }

// Bound is a resolved source.
type Bound struct {
	Alias  string
	Stream *StreamDef
	// Every is the sampling interval of a runtime stream.
	Every time.Duration
	// Derived is the query behind a CREATE STREAM name, nil for built-ins.
	Derived *Query
}

// JoinSpec is a checked window join.
type JoinSpec struct {
	Within time.Duration
	// Followed is 0 for none, 1 when the left source's tuple must come first,
	// 2 when the right one's must.
	Followed int
}

// WindowSpec is a checked window; Slide equals Size for a tumbling window.
type WindowSpec struct{ Size, Slide time.Duration }

// OutItem is one output column and how it is computed.
type OutItem struct {
	Name string
	Expr *Node
}

// Agg is one aggregate call: Func over Arg (nil for count(*)), with Q the
// quantile of a percentile.
type Agg struct {
	Func string
	Arg  *Node
	Q    float64
	Type Type
	Text string
}

// ActionSpec is a checked trigger action.
type ActionSpec struct {
	// Fine is the pointcut to switch to fine; Pointcut its parsed form.
	Fine     string
	Pointcut *pointcut.Pointcut
	// Sample is the runtime stream to sample every Every.
	Sample *StreamDef
	Every  time.Duration
	For    time.Duration
	// Snapshot copies the recent fine records.
	Snapshot bool
	Text     string
}

// NodeKind is the operation of a Node.
type NodeKind uint8

const (
	NLit     NodeKind = iota // Val
	NCol                     // column Col of source Src
	NAnd                     // all Kids
	NOr                      // any Kid
	NNot                     // not Kids[0]
	NCmp                     // Kids[0] Op Kids[1]
	NIn                      // Kids[0] in Kids[1:] (Negated: not in)
	NLike                    // Kids[0] like Pattern (Negated: not like)
	NMatches                 // function matches Pointcut
	NArith                   // Kids[0] Op Kids[1], Op one of + - * /
	NNeg                     // -Kids[0]
	NAgg                     // the value of aggregate Agg (after grouping)
)

// Node is a typed expression.
type Node struct {
	Kind     NodeKind
	Type     Type
	Val      Value
	Src, Col int
	Op       string
	Kids     []*Node
	Negated  bool
	Pattern  string
	Pointcut *pointcut.Pointcut
	Agg      int
	// Text is the expression in canonical form: a slice of its statement's
	// Text, so all the nodes' texts together cost what the statement's does.
	Text string
	Pos  lexer.Position
}

// Streams are derived streams by name (CREATE STREAM), which statements may
// read.
type Streams map[string]*Query

// Compile parses and checks a query text. defined are the streams created
// earlier (nil: none); the script's own CREATE STREAMs are visible to the
// statements after them. Errors are *Error, at the offending token.
func Compile(text string, defined Streams) ([]*Query, error) {
	return CompileStop(text, defined, nil)
}

// CompileStop is Compile, asking stop (nil: never) now and then whether to
// give up: once it says true, CompileStop returns ErrStopped within a
// bounded amount of work (stop.go), whatever the text.
func CompileStop(text string, defined Streams, stop func() bool) ([]*Query, error) {
	var st *stopper
	if stop != nil {
		st = &stopper{stop: stop}
	}
	return compile(text, defined, st)
}

func compile(text string, defined Streams, st *stopper) ([]*Query, error) {
	s, err := parse(text, st)
	if err != nil {
		return nil, err
	}
	c := &checker{text: text, streams: Streams{}, stop: st}
	for k, v := range defined {
		c.streams[k] = v
	}
	var out []*Query
	for _, st := range s.Statements {
		q, err := c.statement(st)
		if err != nil {
			return nil, err
		}
		if err := c.normalizeTraceIDs(q); err != nil {
			return nil, err
		}
		out = append(out, q)
		if q.Kind == KindStream && !q.Explain {
			c.streams[q.Name] = q
		}
	}
	return out, nil
}

type checker struct {
	text    string
	streams Streams
	stop    *stopper
}

func (c *checker) errorf(pos lexer.Position, format string, args ...any) error {
	return errorAt(c.text, pos, format, args...)
}

// inString reports a pointcut's error at its position inside the quoted
// string s (exact when the pattern has no quote or newline before it).
func (c *checker) inString(s *Text, what string, err error) error {
	pos, msg := s.Pos, err.Error()
	var pe participle.Error
	if errors.As(err, &pe) {
		msg = pe.Message()
		if in := pe.Position(); in.Line == 1 {
			pos.Column += in.Column // past the opening quote
		}
	}
	return c.errorf(pos, "%s %s: %s", what, quote(s.Value), msg)
}

func (c *checker) statement(st *Statement) (*Query, error) {
	if c.stop.step() {
		return nil, ErrStopped
	}
	var q *Query
	var err error
	switch {
	case st.Select != nil:
		q, err = c.selectQuery(st.Select, 0, "", "")
	case st.Stream != nil:
		if builtin(st.Stream.Name) != nil || isKeyword(st.Stream.Name) {
			return nil, c.errorf(st.Stream.Pos, "%q names a built-in stream; choose another name", st.Stream.Name)
		}
		if _, dup := c.streams[st.Stream.Name]; dup {
			return nil, c.errorf(st.Stream.Pos, "stream %q exists already", st.Stream.Name)
		}
		q, err = c.selectQuery(st.Stream.Select, 0, "CREATE STREAM "+st.Stream.Name+" AS (", ")")
		if err == nil {
			if q.Limit > 0 {
				return nil, c.errorf(st.Stream.Select.Pos, "a stream has no LIMIT (the query that reads it may have one)")
			}
			if q.Aggregated() && q.Window == nil {
				return nil, c.errorf(st.Stream.Select.Pos, "a stream that aggregates needs a WINDOW: without one its rows would only come out when it ends")
			}
			q.Kind, q.Name = KindStream, st.Stream.Name
		}
	case st.Trigger != nil:
		q, err = c.trigger(st.Trigger)
	}
	if err != nil {
		return nil, err
	}
	q.Explain = st.Explain
	return q, nil
}

// scope is what names mean inside one SELECT or trigger.
type scope struct {
	sources []*Bound
	// aggs collects aggregate calls, nil where aggregates are not allowed;
	// aggIndex finds one by its text.
	aggs     *[]*Agg
	aggIndex map[string]int
	aggWhy   string
	groupBy  []*Node
}

func (c *checker) from(f *From, depth int) ([]*Bound, *JoinSpec, error) {
	left, err := c.source(f.Left, depth)
	if err != nil {
		return nil, nil, err
	}
	srcs := []*Bound{left}
	if f.Join == nil {
		return srcs, nil, nil
	}
	right, err := c.source(f.Join.Right, depth)
	if err != nil {
		return nil, nil, err
	}
	if left.Alias == right.Alias {
		return nil, nil, c.errorf(f.Join.Right.Pos, "both sides of the join are called %q: name them, as in calls a WINDOW JOIN calls b", left.Alias)
	}
	srcs = append(srcs, right)
	j := &JoinSpec{Within: time.Duration(f.Join.Within)}
	if j.Within <= 0 || j.Within > MaxSpan {
		return nil, nil, c.errorf(f.Join.Pos, "join window %v: want more than 0 and at most %v", j.Within, MaxSpan)
	}
	if fb := f.Join.Followed; fb != nil {
		switch {
		case fb.First == left.Alias && fb.Then == right.Alias:
			j.Followed = 1
		case fb.First == right.Alias && fb.Then == left.Alias:
			j.Followed = 2
		default:
			return nil, nil, c.errorf(fb.Pos, "FOLLOWED BY names the joined sources, %s and %s, not %s and %s", left.Alias, right.Alias, fb.First, fb.Then)
		}
	}
	return srcs, j, nil
}

func (c *checker) source(s *Source, depth int) (*Bound, error) {
	b := &Bound{Alias: s.Alias}
	if s.Sample != nil {
		def := builtin(s.Sample.Stream)
		switch {
		case def == nil:
			return nil, c.errorf(s.Sample.Pos, "no runtime stream %q (SAMPLE reads %s)", s.Sample.Stream, sampledNames())
		case !def.Sampled:
			return nil, c.errorf(s.Sample.Pos, "%s is a stream of events, read it without SAMPLE (SAMPLE reads %s)", def.Name, sampledNames())
		}
		every := time.Duration(s.Sample.Every)
		if every < MinSample || every > MaxSpan {
			return nil, c.errorf(s.Sample.Pos, "sampling interval %v: want %v to %v", every, MinSample, MaxSpan)
		}
		b.Stream, b.Every = def, every
		if b.Alias == "" {
			b.Alias = def.Name
		}
		return b, nil
	}
	if b.Alias == "" {
		b.Alias = s.Name
	}
	if def := builtin(s.Name); def != nil {
		if def.Sampled {
			return nil, c.errorf(s.Pos, "%s has a value at every instant: read it as SAMPLE(%s, 1s)", def.Name, def.Name)
		}
		b.Stream = def
		return b, nil
	}
	d, ok := c.streams[s.Name]
	if !ok {
		return nil, c.errorf(s.Pos, "no stream %q (built in: %s%s)", s.Name, builtinNames(), c.definedNames())
	}
	if d.derived+1 > MaxDerived {
		return nil, c.errorf(s.Pos, "reading %s goes through %d derived streams; the most is %d", s.Name, d.derived+1, MaxDerived)
	}
	b.Derived = d
	b.Stream = &StreamDef{Name: d.Name, Doc: "derived: CREATE STREAM " + d.Name, Columns: d.Schema}
	return b, nil
}

func sampledNames() string {
	var n []string
	for _, s := range Builtin {
		if s.Sampled {
			n = append(n, s.Name)
		}
	}
	return strings.Join(n, ", ")
}

func builtinNames() string {
	var n []string
	for _, s := range Builtin {
		n = append(n, s.Name)
	}
	return strings.Join(n, ", ")
}

func (c *checker) definedNames() string {
	if len(c.streams) == 0 {
		return ""
	}
	var n []string
	for k := range c.streams {
		n = append(n, k)
	}
	sort.Strings(n)
	return "; created: " + strings.Join(n, ", ")
}

// selectQuery checks a SELECT; its Text is prefix, the canonical SELECT
// and suffix.
func (c *checker) selectQuery(s *Select, depth int, prefix, suffix string) (*Query, error) {
	srcs, join, err := c.from(s.From, depth)
	if err != nil {
		return nil, err
	}
	q := &Query{Kind: KindSelect, Sources: srcs, Join: join}
	for _, b := range srcs {
		if b.Derived != nil && b.Derived.derived+1 > q.derived {
			q.derived = b.Derived.derived + 1
		}
	}
	sc := &scope{sources: srcs}
	if s.Where != nil {
		sc.aggWhy = "WHERE is applied to each tuple before grouping; put conditions on aggregates in HAVING"
		if q.Where, err = c.boolExpr(s.Where, sc, "WHERE"); err != nil {
			return nil, err
		}
	}
	if len(s.GroupBy) > MaxGroupBy {
		return nil, c.errorf(s.GroupBy[MaxGroupBy].Pos, "more than %d GROUP BY expressions", MaxGroupBy)
	}
	sc.aggWhy = "GROUP BY takes expressions of the tuple's columns"
	for _, g := range s.GroupBy {
		n, err := c.expr(g, sc)
		if err != nil {
			return nil, err
		}
		q.GroupBy = append(q.GroupBy, n)
	}
	sc.aggs, sc.aggIndex, sc.groupBy = &q.Aggs, map[string]int{}, q.GroupBy
	if len(s.Items) > MaxItems {
		return nil, c.errorf(s.Items[MaxItems].Pos, "more than %d output columns", MaxItems)
	}
	// exprs are the items' expressions, nil for *; unnamed the output
	// columns named after their expression's text, once it is written.
	exprs := make([]*Node, len(s.Items))
	var unnamed []*OutItem
	for i, it := range s.Items {
		if it.Star {
			for si, b := range srcs {
				for ci, col := range b.Stream.Columns {
					if col.Fine {
						continue // named explicitly or not at all: they need fine mode
					}
					name := col.Name
					if len(srcs) > 1 {
						name = b.Alias + "." + col.Name
					}
					q.Items = append(q.Items, &OutItem{Name: name, Expr: &Node{Kind: NCol, Type: col.Type, Src: si, Col: ci, Text: name, Pos: it.Pos}})
				}
			}
			continue
		}
		n, err := c.expr(it.Expr, sc)
		if err != nil {
			return nil, err
		}
		exprs[i] = n
		out := &OutItem{Name: it.Alias, Expr: n}
		if out.Name == "" && n.Kind == NCol && len(srcs) == 1 {
			out.Name = srcs[0].Stream.Columns[n.Col].Name
		}
		if out.Name == "" {
			unnamed = append(unnamed, out)
		}
		q.Items = append(q.Items, out)
	}
	if s.Having != nil {
		if !q.Aggregated() {
			return nil, c.errorf(s.Having.Pos, "HAVING filters groups; this query has no aggregates or GROUP BY (use WHERE)")
		}
		if q.Having, err = c.boolExpr(s.Having, sc, "HAVING"); err != nil {
			return nil, err
		}
	}
	q.Text = selectText(q, s, exprs, prefix, suffix)
	for _, it := range unnamed {
		it.Name = it.Expr.Text
	}
	if q.Aggregated() {
		for i, it := range s.Items {
			if it.Star {
				return nil, c.errorf(it.Pos, "* lists every column of each tuple, which an aggregating query does not output")
			}
			if bad := ungrouped(q.Items[i].Expr, q.GroupBy); bad != nil {
				return nil, c.errorf(bad.Pos, "%s is neither grouped nor aggregated: add it to GROUP BY or aggregate it, e.g. max(%s)", brief(bad), brief(bad))
			}
		}
		if q.Having != nil {
			if bad := ungrouped(q.Having, q.GroupBy); bad != nil {
				return nil, c.errorf(bad.Pos, "%s in HAVING is neither grouped nor aggregated", brief(bad))
			}
		}
	}
	if s.Window != nil {
		if !q.Aggregated() {
			return nil, c.errorf(s.Window.Pos, "WINDOW groups rows for aggregates; this query has none (every tuple is already a row)")
		}
		w := &WindowSpec{Size: time.Duration(s.Window.Size)}
		w.Slide = w.Size
		if s.Window.Slide != nil {
			w.Slide = time.Duration(*s.Window.Slide)
		}
		switch {
		case w.Size < MinWindow || w.Size > MaxSpan:
			return nil, c.errorf(s.Window.Pos, "window of %v: want %v to %v", w.Size, MinWindow, MaxSpan)
		case w.Slide < MinWindow || w.Slide > w.Size:
			return nil, c.errorf(s.Window.Pos, "slide of %v: want %v to the window's %v", w.Slide, MinWindow, w.Size)
		case w.Size/w.Slide > MaxSlides:
			return nil, c.errorf(s.Window.Pos, "a window of %v sliding by %v puts each tuple in %d windows; the most is %d", w.Size, w.Slide, w.Size/w.Slide, MaxSlides)
		}
		q.Window = w
	}
	if s.Limit != nil {
		if *s.Limit < 1 || *s.Limit > MaxLimit {
			return nil, c.errorf(s.Pos, "LIMIT %d: want 1 to %d", *s.Limit, MaxLimit)
		}
		q.Limit = *s.Limit
	}
	q.Schema = schemaOf(q)
	return q, nil
}

// schemaOf is the output columns of a checked SELECT, names made unique.
func schemaOf(q *Query) []Column {
	var cols []Column
	seen := map[string]int{}
	add := func(name string, t Type) {
		if n := seen[name]; n > 0 {
			seen[name] = n + 1
			name += "_" + strconv.Itoa(n+1)
		} else {
			seen[name] = 1
		}
		cols = append(cols, Column{Name: name, Type: t})
	}
	if q.Window != nil {
		add("window_start", Time)
		add("window_end", Time)
	}
	for _, it := range q.Items {
		add(it.Name, it.Expr.Type)
	}
	return cols
}

// ungrouped returns a column reference of n that is outside every GROUP BY
// expression and every aggregate, or nil. It compares texts, slices of the
// statement's: nodes of equal length are disjoint parts of it, so the
// comparisons with one GROUP BY expression cost at most the text's length.
func ungrouped(n *Node, groupBy []*Node) *Node {
	for _, g := range groupBy {
		if g.Text == n.Text {
			return nil
		}
	}
	switch n.Kind {
	case NAgg, NLit:
		return nil
	case NCol:
		return n
	}
	for _, k := range n.Kids {
		if bad := ungrouped(k, groupBy); bad != nil {
			return bad
		}
	}
	return nil
}

func (c *checker) trigger(t *CreateTrigger) (*Query, error) {
	if isKeyword(t.Name) {
		return nil, c.errorf(t.Pos, "%q is a keyword", t.Name)
	}
	srcs, join, err := c.from(t.From, 0)
	if err != nil {
		return nil, err
	}
	q := &Query{Kind: KindTrigger, Name: t.Name, Sources: srcs, Join: join}
	sc := &scope{sources: srcs, aggWhy: "WHEN is checked on each tuple"}
	if q.Where, err = c.boolExpr(t.When, sc, "WHEN"); err != nil {
		return nil, err
	}
	for _, a := range t.Actions {
		if a == nil {
			continue
		}
		spec := &ActionSpec{}
		switch {
		case a.Snapshot:
			spec.Snapshot, spec.Text = true, "SNAPSHOT"
		case a.Fine != nil:
			pc, err := pointcut.Parse(a.Fine.Value)
			if err != nil {
				return nil, c.inString(a.Fine, "FINE", err)
			}
			spec.Fine, spec.Pointcut = a.Fine.Value, pc
		case a.Sample != nil:
			def := builtin(a.Sample.Stream)
			if def == nil || !def.Sampled {
				return nil, c.errorf(a.Sample.Pos, "no runtime stream %q (SAMPLE reads %s)", a.Sample.Stream, sampledNames())
			}
			spec.Sample, spec.Every = def, time.Duration(a.Sample.Every)
			if spec.Every < MinSample || spec.Every > MaxSpan {
				return nil, c.errorf(a.Sample.Pos, "sampling interval %v: want %v to %v", spec.Every, MinSample, MaxSpan)
			}
		}
		if !spec.Snapshot {
			spec.For = time.Duration(*a.For)
			if spec.For < MinFor || spec.For > MaxSpan {
				return nil, c.errorf(a.Pos, "FOR %v: want %v to %v", spec.For, MinFor, MaxSpan)
			}
			if spec.Sample != nil {
				spec.Text = fmt.Sprintf("SAMPLE(%s, %v) FOR %v", spec.Sample.Name, spec.Every, spec.For)
			} else {
				spec.Text = fmt.Sprintf("FINE %s FOR %v", quote(spec.Fine), spec.For)
			}
		}
		q.Actions = append(q.Actions, spec)
	}
	if len(q.Actions) == 0 {
		return nil, c.errorf(t.Pos, "trigger %s has no action", t.Name)
	}
	q.Schema = append([]Column{{Name: "trigger", Type: String}}, firedColumns(q)...)
	p := &printer{record: true}
	p.str("CREATE TRIGGER " + t.Name + " FROM " + fromText(q) + " WHEN ")
	p.node(q.Where)
	p.str(" BEGIN ")
	for i, a := range q.Actions {
		if i > 0 {
			p.str("; ")
		}
		p.str(a.Text)
	}
	p.str(" END")
	q.Text = p.spanned()
	return q, nil
}

// firedColumns are the columns of the tuple that fired a trigger: every
// column of its sources, qualified by alias in a join.
func firedColumns(q *Query) []Column {
	var cols []Column
	for _, b := range q.Sources {
		for _, col := range b.Stream.Columns {
			if col.Fine {
				continue
			}
			if len(q.Sources) > 1 {
				col.Name = b.Alias + "." + col.Name
			}
			cols = append(cols, Column{Name: col.Name, Type: col.Type})
		}
	}
	return cols
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func (c *checker) boolExpr(e *Expr, sc *scope, clause string) (*Node, error) {
	n, err := c.expr(e, sc)
	if err != nil {
		return nil, err
	}
	if n.Type != Bool {
		return nil, c.errorf(e.Pos, "%s needs a condition, not a %s (%s)", clause, n.Type, brief(n))
	}
	return n, nil
}

func (c *checker) expr(e *Expr, sc *scope) (*Node, error) {
	head, err := c.and(e.Head, sc)
	if err != nil || len(e.Tail) == 0 {
		return head, err
	}
	n := &Node{Kind: NOr, Type: Bool, Kids: []*Node{head}, Pos: e.Pos}
	for _, a := range e.Tail {
		k, err := c.and(a, sc)
		if err != nil {
			return nil, err
		}
		n.Kids = append(n.Kids, k)
	}
	return c.logical(n, "OR")
}

func (c *checker) and(a *And, sc *scope) (*Node, error) {
	head, err := c.not(a.Head, sc)
	if err != nil || len(a.Tail) == 0 {
		return head, err
	}
	n := &Node{Kind: NAnd, Type: Bool, Kids: []*Node{head}, Pos: a.Pos}
	for _, x := range a.Tail {
		k, err := c.not(x, sc)
		if err != nil {
			return nil, err
		}
		n.Kids = append(n.Kids, k)
	}
	return c.logical(n, "AND")
}

func (c *checker) logical(n *Node, op string) (*Node, error) {
	for _, k := range n.Kids {
		if k.Type != Bool {
			return nil, c.errorf(k.Pos, "%s joins conditions; %s is a %s", op, brief(k), k.Type)
		}
	}
	return n, nil
}

func (c *checker) not(x *Not, sc *scope) (*Node, error) {
	if x.Negated == nil {
		return c.compare(x.Compare, sc)
	}
	k, err := c.not(x.Negated, sc)
	if err != nil {
		return nil, err
	}
	if k.Type != Bool {
		return nil, c.errorf(x.Pos, "NOT negates a condition; %s is a %s", brief(k), k.Type)
	}
	return &Node{Kind: NNot, Type: Bool, Kids: []*Node{k}, Pos: x.Pos}, nil
}

func (c *checker) compare(x *Compare, sc *scope) (*Node, error) {
	left, err := c.sum(x.Left, sc)
	if err != nil {
		return nil, err
	}
	switch {
	case x.Right != nil:
		right, err := c.sum(x.Right, sc)
		if err != nil {
			return nil, err
		}
		op := x.Op
		if op == "<>" {
			op = "!="
		}
		if !comparable(left.Type, right.Type, op) {
			return nil, c.errorf(x.Pos, "cannot compare %s (%s) with %s (%s)%s", brief(left), left.Type, brief(right), right.Type, compareHint(left, right))
		}
		return &Node{Kind: NCmp, Type: Bool, Op: op, Kids: []*Node{left, right}, Pos: x.Pos}, nil
	case x.In != nil:
		if len(x.In) > MaxInValues {
			return nil, c.errorf(x.Pos, "IN lists more than %d values", MaxInValues)
		}
		n := &Node{Kind: NIn, Type: Bool, Negated: x.NotIn, Kids: []*Node{left}, Pos: x.Pos}
		for _, e := range x.In {
			v, err := c.expr(e, sc)
			if err != nil {
				return nil, err
			}
			if !comparable(left.Type, v.Type, "=") {
				return nil, c.errorf(e.Pos, "IN compares %s (%s) with %s (%s)", brief(left), left.Type, brief(v), v.Type)
			}
			n.Kids = append(n.Kids, v)
		}
		return n, nil
	case x.Like != nil:
		if left.Type != String {
			return nil, c.errorf(x.Pos, "LIKE matches text; %s is a %s", brief(left), left.Type)
		}
		return &Node{Kind: NLike, Type: Bool, Negated: x.NotLike, Kids: []*Node{left}, Pattern: *x.Like, Pos: x.Pos}, nil
	case x.Matches != nil:
		if left.Kind != NCol || sc.sources[left.Src].Stream != Calls || left.Col != CallFunction {
			return nil, c.errorf(x.Pos, "MATCHES tests a pointcut against the function of a calls tuple, not %s", brief(left))
		}
		pc, err := pointcut.Parse(x.Matches.Value)
		if err != nil {
			return nil, c.inString(x.Matches, "MATCHES", err)
		}
		return &Node{Kind: NMatches, Type: Bool, Kids: []*Node{left}, Pattern: x.Matches.Value, Pointcut: pc, Pos: x.Pos}, nil
	}
	return left, nil
}

func comparable(a, b Type, op string) bool {
	switch {
	case a == Null || b == Null:
		return false
	case a == b:
		return a != Bool || op == "=" || op == "!="
	case a.numeric() && b.numeric():
		return true
	}
	return false
}

func compareHint(a, b *Node) string {
	if a.Type == Duration && b.Type.numeric() || b.Type == Duration && a.Type.numeric() {
		return ": write durations with a unit, as in 5ms"
	}
	return ""
}

func (c *checker) sum(s *Sum, sc *scope) (*Node, error) {
	n, err := c.product(s.Head, sc)
	if err != nil {
		return nil, err
	}
	for _, t := range s.Tail {
		r, err := c.product(t.Right, sc)
		if err != nil {
			return nil, err
		}
		if n, err = c.arith(t.Op, n, r, t.Pos); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func (c *checker) product(p *Product, sc *scope) (*Node, error) {
	n, err := c.unary(p.Head, sc)
	if err != nil {
		return nil, err
	}
	for _, t := range p.Tail {
		r, err := c.unary(t.Right, sc)
		if err != nil {
			return nil, err
		}
		if n, err = c.arith(t.Op, n, r, t.Pos); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// arithType is the type of a op b, or Null when the operation means nothing.
func arithType(op string, a, b Type) Type {
	switch {
	case a == Int && b == Int:
		return Int
	case a.numeric() && b.numeric():
		return Float
	case a == Duration && b == Duration:
		switch op {
		case "+", "-":
			return Duration
		case "/":
			return Float
		}
	case a == Duration && b.numeric() && (op == "*" || op == "/"), a.numeric() && b == Duration && op == "*":
		return Duration
	case a == Time && b == Time && op == "-":
		return Duration
	case a == Time && b == Duration && (op == "+" || op == "-"), a == Duration && b == Time && op == "+":
		return Time
	}
	return Null
}

func (c *checker) arith(op string, a, b *Node, pos lexer.Position) (*Node, error) {
	t := arithType(op, a.Type, b.Type)
	if t == Null {
		return nil, c.errorf(pos, "%s %s %s: cannot apply %s to a %s and a %s", brief(a), op, brief(b), op, a.Type, b.Type)
	}
	return &Node{Kind: NArith, Type: t, Op: op, Kids: []*Node{a, b}, Pos: pos}, nil
}

func (c *checker) unary(u *Unary, sc *scope) (*Node, error) {
	if u.Negated == nil {
		return c.primary(u.Primary, sc)
	}
	k, err := c.unary(u.Negated, sc)
	if err != nil {
		return nil, err
	}
	if !k.Type.numeric() && k.Type != Duration {
		return nil, c.errorf(u.Pos, "cannot negate %s, a %s", brief(k), k.Type)
	}
	return &Node{Kind: NNeg, Type: k.Type, Kids: []*Node{k}, Pos: u.Pos}, nil
}

func (c *checker) primary(p *Primary, sc *scope) (*Node, error) {
	if c.stop.step() {
		return nil, ErrStopped
	}
	lit := func(v Value, text string) (*Node, error) {
		return &Node{Kind: NLit, Type: v.T, Val: v, Text: text, Pos: p.Pos}, nil
	}
	switch {
	case p.Duration != nil:
		return lit(DurationValue(time.Duration(*p.Duration)), time.Duration(*p.Duration).String())
	case p.Percent != nil:
		return lit(FloatValue(float64(*p.Percent)), strconv.FormatFloat(float64(*p.Percent)*100, 'g', -1, 64)+"%")
	case p.Number != nil:
		if i, err := strconv.ParseInt(*p.Number, 10, 64); err == nil {
			return lit(IntValue(i), *p.Number)
		}
		f, err := strconv.ParseFloat(*p.Number, 64)
		if err != nil {
			return nil, c.errorf(p.Pos, "%s is not a number Go can hold", *p.Number)
		}
		return lit(FloatValue(f), *p.Number)
	case p.String != nil:
		return lit(StringValue(*p.String), quote(*p.String))
	case p.True:
		return lit(BoolValue(true), "TRUE")
	case p.False:
		return lit(BoolValue(false), "FALSE")
	case p.Call != nil:
		return c.call(p.Call, sc)
	case p.Ref != nil:
		return c.ref(p.Ref, sc)
	}
	return c.expr(p.Group, sc)
}

func (c *checker) ref(r *Ref, sc *scope) (*Node, error) {
	if r.Source != "" {
		for si, b := range sc.sources {
			if b.Alias == r.Source {
				ci := b.Stream.Column(r.Column)
				if ci < 0 {
					return nil, c.errorf(r.Pos, "%s has no column %q (it has %s)", b.Alias, r.Column, columnNames(b.Stream))
				}
				return c.col(sc, si, ci, r.Source+"."+r.Column, r.Pos), nil
			}
		}
		return nil, c.errorf(r.Pos, "no source %q in FROM (have %s)", r.Source, aliases(sc.sources))
	}
	found, si, ci := 0, 0, 0
	for i, b := range sc.sources {
		if j := b.Stream.Column(r.Column); j >= 0 {
			found++
			si, ci = i, j
		}
	}
	switch found {
	case 0:
		var have []string
		for _, b := range sc.sources {
			have = append(have, b.Alias+": "+columnNames(b.Stream))
		}
		return nil, c.errorf(r.Pos, "no column %q (%s)%s", r.Column, strings.Join(have, "; "), columnHint(r.Column))
	case 1:
		text := r.Column
		if len(sc.sources) > 1 {
			text = sc.sources[si].Alias + "." + r.Column
		}
		return c.col(sc, si, ci, text, r.Pos), nil
	}
	return nil, c.errorf(r.Pos, "%s is a column of both %s: write %s.%s", r.Column, aliases(sc.sources), sc.sources[0].Alias, r.Column)
}

func (c *checker) col(sc *scope, si, ci int, text string, pos lexer.Position) *Node {
	col := sc.sources[si].Stream.Columns[ci]
	return &Node{Kind: NCol, Type: col.Type, Src: si, Col: ci, Text: text, Pos: pos}
}

// columnHint suggests a column for names users of other tools write.
func columnHint(name string) string {
	alt := map[string]string{
		"function_name": "function", "method": "function", "func": "function",
		"thread": "goroutine", "gid": "goroutine", "end": "time", "stop": "time",
		"percent_busy": "busy (of SAMPLE(cpu, ...))", "elapsed": "duration", "latency": "duration",
		"panic": "panicked", "err": "error", "failed": "error",
	}[strings.ToLower(name)]
	if alt == "" {
		return ""
	}
	return "; did you mean " + alt + "?"
}

func columnNames(s *StreamDef) string {
	var n []string
	for _, c := range s.Columns {
		n = append(n, c.Name)
	}
	return strings.Join(n, ", ")
}

func aliases(srcs []*Bound) string {
	var n []string
	for _, b := range srcs {
		n = append(n, b.Alias)
	}
	return strings.Join(n, " and ")
}

// Aggregates are the aggregate functions: name → whether it takes an
// argument besides "*".
var aggregates = map[string]bool{
	"count": true, "sum": true, "avg": true, "min": true, "max": true,
	"p50": true, "p90": true, "p95": true, "p99": true, "p999": true, "percentile": true,
}

var quantiles = map[string]float64{"p50": 0.5, "p90": 0.9, "p95": 0.95, "p99": 0.99, "p999": 0.999}

func (c *checker) call(call *Call, sc *scope) (*Node, error) {
	name := strings.ToLower(call.Name)
	if !aggregates[name] {
		return nil, c.errorf(call.Pos, "no function %q (aggregates: count, sum, avg, min, max, p50, p90, p95, p99, p999, percentile(x, q))", call.Name)
	}
	if sc.aggs == nil {
		return nil, c.errorf(call.Pos, "%s is an aggregate: %s", name, sc.aggWhy)
	}
	a := &Agg{Func: name}
	text := name + "("
	switch {
	case call.Star:
		if name != "count" {
			return nil, c.errorf(call.Pos, "%s(*) means nothing; only count takes *", name)
		}
		a.Type, text = Int, "count(*)"
	case len(call.Args) == 0:
		return nil, c.errorf(call.Pos, "%s needs an argument", name)
	default:
		inner := &scope{sources: sc.sources, aggWhy: "aggregates do not nest"}
		arg, err := c.expr(call.Args[0], inner)
		if err != nil {
			return nil, err
		}
		a.Arg = arg
		want := 1
		if name == "percentile" {
			want = 2
		}
		if len(call.Args) != want {
			return nil, c.errorf(call.Pos, "%s takes %d argument(s), not %d", name, want, len(call.Args))
		}
		text += textOf(arg)
		switch name {
		case "count":
			a.Type = Int
		case "min", "max":
			if arg.Type == Bool || arg.Type == Null {
				return nil, c.errorf(call.Pos, "%s of %s, a %s", name, brief(arg), arg.Type)
			}
			a.Type = arg.Type
		default:
			if !arg.Type.numeric() && arg.Type != Duration {
				return nil, c.errorf(call.Pos, "%s adds numbers or durations; %s is a %s", name, brief(arg), arg.Type)
			}
			a.Type = arg.Type
			if name == "avg" && arg.Type == Int {
				a.Type = Float
			}
		}
		if q, ok := quantiles[name]; ok {
			a.Q = q
		}
		if name == "percentile" {
			qn, err := c.expr(call.Args[1], inner)
			if err != nil {
				return nil, err
			}
			if qn.Kind != NLit || !qn.Type.numeric() || qn.Val.Num() <= 0 || qn.Val.Num() > 1 {
				return nil, c.errorf(call.Args[1].Pos, "percentile's second argument is a constant quantile in (0, 1], e.g. 0.99 or 99%%")
			}
			a.Q = qn.Val.Num()
			text += ", " + qn.Text
		}
		text += ")"
	}
	a.Text = text
	if i, ok := sc.aggIndex[text]; ok {
		return &Node{Kind: NAgg, Type: a.Type, Agg: i, Text: text, Pos: call.Pos}, nil
	}
	sc.aggIndex[text] = len(*sc.aggs)
	*sc.aggs = append(*sc.aggs, a)
	return &Node{Kind: NAgg, Type: a.Type, Agg: len(*sc.aggs) - 1, Text: text, Pos: call.Pos}, nil
}

// fromText is the canonical FROM clause.
func fromText(q *Query) string {
	src := func(b *Bound) string {
		s := b.Stream.Name
		if b.Every > 0 {
			s = "SAMPLE(" + b.Stream.Name + ", " + b.Every.String() + ")"
		}
		if b.Alias != b.Stream.Name {
			s += " AS " + b.Alias
		}
		return s
	}
	t := src(q.Sources[0])
	if q.Join != nil {
		t += " WINDOW JOIN " + src(q.Sources[1]) + " WINDOW " + q.Join.Within.String()
		switch q.Join.Followed {
		case 1:
			t += " " + q.Sources[0].Alias + " FOLLOWED BY " + q.Sources[1].Alias
		case 2:
			t += " " + q.Sources[1].Alias + " FOLLOWED BY " + q.Sources[0].Alias
		}
	}
	return t
}

// selectText writes the canonical text of a SELECT whose WHERE, GROUP BY,
// items (exprs, nil for *) and HAVING are checked, between prefix and
// suffix, and gives each of their nodes its Text. The window and the limit
// are written as s has them: they are checked later.
func selectText(q *Query, s *Select, exprs []*Node, prefix, suffix string) string {
	p := &printer{record: true}
	p.str(prefix)
	p.str("SELECT ")
	for i, it := range s.Items {
		if i > 0 {
			p.str(", ")
		}
		if exprs[i] == nil {
			p.str("*")
			continue
		}
		p.node(exprs[i])
		if it.Alias != "" {
			p.str(" AS " + it.Alias)
		}
	}
	p.str(" FROM " + fromText(q))
	if q.Where != nil {
		p.str(" WHERE ")
		p.node(q.Where)
	}
	for i, n := range q.GroupBy {
		if i == 0 {
			p.str(" GROUP BY ")
		} else {
			p.str(", ")
		}
		p.node(n)
	}
	if w := s.Window; w != nil {
		p.str(" WINDOW " + time.Duration(w.Size).String())
		if w.Slide != nil && *w.Slide != w.Size {
			p.str(" SLIDE " + time.Duration(*w.Slide).String())
		}
	}
	if q.Having != nil {
		p.str(" HAVING ")
		p.node(q.Having)
	}
	if s.Limit != nil {
		p.str(" LIMIT " + strconv.Itoa(*s.Limit))
	}
	p.str(suffix)
	return p.spanned()
}
