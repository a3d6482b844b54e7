package pointcut

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// Pointcut is a compiled pointcut expression, made by Parse, Env.Parse, Or, And and
// Not. It is immutable and safe for concurrent use. A nil *Pointcut, like the zero
// Pointcut, matches nothing.
type Pointcut struct {
	root *node
	// text is the canonical text, written on first use: a pointcut of many
	// named pointcuts can be long, and builds never ask for it.
	textOnce sync.Once
	text     string
}

func newPointcut(n *node) *Pointcut { return &Pointcut{root: n} }

func (p *Pointcut) node() *node {
	if p == nil || p.root == nil {
		return noneNode
	}
	return p.root
}

// Parse compiles a pointcut expression that refers to no named pointcuts. Errors are
// participle.Error values whose Position is relative to expr (line 1, column 1 is its
// first byte).
func Parse(expr string) (*Pointcut, error) { return (*Env)(nil).Parse(expr) }

// MatchExecution reports whether the execution of the function described by sig (its
// body running) is selected: execution(S) and withincode(S) test sig, within(P) tests
// sig's package and receiver, args(...) tests sig's parameters, predicates test sig's
// flags, and call(S) is false. It does not allocate.
//
// A function literal's execution (sig.Lit set) is selected only through a
// term that names literals: the expression must be true and would be false
// with every such term (a function pattern with a literal part, literal())
// replaced by false. So expressions written before literals were join points
// select none, and neither does "!execution(* x.F.func1(..))" alone.
func (p *Pointcut) MatchExecution(sig *Signature) bool {
	if sig == nil {
		return false
	}
	n := p.node()
	if sig.Lit != "" {
		return n.hasLit() && n.eval(sig, nil, false, true) && !n.eval(sig, nil, false, false)
	}
	return n.eval(sig, nil, false, true)
}

// MatchCall reports whether a call from the function caller to the function callee is
// selected: call(S) tests callee, within(P) and withincode(S) test caller (the function
// the call is written in), args(...) and predicates test callee, and execution(S) is
// false (the join point is a call, not an execution). A call matches only when the
// expression is true and would be false with every call(...) term replaced by false,
// so a call(...) term must be what selects it: "within(x)" alone or "!call(S)" selects
// no call. It does not allocate.
func (p *Pointcut) MatchCall(callee, caller *Signature) bool {
	if !p.HasCall() || callee == nil || caller == nil {
		return false
	}
	return p.root.eval(caller, callee, true, true) && !p.root.eval(caller, callee, false, true)
}

// NamesExactly reports whether the execution of sig is selected by an
// execution(S) term, not under a negation, whose S writes out the package path,
// the receiver type (if any) and the function's name without wildcards: the
// pointcut names this function, so its author expects a probe on it. Tools
// tell such a user when the function gets none. It does not allocate.
func (p *Pointcut) NamesExactly(sig *Signature) bool {
	return sig != nil && p.node().namesExactly(sig)
}

func (n *node) namesExactly(sig *Signature) bool {
	switch n.op {
	case opAnd, opOr:
		for _, k := range n.kids {
			if k.namesExactly(sig) {
				return true
			}
		}
	case opExecution:
		m := n.sig
		return m.pkg.kind == pkgExact && m.name.kind == globLiteral && (!m.hasLit || m.lit.kind == globLiteral) &&
			(m.recv.kind == recvEither || m.recv.name.kind == globLiteral) && m.match(sig)
	}
	return false
}

// HasLiteral reports whether p contains a term that names function literals
// (a function pattern with a literal part, literal()), that is whether
// MatchExecution can be true for a literal.
func (p *Pointcut) HasLiteral() bool { return p != nil && p.root != nil && p.root.hasLit() }

// HasCall reports whether p contains a call(...) term, that is whether MatchCall can
// ever be true.
func (p *Pointcut) HasCall() bool { return p != nil && p.root != nil && p.root.hasCall() }

