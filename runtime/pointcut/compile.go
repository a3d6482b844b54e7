package pointcut

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"

	"github.com/tigrisgo/tigris/runtime/internal/num"
)

// This file turns a parse tree into the node tree that Pointcut evaluates, checks
// what the grammar cannot (names, packages, receivers), and writes the canonical text.

// op is the kind of a node.
type op uint8

const (
	opNone op = iota // none(): matches nothing
	opAll            // all(): matches every join point
	opAnd
	opOr
	opNot
	opExecution
	opCall
	opWithincode
	opWithin
	opArgs
	opPred
)

// node is one compiled expression. Nodes are immutable once built and may be shared
// (a named pointcut used twice is one node), so a chain of named pointcuts that each
// use the previous one twice is a small graph whose expansion, the tree that eval
// walks, doubles with every link. terms keeps that expanded size; the compiler
// refuses a pointcut above MaxTerms, and nothing else in this package ever walks a
// graph it has not measured (format, eval and may walk accepted pointcuts only).
type node struct {
	op    op
	kids  []*node       // opAnd, opOr: two or more; opNot: one
	sig   *sigMatcher   // opExecution, opCall, opWithincode
	scope *scopeMatcher // opWithin
	args  *listMatcher  // opArgs
	pred  predicate     // opPred
	text  string        // canonical text of a leaf
	terms int           // opAnd, opOr, opNot: the expanded size, see size
	call  bool          // opAnd, opOr, opNot: a call(...) term is below
	lit   bool          // opAnd, opOr, opNot: a literal term (isLitTerm) is below
}

// MaxTerms bounds the size of a pointcut with its named pointcuts expanded: the
// number of terms (designators, predicates, !, && and || nodes) of the tree that a
// match walks. Names are resolved by sharing, not by copying, so a chain of names
// that each use the previous one twice takes memory linear in its length, but its
// expansion doubles with every link and a match would walk all of it. A definition
// or expression above the bound is an error naming the pointcut
// ("expands to more than 10000 terms").
const MaxTerms = 10000

// size is the number of terms of n's expansion, saturated above MaxTerms.
func (n *node) size() int {
	if n.terms == 0 {
		return 1 // a leaf
	}
	return n.terms
}

// composite builds an opAnd, opOr or opNot node with its size and call flag.
func composite(o op, kids []*node) *node {
	n := &node{op: o, kids: kids, terms: 1}
	for _, k := range kids {
		n.terms = num.Min(n.terms+k.size(), MaxTerms+1)
		n.call = n.call || k.hasCall()
		n.lit = n.lit || k.hasLit()
	}
	return n
}

var (
	noneNode = &node{op: opNone, text: "none()"}
	allNode  = &node{op: opAll, text: "all()"}
)

// predicate is a test of a Signature's flags.
type predicate uint8

const (
	predExported predicate = iota + 1
	predMethod
	predFunction
	predGeneric
	predVariadic
	predReturnsError
	predTest
	predPointerReceiver
	predLiteral
)

// predicates lists the predicate names in the order error messages and docs use.
var predicates = []struct {
	name string
	pred predicate
}{
	{"exported", predExported},
	{"method", predMethod},
	{"function", predFunction},
	{"generic", predGeneric},
	{"variadic", predVariadic},
	{"returns_error", predReturnsError},
	{"test", predTest},
	{"pointer_receiver", predPointerReceiver},
	{"literal", predLiteral},
}

func (p predicate) match(s *Signature) bool {
	switch p {
	case predExported:
		return s.Flags&Exported != 0
	case predMethod:
		return s.Flags&Method != 0
	case predFunction:
		return s.Flags&Method == 0
	case predGeneric:
		return s.Flags&Generic != 0
	case predVariadic:
		return s.Flags&Variadic != 0
	case predReturnsError:
		return s.Flags&ReturnsError != 0
	case predTest:
		return s.Flags&Test != 0
	case predPointerReceiver:
		return s.Flags&Method != 0 && s.RecvPtr
	case predLiteral:
		return s.Lit != ""
	}
	return false
}

