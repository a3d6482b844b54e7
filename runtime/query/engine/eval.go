package engine

import (
	"math"
	"strings"

	"github.com/tigrisgo/tigris/runtime/query"
)

// Call is one completed call as a calls source receives it.
type Call struct {
	Probe      *Probe
	Start, End int64 // Unix ns
	GID, Trace uint64
	Depth      uint32
	Flags      CallFlags
	// TraceID is the W3C trace id the call's trace joined (a request's
	// trace, docs/export.md), as 32 lowercase hex digits; "" when it joined
	// none or Trace is not set. Calls of one trace share one string.
	TraceID string
}

// CallFlags say how a call ended and whether its trace fields are set.
type CallFlags uint8

const (
	CallError  CallFlags = 1 << iota // returned a non-nil error
	CallPanic                        // ended by panicking
	CallTraced                       // Trace and Depth are set
)

// Tuple is one element of a stream: a call (for calls sources) or values in
// the stream's column order (sampled and derived streams), and its time.
type Tuple struct {
	Time int64
	Call Call
	Vals []query.Value
}

// isCall says whether t carries a call rather than values.
func (t *Tuple) isCall() bool { return t.Call.Probe != nil }

// col returns column i of t.
func (t *Tuple) col(i int) query.Value {
	if !t.isCall() {
		if i < len(t.Vals) {
			return t.Vals[i]
		}
		return query.Value{}
	}
	c := &t.Call
	switch i {
	case query.CallTime:
		return query.TimeValue(c.End)
	case query.CallStart:
		return query.TimeValue(c.Start)
	case query.CallDuration:
		return query.Value{T: query.Duration, I: c.End - c.Start}
	case query.CallFunction:
		return query.StringValue(c.Probe.Function)
	case query.CallPackage:
		return query.StringValue(c.Probe.Package)
	case query.CallReceiver:
		return query.StringValue(c.Probe.Receiver)
	case query.CallName:
		return query.StringValue(c.Probe.Name)
	case query.CallSignature:
		return query.StringValue(c.Probe.Signature)
	case query.CallFile:
		return query.StringValue(c.Probe.File)
	case query.CallLine:
		return query.IntValue(int64(c.Probe.Line))
	case query.CallProbe:
		return query.IntValue(int64(c.Probe.ID))
	case query.CallGoroutine:
		return query.IntValue(int64(c.GID))
	case query.CallTrace:
		if c.Flags&CallTraced == 0 {
			return query.Value{}
		}
		return query.IntValue(int64(c.Trace))
	case query.CallDepth:
		if c.Flags&CallTraced == 0 {
			return query.Value{}
		}
		return query.IntValue(int64(c.Depth))
	case query.CallError:
		return query.BoolValue(c.Flags&CallError != 0)
	case query.CallPanicked:
		return query.BoolValue(c.Flags&CallPanic != 0)
	case query.CallTraceID:
		if c.Flags&CallTraced == 0 {
			return query.Value{}
		}
		return query.StringValue(c.TraceID)
	}
	return query.Value{}
}

// env is what an expression is evaluated against: the current tuple of each
// source, and after grouping the aggregates' values.
type env struct {
	tup  [2]*Tuple
	aggs []query.Value
	// chain holds the operators of arithmetic chains being evaluated
	// (evalChain).
	chain []*query.Node
}

// eval evaluates n. Comparisons with a null are false, arithmetic with a
// null is null, as in SQL's WHERE.
func eval(n *query.Node, e *env) query.Value {
	switch n.Kind {
	case query.NLit:
		return n.Val
	case query.NCol:
		if t := e.tup[n.Src]; t != nil {
			return t.col(n.Col)
		}
		return query.Value{}
	case query.NAgg:
		if n.Agg < len(e.aggs) {
			return e.aggs[n.Agg]
		}
		return query.Value{}
	case query.NAnd:
		for _, k := range n.Kids {
			if !eval(k, e).Truth() {
				return query.BoolValue(false)
			}
		}
		return query.BoolValue(true)
	case query.NOr:
		for _, k := range n.Kids {
			if eval(k, e).Truth() {
				return query.BoolValue(true)
			}
		}
		return query.BoolValue(false)
	case query.NNot:
		v := eval(n.Kids[0], e)
		if v.T == query.Null {
			return query.BoolValue(false)
		}
		return query.BoolValue(!v.Truth())
	case query.NCmp:
		return query.BoolValue(cmpOp(n.Op, eval(n.Kids[0], e), eval(n.Kids[1], e)))
	case query.NIn:
		v := eval(n.Kids[0], e)
		if v.T == query.Null {
			return query.BoolValue(false)
		}
		in := false
		for _, k := range n.Kids[1:] {
			if cmpOp("=", v, eval(k, e)) {
				in = true
				break
			}
		}
		return query.BoolValue(in != n.Negated)
	case query.NLike:
		v := eval(n.Kids[0], e)
		if v.T != query.String {
			return query.BoolValue(false)
		}
		return query.BoolValue(like(v.S, n.Pattern) != n.Negated)
	case query.NMatches:
		c := e.tup[n.Kids[0].Src]
		if c == nil || !c.isCall() || c.Call.Probe.Sig == nil {
			return query.BoolValue(false)
		}
		return query.BoolValue(n.Pointcut.MatchExecution(c.Call.Probe.Sig))
	case query.NArith:
		if n.Kids[0].Kind == query.NArith {
			return evalChain(n, e)
		}
		return arith(n.Op, n.Type, eval(n.Kids[0], e), eval(n.Kids[1], e))
	case query.NNeg:
		v := eval(n.Kids[0], e)
		switch v.T {
		case query.Float:
			v.F = -v.F
		case query.Null:
		default:
			v.I = -v.I
		}
		return v
	}
	return query.Value{}
}