// Terms returns the size of p with its named pointcuts expanded (see MaxTerms),
// saturated just above MaxTerms. Parse and Env.Parse return pointcuts of at most
// MaxTerms; Or, And and Not, which cannot fail, may build larger ones, and a
// caller that combines pointcuts from its users checks this.
func (p *Pointcut) Terms() int { return p.node().size() }

// MayMatchPackage is a cheap prefilter for the package with import path pkgPath: it is
// false only if no function declared in that package, and no call written in it, can
// match. It looks at package patterns only, so true means "maybe". For a package
// named main use MayMatchPackageOf: the pattern main matches it whatever its path.
func (p *Pointcut) MayMatchPackage(pkgPath string) bool { return p.MayMatchPackageOf(pkgPath, false) }

// MayMatchPackageOf is MayMatchPackage for a package that is a command (named
// main) when isMain is set: its functions' signatures carry the Main flag.
func (p *Pointcut) MayMatchPackageOf(pkgPath string, isMain bool) bool {
	n := p.node()
	s := &Signature{Package: pkgPath}
	if isMain {
		s.Flags = Main
	}
	if n.may(s, false, false) != triNo {
		return true
	}
	return p.HasCall() && n.may(s, true, true) != triNo && n.may(s, true, false) != triYes
}

// String returns the canonical text of p: named pointcuts expanded, one space around
// && and ||, the fewest parentheses, "*" for an omitted result. Parse(p.String())
// gives a pointcut that matches the same join points. A nil *Pointcut is "none()".
func (p *Pointcut) String() string {
	if p == nil || p.root == nil {
		return noneNode.text
	}
	p.textOnce.Do(func() {
		var b strings.Builder
		p.root.format(&b, 0)
		p.text = b.String()
	})
	return p.text
}

// Or returns a pointcut that matches what any of ps matches; Or() matches nothing.
// A nil argument matches nothing.
func Or(ps ...*Pointcut) *Pointcut {
	kids := make([]*node, len(ps))
	for i, p := range ps {
		kids[i] = p.node()
	}
	return newPointcut(mkOr(kids))
}

// And returns a pointcut that matches what all of ps match; And() matches everything.
// A nil argument matches nothing.
func And(ps ...*Pointcut) *Pointcut {
	kids := make([]*node, len(ps))
	for i, p := range ps {
		kids[i] = p.node()
	}
	return newPointcut(mkAnd(kids))
}

// Not returns a pointcut that matches what p does not; Not(nil) matches everything.
// For calls, remember that a call(...) term must select a call: Not(call(S)) selects
// no call.
func Not(p *Pointcut) *Pointcut { return newPointcut(mkNot(p.node())) }

// eval evaluates n for one join point. fn is the function whose body the join point
// is in: the declaration for an execution, the caller for a call. callee is nil for an
// execution. calls false makes every call(...) term false, lits false every
// literal term (isLitTerm).
func (n *node) eval(fn, callee *Signature, calls, lits bool) bool {
	if !lits && n.isLitTerm() {
		return false
	}
	switch n.op {
	case opAll:
		return true
	case opAnd:
		for _, k := range n.kids {
			if !k.eval(fn, callee, calls, lits) {
				return false
			}
		}
		return true
	case opOr:
		for _, k := range n.kids {
			if k.eval(fn, callee, calls, lits) {
				return true
			}
		}
		return false
	case opNot:
		return !n.kids[0].eval(fn, callee, calls, lits)
	case opExecution:
		return callee == nil && n.sig.match(fn)
	case opWithincode:
		return n.sig.match(fn)
	case opCall:
		return calls && callee != nil && n.sig.match(callee)
	case opWithin:
		return n.scope.match(fn)
	case opArgs:
		if callee != nil {
			return n.args.matchStrings(callee.Params)
		}
		return n.args.matchStrings(fn.Params)
	case opPred:
		if callee != nil {
			return n.pred.match(callee)
		}
		return n.pred.match(fn)
	}
	return false
}

// tri is a three-valued truth value for MayMatchPackage.
type tri uint8

const (
	triNo tri = iota
	triMaybe
	triYes
)