// designators are the words that take a pattern in parentheses.
var designators = []string{"execution", "call", "withincode", "within", "args"}

// predicateList is "exported(), method(), ..." for error messages.
func predicateList() string {
	var b strings.Builder
	for _, p := range predicates {
		b.WriteString(p.name)
		b.WriteString("(), ")
	}
	b.WriteString("all(), none()")
	return b.String()
}

// mkAnd builds a conjunction: all() terms dropped, and a none() term makes the whole
// none(). Nested conjunctions stay nested (format prints them as one): copying
// the terms of a shared node into each user would cost its size at every use.
func mkAnd(kids []*node) *node {
	var out []*node
	for _, k := range kids {
		switch k.op {
		case opAll:
		case opNone:
			return noneNode
		default:
			out = append(out, k)
		}
	}
	switch len(out) {
	case 0:
		return allNode
	case 1:
		return out[0]
	}
	return composite(opAnd, out)
}

// mkOr builds a disjunction, the dual of mkAnd.
func mkOr(kids []*node) *node {
	var out []*node
	for _, k := range kids {
		switch k.op {
		case opNone:
		case opAll:
			return allNode
		default:
			out = append(out, k)
		}
	}
	switch len(out) {
	case 0:
		return noneNode
	case 1:
		return out[0]
	}
	return composite(opOr, out)
}

func mkNot(k *node) *node {
	switch k.op {
	case opAll:
		return noneNode
	case opNone:
		return allNode
	case opNot:
		return k.kids[0]
	}
	return composite(opNot, []*node{k})
}

// precedence of a node when printed: || < && < ! < a term.
func (n *node) precedence() int {
	switch n.op {
	case opOr:
		return 1
	case opAnd:
		return 2
	case opNot:
		return 3
	}
	return 4
}

// format writes the canonical text of n, in parentheses when its precedence is lower
// than min.
func (n *node) format(b *strings.Builder, min int) {
	if n.precedence() < min {
		b.WriteByte('(')
		defer b.WriteByte(')')
	}
	switch n.op {
	case opOr, opAnd:
		sep, prec := " || ", 2
		if n.op == opAnd {
			sep, prec = " && ", 3
		}
		for i, k := range n.kids {
			if i > 0 {
				b.WriteString(sep)
			}
			if k.op == n.op {
				k.format(b, prec-1) // a nested || in ||, or && in &&: no parentheses
			} else {
				k.format(b, prec)
			}
		}
	case opNot:
		b.WriteByte('!')
		n.kids[0].format(b, 3)
	default:
		b.WriteString(n.text)
	}
}

// hasCall reports whether n contains a call(...) term.
func (n *node) hasCall() bool { return n.op == opCall || n.call }

// isLitTerm reports a term that names function literals: a function pattern
// with a literal part, or literal(). A literal's execution is selected only
// through one (Pointcut.MatchExecution).
func (n *node) isLitTerm() bool {
	return n.sig != nil && n.sig.hasLit || n.op == opPred && n.pred == predLiteral
}

// hasLit reports whether n contains a literal term.
func (n *node) hasLit() bool { return n.isLitTerm() || n.lit }

// compiler turns a parse tree into nodes.
type compiler struct {
	// ref resolves a reference to a named pointcut; nil when there are none.
	ref func(name string, pos lexer.Position) (*node, error)
}

func (c *compiler) or(e *orExpr) (*node, error) {
	kids := make([]*node, 0, len(e.Terms))
	terms := 1
	for _, t := range e.Terms {
		k, err := c.and(t)
		if err != nil {
			return nil, err
		}
		if err := checkTerms(&terms, k, len(e.Terms), t.Pos); err != nil {
			return nil, err
		}
		kids = append(kids, k)
	}
	return mkOr(kids), nil
}

// checkTerms adds the size of k, one of n terms of an && or ||, to *terms, the
// size so far, and fails at k's position once the whole would exceed MaxTerms.
// It fails before the node is built, so no walk ever meets an oversized graph.
func checkTerms(terms *int, k *node, n int, pos lexer.Position) error {
	if n == 1 {
		return nil // the node is k itself, checked where it was built
	}
	*terms += k.size()
	if *terms > MaxTerms {
		return participle.Errorf(pos, "expands to more than %d terms with named pointcuts expanded (every use of a name counts its whole expression again); refer to fewer names that repeat others", MaxTerms)
	}
	return nil
}

