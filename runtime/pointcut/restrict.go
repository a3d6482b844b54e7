package pointcut

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
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

// Restrict returns a digest of what p can select in the package s describes,
// or "" when p selects no function and no call site there. Two pointcuts
// with the same digest for a package select the same functions and call
// sites in it, whatever the types say: Restrict replaces every term that the
// package's syntax decides for all of its join points by true or false
// (a package pattern that does not match, a name or receiver pattern that no
// declaration has, a call(...) of a name the files never write) and digests
// what remains. So a change of tigris.yaml changes the digest only of the
// packages whose selection it can change, which is what lets a build
// recompile just those. Its cost is linear in the size of p's expression
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
	return hex.EncodeToString(digestNodes(n, map[*node][]byte{}))
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
		// Both test the function the join point is in, which is declared here.
		if !n.sig.pkg.matchFunc(r.pkg) || !r.declared(&n.sig.recv, &n.sig.name) {
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

// digestNodes hashes the structure of n: leaves by their canonical text,
// the operands of "and" and "or" as a sorted set. Shared subexpressions are
// hashed once.
func digestNodes(n *node, memo map[*node][]byte) []byte {
	if d, ok := memo[n]; ok {
		return d
	}
	h := sha256.New()
	switch n.op {
	case opAnd, opOr, opNot:
		kids := make([][]byte, len(n.kids))
		for i, k := range n.kids {
			kids[i] = digestNodes(k, memo)
		}
		if n.op != opNot {
			sort.Slice(kids, func(i, j int) bool { return string(kids[i]) < string(kids[j]) })
		}
		h.Write([]byte{byte(n.op)})
		for _, k := range kids {
			h.Write(k)
		}
	default:
		h.Write([]byte{byte(n.op)})
		h.Write([]byte(n.text))
	}
	d := h.Sum(nil)
	memo[n] = d
	return d
}