// may evaluates n for every join point in the package pkg describes (its Package
// and Main flag) at once: triYes if n is true for all of them, triNo if for none,
// triMaybe otherwise (or when unsure).
func (n *node) may(pkg *Signature, call, calls bool) tri {
	switch n.op {
	case opAll:
		return triYes
	case opNone:
		return triNo
	case opAnd:
		r := triYes
		for _, k := range n.kids {
			switch k.may(pkg, call, calls) {
			case triNo:
				return triNo
			case triMaybe:
				r = triMaybe
			}
		}
		return r
	case opOr:
		r := triNo
		for _, k := range n.kids {
			switch k.may(pkg, call, calls) {
			case triYes:
				return triYes
			case triMaybe:
				r = triMaybe
			}
		}
		return r
	case opNot:
		return triYes - n.kids[0].may(pkg, call, calls)
	case opExecution, opWithincode:
		// withincode(S) tests the function the join point is in, which is declared
		// in pkg for executions and calls alike.
		if (n.op == opWithincode || !call) && n.sig.pkg.matchFunc(pkg) {
			return triMaybe
		}
		return triNo
	case opCall:
		if call && calls {
			return triMaybe // the callee can be in any package
		}
		return triNo
	case opWithin:
		if !n.scope.pkg.matchFunc(pkg) {
			return triNo
		}
		if n.scope.recv.kind == recvEither {
			return triYes
		}
	}
	return triMaybe
}

// Named is one named pointcut: Name is an identifier that other expressions use to
// refer to Expr.
type Named struct {
	Name, Expr string
}

// Env is a set of named pointcuts that expressions may refer to by name. It is
// immutable and safe for concurrent use. A nil *Env has no names.
type Env struct {
	names []string
	defs  map[string]*node
	texts map[string]string
}

// DefinitionError reports a named pointcut that NewEnv rejected.
type DefinitionError struct {
	Name  string // the pointcut's name
	Index int    // its index in the list given to NewEnv
	// Err is the cause. Problems inside the expression are participle.Error values
	// whose Position is relative to the pointcut's Expr; a loop of references is a
	// *CycleError.
	Err error
}

func (e *DefinitionError) Error() string { return fmt.Sprintf("pointcut %q: %v", e.Name, e.Err) }
func (e *DefinitionError) Unwrap() error { return e.Err }

// CycleError is the cause of a DefinitionError when named pointcuts refer to each
// other in a loop. It is a participle.Error positioned at the reference that closes
// the loop, in the expression of the DefinitionError's pointcut.
type CycleError struct {
	Cycle []string // the names along the loop, first and last the same: a, b, a
	Pos   lexer.Position
}

func (e *CycleError) Message() string {
	return "pointcut cycle: " + strings.Join(e.Cycle, " -> ")
}
func (e *CycleError) Position() lexer.Position { return e.Pos }
func (e *CycleError) Error() string            { return participle.FormatError(e) }

var _ participle.Error = (*CycleError)(nil)

// errDependency marks a definition that failed because one it refers to failed; the
// first failure has been reported already.
var errDependency = errors.New("refers to a pointcut that failed")