func (c *compiler) and(e *andExpr) (*node, error) {
	kids := make([]*node, 0, len(e.Terms))
	terms := 1
	for _, t := range e.Terms {
		k, err := c.unary(t)
		if err != nil {
			return nil, err
		}
		if err := checkTerms(&terms, k, len(e.Terms), t.Pos); err != nil {
			return nil, err
		}
		kids = append(kids, k)
	}
	var exec, call bool
	for _, k := range kids {
		exec = exec || k.op == opExecution
		call = call || k.op == opCall
	}
	if exec && call {
		return nil, participle.Errorf(e.Pos, "execution(...) && call(...) never matches: a join point is either an execution or a call; restrict calls by the calling function with withincode(...)")
	}
	return mkAnd(kids), nil
}

func (c *compiler) unary(e *unaryExpr) (*node, error) {
	if e.Not != nil {
		k, err := c.unary(e.Not)
		if err != nil {
			return nil, err
		}
		terms := 1
		if err := checkTerms(&terms, k, 2, e.Pos); err != nil {
			return nil, err
		}
		return mkNot(k), nil
	}
	return c.primary(e.Primary)
}

func (c *compiler) primary(p *primary) (*node, error) {
	switch {
	case p.Group != nil:
		return c.or(p.Group)
	case p.Execution != nil, p.Call != nil, p.Code != nil:
		s, o, word := p.Execution, opExecution, "execution"
		if p.Call != nil {
			s, o, word = p.Call, opCall, "call"
		} else if p.Code != nil {
			s, o, word = p.Code, opWithincode, "withincode"
		}
		m, text, err := c.sig(s)
		if err != nil {
			return nil, err
		}
		return &node{op: o, sig: m, text: word + "(" + text + ")"}, nil
	case p.Within != nil:
		m, text, err := c.scope(p.Within)
		if err != nil {
			return nil, err
		}
		return &node{op: opWithin, scope: m, text: "within(" + text + ")"}, nil
	case p.Args != nil:
		l, text, err := c.list(p.Args.Params)
		if err != nil {
			return nil, err
		}
		return &node{op: opArgs, args: l, text: "args(" + text + ")"}, nil
	case p.Predicate != "":
		switch p.Predicate {
		case "all":
			return allNode, nil
		case "none":
			return noneNode, nil
		}
		for _, q := range predicates {
			if q.name == p.Predicate {
				return &node{op: opPred, pred: q.pred, text: q.name + "()"}, nil
			}
		}
		for _, d := range designators {
			if d == p.Predicate {
				return nil, participle.Errorf(p.Pos, "%s() needs a pattern, e.g. %s", d, designatorExample(d))
			}
		}
		return nil, participle.Errorf(p.Pos, "unknown predicate %s(); expected one of %s", p.Predicate, predicateList())
	}
	return c.reference(p.Ref, p.Pos)
}

func (c *compiler) reference(name string, pos lexer.Position) (*node, error) {
	for _, d := range designators {
		if d == name {
			return nil, participle.Errorf(pos, "%s needs a pattern in parentheses, e.g. %s", d, designatorExample(d))
		}
	}
	if c.ref == nil {
		hint := ""
		if isPredicateName(name) {
			hint = fmt.Sprintf(" (did you mean the predicate %s()?)", name)
		}
		return nil, participle.Errorf(pos, "unknown pointcut %q: no named pointcuts are defined%s", name, hint)
	}
	return c.ref(name, pos)
}

func isPredicateName(name string) bool {
	if name == "all" || name == "none" {
		return true
	}
	for _, p := range predicates {
		if p.name == name {
			return true
		}
	}
	return false
}

func designatorExample(d string) string {
	switch d {
	case "within":
		return "within(example.com/shop/...)"
	case "args":
		return "args(context.Context, ..)"
	case "withincode":
		return "withincode(* example.com/shop/repo.(*Store).*(..))"
	}
	return d + "(* example.com/shop/repo.*(..))"
}