// evalChain evaluates an arithmetic chain, a+b+…+z or a*b*…*z, in a loop:
// the parser makes it left-deep, as deep as it is long, and recursion as
// deep would cost a stack that size and a cache miss a step (a chain of
// 16,000 took 100 ns a step, 20 times a shallow one's).
func evalChain(n *query.Node, e *env) query.Value {
	base := len(e.chain)
	for n.Kind == query.NArith {
		e.chain = append(e.chain, n)
		n = n.Kids[0]
	}
	v := eval(n, e)
	for i := len(e.chain) - 1; i >= base; i-- {
		op := e.chain[i]
		v = arith(op.Op, op.Type, v, eval(op.Kids[1], e))
	}
	for i := base; i < len(e.chain); i++ {
		e.chain[i] = nil
	}
	e.chain = e.chain[:base]
	return v
}

func cmpOp(op string, a, b query.Value) bool {
	c, ok := compareValues(a, b)
	if !ok {
		return false
	}
	switch op {
	case "=":
		return c == 0
	case "!=":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return false
}

// compareValues orders two values of comparable types; false when they
// cannot be compared.
func compareValues(a, b query.Value) (int, bool) {
	switch {
	case a.T == query.Null || b.T == query.Null:
		return 0, false
	case a.T == query.String || b.T == query.String:
		if a.T != b.T {
			return 0, false
		}
		return strings.Compare(a.S, b.S), true
	case a.T != query.Float && b.T != query.Float && (a.T == b.T || numericInt(a.T) && numericInt(b.T)):
		switch {
		case a.I < b.I:
			return -1, true
		case a.I > b.I:
			return 1, true
		}
		return 0, true
	}
	x, y := a.Num(), b.Num()
	switch {
	case x < y:
		return -1, true
	case x > y:
		return 1, true
	case x == y:
		return 0, true
	}
	return 0, false
}

func numericInt(t query.Type) bool { return t == query.Int }

func arith(op string, t query.Type, a, b query.Value) query.Value {
	if a.T == query.Null || b.T == query.Null {
		return query.Value{}
	}
	if t == query.Float || a.T == query.Float || b.T == query.Float {
		r, ok := floatOp(op, a.Num(), b.Num())
		switch {
		case !ok:
			return query.Value{}
		case t == query.Float:
			return query.FloatValue(r)
		case math.IsNaN(r) || math.Abs(r) > math.MaxInt64:
			return query.Value{}
		}
		// A duration scaled by a float factor.
		return query.Value{T: t, I: int64(math.Round(r))}
	}
	x, y := a.I, b.I
	var r int64
	switch op {
	case "+":
		r = x + y
	case "-":
		r = x - y
	case "*":
		r = x * y
	case "/":
		if y == 0 {
			return query.Value{}
		}
		r = x / y
	}
	return query.Value{T: t, I: r}
}

// floatOp applies op; false for a division by zero.
func floatOp(op string, x, y float64) (float64, bool) {
	switch op {
	case "+":
		return x + y, true
	case "-":
		return x - y, true
	case "*":
		return x * y, true
	case "/":
		return x / y, y != 0
	}
	return 0, false
}

// like matches s against a LIKE pattern: % any run, _ one character. It
// backtracks only to the last %, so its cost is linear in len(s) times the
// pattern's length.
func like(s, pattern string) bool {
	p := []rune(pattern)
	r := []rune(s)
	si, pi := 0, 0
	star, mark := -1, 0
	for si < len(r) {
		switch {
		case pi < len(p) && (p[pi] == '_' || p[pi] == r[si]):
			si++
			pi++
		case pi < len(p) && p[pi] == '%':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '%' {
		pi++
	}
	return pi == len(p)
}
