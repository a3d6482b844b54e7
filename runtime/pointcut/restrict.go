package pointcut

import (
	"fmt"
	"strings"
)

// Decl is a function or method declared in a package, as its syntax shows it.
type Decl struct {
	Recv    string // receiver base type name; "" for a function
	RecvPtr bool
	Name    string
}

// Syntax is what the files of one package say before type checking: enough
// to rule out most terms of a pointcut for that package.
type Syntax struct {
	Path   string          // import path
	Main   bool            // the package is named main (a command)
	Decls  []Decl          // functions and methods with a body
	Idents map[string]bool // every identifier written in the files
}

// Restrict returns a canonical text of what p can select in the package s
// describes, or "" when p selects no function and no call site there. Two
// pointcuts with the same text for a package select the same functions and
// call sites in it, whatever the types say: Restrict replaces every term that the
// package's syntax decides for all of its join points by true or false
// (a package pattern that does not match, a name or receiver pattern that no
// declaration has, a call(...) of a name the files never write) and digests
// writes what remains. So a change of tigris.yaml changes the text only of
// the packages whose selection it can change, which is what lets a build
// recompile just those (the rewriter hashes it into a cache key). The text
// lists the remaining expression graph, each shared subexpression once, so
// its size and Restrict's cost are linear in the size of p's expression
// graph and the package's declarations.
func (p *Pointcut) Restrict(s *Syntax) string {
	r := &restricter{s: s, memo: map[*node]*node{}, callNames: map[*sigMatcher]bool{}, pkg: &Signature{Package: s.Path}}
	if s.Main {
		r.pkg.Flags = Main
	}
	n := r.node(p.node())
	if n.op == opNone {
		return ""
	}
	var b strings.Builder
	writeGraph(&b, n, map[*node]int{})
	return b.String()
}

type restricter struct {
	s         *Syntax
	pkg       *Signature // the package as matchFunc sees it
	memo      map[*node]*node
	callNames map[*sigMatcher]bool
}

func (r *restricter) node(n *node) *node {
	if out, ok := r.memo[n]; ok {
		return out
	}
	out := r.restrict(n)
	r.memo[n] = out
	return out
}

func (r *restricter) restrict(n *node) *node {
	switch n.op {
	case opAnd, opOr:
		kids := make([]*node, len(n.kids))
		for i, k := range n.kids {
			kids[i] = r.node(k)
		}
		if n.op == opAnd {
			return mkAnd(kids)
		}
		return mkOr(kids)
	case opNot:
		switch k := r.node(n.kids[0]); k.op {
		case opNone:
			return allNode
		case opAll:
			return noneNode
		default:
			return mkNot(k)
		}
	case opExecution, opWithincode:
		// Both test the function the join point is in, which is declared here
		// (a literal's name is its function's Go name, "init.0" or "init" in
		// a package-level initializer, which the syntax does not list).
		if !n.sig.pkg.matchFunc(r.pkg) || !n.sig.hasLit && !r.declared(&n.sig.recv, &n.sig.name) {
			return noneNode
		}
	case opCall:
		if !r.written(n.sig) {
			return noneNode
		}
	case opWithin:
		if !n.scope.pkg.matchFunc(r.pkg) {
			return noneNode
		}
		if n.scope.recv.kind == recvEither {
			return allNode
		}
		any := glob{kind: globAny}
		if !r.declared(&n.scope.recv, &any) {
			return noneNode
		}
	}
	return n
}

// declared reports whether a function of the package could have a receiver
// matching recv and a name matching name. Whether a receiver type is generic
// is left to the type checker: the answer errs towards yes.
func (r *restricter) declared(recv *recvMatcher, name *glob) bool {
	for _, d := range r.s.Decls {
		if !name.match(d.Name) {
			continue
		}
		switch recv.kind {
		case recvEither:
			return true
		case recvValue:
			if d.Recv != "" && !d.RecvPtr && recv.name.match(d.Recv) {
				return true
			}
		case recvSet:
			if d.Recv != "" && recv.name.match(d.Recv) {
				return true
			}
		}
	}
	return false
}

// written reports whether the files write a name the callee pattern of a
// call(...) term could match: a call site names its callee with an
// identifier.
func (r *restricter) written(m *sigMatcher) bool {
	if ok, seen := r.callNames[m]; seen {
		return ok
	}
	ok := false
	if m.name.kind == globLiteral {
		ok = r.s.Idents[m.name.lit]
	} else {
		for id := range r.s.Idents {
			if m.name.match(id) {
				ok = true
				break
			}
		}
	}
	r.callNames[m] = ok
	return ok
}

// writeGraph writes n in post order, one line a node: its number, its
// operator, and its operands' numbers or a leaf's canonical text. A node
// reached twice is written once.
func writeGraph(b *strings.Builder, n *node, ids map[*node]int) int {
	if id, ok := ids[n]; ok {
		return id
	}
	kids := make([]int, len(n.kids))
	for i, k := range n.kids {
		kids[i] = writeGraph(b, k, ids)
	}
	id := len(ids)
	ids[n] = id
	fmt.Fprintf(b, "%d %d", id, n.op)
	if len(n.kids) == 0 {
		fmt.Fprintf(b, " %q", n.text)
	}
	for _, k := range kids {
		fmt.Fprintf(b, " %d", k)
	}
	b.WriteByte('\n')
	return id
}