// sig compiles the pattern of execution(...) or call(...).
func (c *compiler) sig(s *sigPattern) (*sigMatcher, string, error) {
	m := &sigMatcher{}
	var b strings.Builder
	switch r := s.Result; {
	case r == nil || r.Any || r.Type != nil && r.Type.Any:
		m.results.any = true
		b.WriteString("*")
	case r.Tuple != nil:
		l, text, err := c.list(r.Tuple.Params)
		if err != nil {
			return nil, "", err
		}
		m.results.list = *l
		b.WriteString("(" + text + ")")
	default:
		t, text, err := c.typ(r.Type)
		if err != nil {
			return nil, "", err
		}
		m.results.list = listMatcher{items: []listItem{{typ: t}}, min: 1}
		if strings.HasSuffix(text, ")") {
			// A func type without results would take the function pattern as its
			// result when read back.
			text = "(" + text + ")"
		}
		b.WriteString(text)
	}
	b.WriteByte(' ')

	f := s.Func
	pkg, pkgText, endsMany, err := c.pkg(f.Pkg, false)
	if err != nil {
		return nil, "", err
	}
	m.pkg = pkg
	b.WriteString(pkgText)
	if !endsMany {
		b.WriteByte('.')
	}
	if !f.Dot && !endsMany {
		at := f.Params.posOr(f.Pos)
		if f.Recv != nil {
			at = f.Recv.Pos
		} else if f.Name != nil {
			at = f.Name.Pos
		}
		if f.Recv == nil && f.Name == nil && len(f.Pkg.Parts) > 0 {
			return nil, "", participle.Errorf(f.Pos, "expected a package pattern and %q before the function name, e.g. *.%s for any package", ".", pkgText)
		}
		return nil, "", participle.Errorf(at, "expected %q after package pattern %s", ".", pkgText)
	}
	recv, name, lit, err := c.literalParts(f)
	if err != nil {
		return nil, "", err
	}
	var nameText string
	if name != nil {
		g, generic, text, err := c.name(name)
		if err != nil {
			return nil, "", err
		}
		if generic && recv != nil {
			return nil, "", participle.Errorf(name.TypeParams.Pos, "a method has no type parameters of its own; put them on the receiver: (*T[...]).%s", text[:strings.IndexByte(text, '[')])
		}
		if f.Index != "" {
			text += "." + f.Index
			g = newGlob(strings.TrimSuffix(text, "[...]"))
		}
		m.name, m.generic, nameText = g, generic, text
	}
	if recv != nil {
		r, text, err := c.recv(recv)
		if err != nil {
			return nil, "", err
		}
		if r.kind == recvValue && lit == "" && isLitElem(nameText) {
			text = "(" + text + ")" // a method named like a literal: (T).func1
		}
		m.recv = r
		b.WriteString(text + ".")
		if name == nil {
			return nil, "", participle.Errorf(recv.Pos, "expected a method name after receiver %s.", text)
		}
	}
	switch {
	case name != nil:
		b.WriteString(nameText)
	case f.Dot:
		return nil, "", participle.Errorf(f.Params.posOr(f.Pos), "expected a function name after %s.", pkgText)
	default: // "example.com/shop/...(..)": any function under the package
		m.name = glob{kind: globAny}
		b.WriteString("*")
	}
	if lit != "" {
		m.lit, m.hasLit = newGlob(lit), true
		b.WriteString(lit)
	}
	l, text, err := c.list(f.Params)
	if err != nil {
		return nil, "", err
	}
	m.params = *l
	b.WriteString("(" + text + ")")
	return m, b.String(), nil
}