// NewEnv compiles named pointcuts, which may refer to each other by name in any order.
// It checks all of them and reports every problem, joined: names that are not
// identifiers or are reserved (execution, call, within, args, predicate names),
// duplicates, expressions that do not parse, references to unknown names and cycles.
// Each problem is a *DefinitionError naming the pointcut.
func NewEnv(named []Named) (*Env, error) {
	type def struct {
		Named
		index int
		ast   *orExpr
		node  *node
		state uint8 // 0 pending, 1 compiling, 2 done, 3 failed
	}
	var (
		errs   []error
		byName = map[string]*def{}
		order  []*def
		stack  []*def
	)
	for i, n := range named {
		fail := func(err error) { errs = append(errs, &DefinitionError{Name: n.Name, Index: i, Err: err}) }
		if err := checkName(n.Name); err != nil {
			fail(err)
			continue
		}
		if first, ok := byName[n.Name]; ok {
			fail(fmt.Errorf("duplicate name: also defined at index %d", first.index))
			continue
		}
		d := &def{Named: n, index: i}
		byName[n.Name] = d
		order = append(order, d)
		ast, err := parseAST(n.Expr)
		if err != nil {
			fail(err)
			d.state = 3
			continue
		}
		d.ast = ast
	}

	var build func(d *def) bool
	ref := func(name string, pos lexer.Position) (*node, error) {
		d, ok := byName[name]
		if !ok {
			return nil, participle.Errorf(pos, "unknown pointcut %q%s", name, knownNames(byName))
		}
		switch d.state {
		case 1:
			var cycle []string
			for i := len(stack) - 1; i >= 0; i-- {
				if stack[i] == d {
					for _, s := range stack[i:] {
						cycle = append(cycle, s.Name)
					}
					break
				}
			}
			return nil, &CycleError{Cycle: append(cycle, name), Pos: pos}
		case 0:
			if !build(d) {
				return nil, errDependency
			}
		case 3:
			return nil, errDependency
		}
		return d.node, nil
	}
	build = func(d *def) bool {
		d.state = 1
		stack = append(stack, d)
		n, err := (&compiler{ref: ref}).or(d.ast)
		stack = stack[:len(stack)-1]
		if err != nil {
			d.state = 3
			if !errors.Is(err, errDependency) {
				errs = append(errs, &DefinitionError{Name: d.Name, Index: d.index, Err: err})
			}
			return false
		}
		d.node, d.state = n, 2
		return true
	}
	for _, d := range order {
		if d.state == 0 {
			build(d)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	e := &Env{defs: make(map[string]*node, len(order)), texts: make(map[string]string, len(order))}
	for _, d := range order {
		e.names = append(e.names, d.Name)
		e.defs[d.Name] = d.node
		e.texts[d.Name] = d.Expr
	}
	return e, nil
}

func knownNames[T any](defs map[string]T) string {
	if len(defs) == 0 {
		return "; no pointcuts are named (the pointcuts section names them), and an expression starts with execution(, call(, within(, args( or a predicate such as exported()"
	}
	names := make([]string, 0, len(defs))
	for n := range defs {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) > 10 {
		names = append(names[:10], "...")
	}
	return "; defined: " + strings.Join(names, ", ")
}

// checkName reports whether name can name a pointcut.
func checkName(name string) error {
	for i, r := range name {
		if !(r == '_' || isLetter(r) || i > 0 && isDigit(r)) {
			return fmt.Errorf("name %q is not an identifier", name)
		}
	}
	if name == "" {
		return errors.New("empty name")
	}
	for _, d := range designators {
		if d == name {
			return fmt.Errorf("name %q is reserved", name)
		}
	}
	switch name {
	case "map", "chan", "func", "interface", "struct":
		return fmt.Errorf("name %q is reserved", name)
	}
	if isPredicateName(name) {
		return fmt.Errorf("name %q is reserved for the predicate %s()", name, name)
	}
	return nil
}

// Parse compiles an expression that may refer to the pointcuts of e by name. Errors
// are participle.Error values positioned relative to expr.
func (e *Env) Parse(expr string) (*Pointcut, error) {
	ast, err := parseAST(expr)
	if err != nil {
		return nil, err
	}
	c := &compiler{}
	if e != nil {
		c.ref = func(name string, pos lexer.Position) (*node, error) {
			if n, ok := e.defs[name]; ok {
				return n, nil
			}
			return nil, participle.Errorf(pos, "unknown pointcut %q%s", name, knownNames(e.defs))
		}
	}
	n, err := c.or(ast)
	if err != nil {
		return nil, err
	}
	return newPointcut(n), nil
}

// Names returns the names of e's pointcuts in the order given to NewEnv.
func (e *Env) Names() []string {
	if e == nil {
		return nil
	}
	return append([]string(nil), e.names...)
}

// Lookup returns the named pointcut and the expression it was defined with.
func (e *Env) Lookup(name string) (p *Pointcut, expr string, ok bool) {
	if e == nil {
		return nil, "", false
	}
	n, ok := e.defs[name]
	if !ok {
		return nil, "", false
	}
	return newPointcut(n), e.texts[name], true
}