// literalParts sorts out the receiver, the name and the literal part of a
// function pattern: a receiver without parentheses before a name shaped like
// a literal ("F.func1", "F.func*") is the function the literal is written
// in, and so is one before a number ("init.0"). lit is "" when the pattern
// has no literal part, else the part with its separator (".func1").
func (c *compiler) literalParts(f *funcPattern) (recv *recvPattern, name *namePattern, lit string, err error) {
	recv, name = f.Recv, f.Name
	if f.Lit != nil {
		for _, e := range f.Lit.Elems {
			text, err := glue(e.Toks, "function literal pattern")
			if err != nil {
				return nil, nil, "", err
			}
			lit += text
		}
	}
	var nameText string
	if name != nil {
		if nameText, err = glue(name.Parts, "name pattern"); err != nil {
			return nil, nil, "", err
		}
	}
	bare := recv != nil && !recv.Paren
	switch {
	case f.Index != "" && !bare:
		at := f.Pos
		if recv != nil {
			at = recv.Pos
		}
		return nil, nil, "", participle.Errorf(at, "expected a function name before .%s (init.0 is the first func init)", f.Index)
	case f.Index != "":
		recv, name = nil, recv.Bare
	case bare && name != nil && name.TypeParams == nil && isLitElem(nameText):
		lit = "." + nameText + lit
		recv, name = nil, recv.Bare
	}
	if lit == "" {
		return recv, name, "", nil
	}
	first := strings.TrimPrefix(lit, ".")
	if i := strings.IndexAny(first, ".-"); i >= 0 {
		first = first[:i]
	}
	if lit[0] == '.' && !isLitElem(first) && first != "*" {
		return nil, nil, "", participle.Errorf(f.Lit.Pos, "expected a function literal's name after the function's, func and its number: .func1, .func2.1, or a glob such as .func*; got %s", lit)
	}
	return recv, name, lit, nil
}

// isLitElem reports a name shaped like the first element of a function
// literal's name: func and a number, or func and a glob ("func*").
func isLitElem(s string) bool {
	rest, ok := strings.CutPrefix(s, "func")
	return ok && rest != "" && strings.Trim(rest, "0123456789*") == ""
}

func (l *paramList) posOr(def lexer.Position) lexer.Position {
	if l == nil {
		return def
	}
	return l.Pos
}

// scope compiles the pattern of within(...).
func (c *compiler) scope(s *scopePattern) (*scopeMatcher, string, error) {
	pkg, text, _, err := c.pkg(s.Pkg, false)
	if err != nil {
		return nil, "", err
	}
	m := &scopeMatcher{pkg: pkg}
	if s.Recv != nil {
		r, rtext, err := c.recv(s.Recv)
		if err != nil {
			return nil, "", err
		}
		m.recv = r
		text += "." + rtext
	}
	return m, text, nil
}

// pkg compiles a package pattern. In a type (short is true) a single name without
// "/" is a package name ("model" in "model.Owner") rather than a path. endsMany
// reports a pattern whose last element is "...".
func (c *compiler) pkg(p *pkgPattern, short bool) (m pkgMatcher, text string, endsMany bool, err error) {
	var path string
	switch {
	case p.Tree != "":
		return pkgMatcher{kind: pkgAny}, "...", true, nil
	case len(p.Parts) > 0:
		text, err := glue(p.Parts, "package pattern")
		if err != nil {
			return m, "", false, err
		}
		if strings.Trim(text, "*") == "" {
			return pkgMatcher{kind: pkgAny}, "*", false, nil
		}
		if short {
			return pkgMatcher{kind: pkgShort, short: newGlob(text)}, text, false, nil
		}
		path = text
	case p.Quoted != "":
		path, err = strconv.Unquote(p.Quoted)
		if err != nil {
			return m, "", false, participle.Errorf(p.Pos, "invalid quoted package path %s: %v", p.Quoted, err)
		}
		if path == "" || strings.ContainsAny(path, " \t\r\n\"\\") {
			return m, "", false, participle.Errorf(p.Pos, "invalid quoted package path %s: expected an import path pattern", p.Quoted)
		}
	default:
		path = p.Path
	}

	parts := strings.Split(path, "/")
	elems := make([]pkgElem, len(parts))
	literal, treeOnly := true, true // no globs; "..." only at the end
	for i, part := range parts {
		switch {
		case part == "":
			return m, "", false, participle.Errorf(p.Pos, "empty element in package pattern %q", path)
		case part == "..." || part == "..":
			elems[i].many = true
			parts[i] = "..."
			if i != len(parts)-1 {
				treeOnly = false
			}
		case strings.Contains(part, "..."):
			return m, "", false, participle.Errorf(p.Pos, "%q must be a whole element of package pattern %q", "...", path)
		default:
			elems[i].name = newGlob(part)
			if elems[i].name.kind != globLiteral {
				literal = false
			}
		}
	}
	text = strings.Join(parts, "/")
	endsMany = elems[len(elems)-1].many
	if p.Quoted != "" {
		text = strconv.Quote(text)
	}
	switch {
	case literal && !endsMany && treeOnly:
		m = pkgMatcher{kind: pkgExact, lit: strings.Join(parts, "/")}
	case literal && treeOnly && len(parts) > 1:
		m = pkgMatcher{kind: pkgTree, lit: strings.Join(parts[:len(parts)-1], "/")}
	default:
		m = pkgMatcher{kind: pkgGeneral, elems: elems}
		allMany := true
		for _, e := range elems {
			allMany = allMany && e.many
		}
		if allMany {
			m = pkgMatcher{kind: pkgAny}
		}
	}
	return m, text, endsMany, nil
}

// recv compiles a receiver pattern.
func (c *compiler) recv(r *recvPattern) (recvMatcher, string, error) {
	n := r.Bare
	if r.Paren {
		n = r.InParen
		if n == nil {
			if !r.Pointer {
				return recvMatcher{}, "", participle.Errorf(r.Pos, "expected a receiver type in parentheses: (*T), (T), or (*) for any receiver")
			}
			return recvMatcher{kind: recvSet, name: glob{kind: globAny}}, "(*)", nil
		}
	}
	name, generic, text, err := c.name(n)
	if err != nil {
		return recvMatcher{}, "", err
	}
	m := recvMatcher{kind: recvValue, name: name, generic: generic}
	if r.Pointer {
		m.kind = recvSet
		if name.kind == globAny && !generic {
			return m, "(*)", nil
		}
		return m, "(*" + text + ")", nil
	}
	return m, text, nil
}

// name compiles a function or receiver name with optional type parameters.
func (c *compiler) name(n *namePattern) (g glob, generic bool, text string, err error) {
	text, err = glue(n.Parts, "name pattern")
	if err != nil {
		return g, false, "", err
	}
	g = newGlob(text)
	if n.TypeParams != nil {
		if n.TypeParams.Pos.Offset != n.Parts[len(n.Parts)-1].Pos.Offset+len(n.Parts[len(n.Parts)-1].Value) {
			return g, false, "", participle.Errorf(n.TypeParams.Pos, "unexpected space before %q in %s[...]", "[", text)
		}
		return g, true, text + "[...]", nil
	}
	return g, false, text, nil
}

// glue joins the tokens of a glob ("Find", "*") that must be written without spaces.
func glue(toks []lexer.Token, what string) (string, error) {
	// The capture holds the raw tokens, white space before the glob included.
	ws := lex().Symbols()["Whitespace"]
	for len(toks) > 0 && toks[0].Type == ws {
		toks = toks[1:]
	}
	var b strings.Builder
	for i, t := range toks {
		if t.Type == ws && i+1 < len(toks) {
			return "", participle.Errorf(toks[i+1].Pos, "unexpected space in %s %q", what, b.String()+" "+toks[i+1].Value)
		}
		if t.Type != ws {
			b.WriteString(strings.TrimSpace(t.Value)) // a StarSpace is "*"
		}
	}
	return b.String(), nil
}

// list compiles a parameter, result or type argument list; nil is the empty list.
func (c *compiler) list(l *paramList) (*listMatcher, string, error) {
	m := &listMatcher{}
	if l == nil {
		return m, "", nil
	}
	texts := make([]string, len(l.Items))
	for i, p := range l.Items {
		switch {
		case p.Many != "":
			m.items = append(m.items, listItem{many: true})
			m.many = true
			texts[i] = ".."
		case p.Variadic != nil:
			t, text, err := c.typ(p.Variadic)
			if err != nil {
				return nil, "", err
			}
			if i != len(l.Items)-1 {
				return nil, "", participle.Errorf(p.Pos, "...%s can only be the last parameter", text)
			}
			m.items = append(m.items, listItem{typ: &typeMatcher{kind: typePrefix, lit: "...", elem: t}})
			m.min++
			texts[i] = "..." + text
		default:
			t, text, err := c.typ(p.Type)
			if err != nil {
				return nil, "", err
			}
			m.items = append(m.items, listItem{typ: t})
			m.min++
			texts[i] = text
		}
	}
	return m, strings.Join(texts, ", "), nil
}

// typ compiles a type pattern.
func (c *compiler) typ(t *typePattern) (*typeMatcher, string, error) {
	prefix := func(lit string, elem *typePattern) (*typeMatcher, string, error) {
		e, text, err := c.typ(elem)
		if err != nil {
			return nil, "", err
		}
		return &typeMatcher{kind: typePrefix, lit: lit, elem: e}, lit + text, nil
	}
	switch {
	case t.Pointer != nil:
		return prefix("*", t.Pointer)
	case t.Slice != nil:
		return prefix("[]", t.Slice)
	case t.Array != nil:
		if t.Array.Len[0] != '*' {
			return prefix("["+t.Array.Len+"]", t.Array.Elem)
		}
		e, text, err := c.typ(t.Array.Elem)
		if err != nil {
			return nil, "", err
		}
		return &typeMatcher{kind: typeArray, elem: e}, "[*]" + text, nil
	case t.Map != nil:
		k, ktext, err := c.typ(t.Map.Key)
		if err != nil {
			return nil, "", err
		}
		v, vtext, err := c.typ(t.Map.Elem)
		if err != nil {
			return nil, "", err
		}
		return &typeMatcher{kind: typeMap, key: k, elem: v}, "map[" + ktext + "]" + vtext, nil
	case t.Chan != nil:
		dir := "chan "
		if t.Chan.Recv {
			dir = "<-chan "
		} else if t.Chan.Send {
			dir = "chan<- "
		}
		return prefix(dir, t.Chan.Elem)
	case t.Func != nil:
		return c.funcType(t.Func)
	case t.Empty != "":
		return &typeMatcher{kind: typeWord, lit: t.Empty + "{}"}, t.Empty + "{}", nil
	case t.Named != nil:
		return c.named(t.Named)
	}
	return &typeMatcher{kind: typeAny}, "*", nil
}

func (c *compiler) funcType(f *funcType) (*typeMatcher, string, error) {
	params, ptext, err := c.list(f.Params.Params)
	if err != nil {
		return nil, "", err
	}
	m := &typeMatcher{kind: typeFunc, args: params}
	text := "func(" + ptext + ")"
	switch {
	case f.Results != nil:
		r, rtext, err := c.list(f.Results.Params)
		if err != nil {
			return nil, "", err
		}
		m.results = r
		text += " (" + rtext + ")"
	case f.Result != nil:
		r, rtext, err := c.typ(f.Result)
		if err != nil {
			return nil, "", err
		}
		m.results = &listMatcher{items: []listItem{{typ: r}}, min: 1}
		text += " " + rtext
	default:
		m.results = &listMatcher{}
	}
	return m, text, nil
}

func (c *compiler) named(n *namedType) (*typeMatcher, string, error) {
	m := &typeMatcher{kind: typeNamed}
	var text string
	if n.Pkg != nil {
		pkg, ptext, _, err := c.pkg(n.Pkg, true)
		if err != nil {
			return nil, "", err
		}
		name, err := glue(n.Name, "type name")
		if err != nil {
			return nil, "", err
		}
		m.pkg = &pkg
		m.name = newGlob(name)
		text = ptext + "." + name
	} else {
		m.name = newGlob(n.Word)
		text = n.Word
	}
	if n.Args != nil {
		args, atext, err := c.list(n.Args)
		if err != nil {
			return nil, "", err
		}
		m.args = args
		text += "[" + atext + "]"
	}
	return m, text, nil
}
