package pointcut

import "strings"

// This file holds the compiled matchers. They are built once by compile.go and never
// change, so one Pointcut can be used from many goroutines. Matching slices the
// strings of a Signature and never allocates.

// glob matches one name or one import path element; "*" matches any run of
// characters, including none.
type glob struct {
	kind  globKind
	lit   string   // globLiteral, globPrefix, globSuffix: the fixed text
	parts []string // globGeneral: the texts around the stars, first and last may be ""
}

type globKind uint8

const (
	globAny globKind = iota
	globLiteral
	globPrefix // "lit*"
	globSuffix // "*lit"
	globGeneral
)

func newGlob(pattern string) glob {
	stars := strings.Count(pattern, "*")
	switch {
	case stars == 0:
		return glob{kind: globLiteral, lit: pattern}
	case stars == len(pattern):
		return glob{kind: globAny}
	case stars == 1 && pattern[len(pattern)-1] == '*':
		return glob{kind: globPrefix, lit: pattern[:len(pattern)-1]}
	case stars == 1 && pattern[0] == '*':
		return glob{kind: globSuffix, lit: pattern[1:]}
	}
	return glob{kind: globGeneral, parts: strings.Split(pattern, "*")}
}

func (g *glob) match(s string) bool {
	switch g.kind {
	case globAny:
		return true
	case globLiteral:
		return s == g.lit
	case globPrefix:
		return strings.HasPrefix(s, g.lit)
	case globSuffix:
		return strings.HasSuffix(s, g.lit)
	}
	first, last := g.parts[0], g.parts[len(g.parts)-1]
	if len(s) < len(first)+len(last) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
		return false
	}
	s = s[len(first) : len(s)-len(last)]
	for _, p := range g.parts[1 : len(g.parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return true
}

// pkgMatcher matches an import path.
type pkgMatcher struct {
	kind  pkgKind
	lit   string    // pkgExact: the path; pkgTree: the root
	elems []pkgElem // pkgGeneral
	short glob      // pkgShort: the package name
}

type pkgKind uint8

const (
	pkgAny     pkgKind = iota
	pkgExact           // "net/http"
	pkgTree            // "example.com/shop/...": the root and every path below it
	pkgShort           // "model" in a type: any package named model (see packageNames)
	pkgGeneral         // path elements with globs and "..."
)

// pkgElem is one element of a general path pattern.
type pkgElem struct {
	many bool // "..." or "..": any number of elements, including none
	name glob
}

func (m *pkgMatcher) match(path string) bool {
	switch m.kind {
	case pkgAny:
		return true
	case pkgExact:
		return path == m.lit
	case pkgTree:
		return strings.HasPrefix(path, m.lit) && (len(path) == len(m.lit) || path[len(m.lit)] == '/')
	case pkgShort:
		name, alt1, alt2 := packageNames(path)
		return m.short.match(name) || (alt1 != "" && m.short.match(alt1)) || (alt2 != "" && m.short.match(alt2))
	}
	return matchElems(m.elems, path, path == "")
}

// matchFunc matches the package of function s. The pattern main matches every
// main package: the go command compiles a command's package by its import path,
// but Go calls it main (main.main in tracebacks and profiles), and so do users.
func (m *pkgMatcher) matchFunc(s *Signature) bool {
	return m.match(s.Package) || m.kind == pkgExact && m.lit == "main" && s.Flags&Main != 0
}

// matchElems matches the "/"-separated elements of path against elems. done reports
// that no element is left (path is then "").
func matchElems(elems []pkgElem, path string, done bool) bool {
	for i := range elems {
		e := &elems[i]
		if e.many {
			rest := elems[i+1:]
			if len(rest) == 0 {
				return true
			}
			for {
				if matchElems(rest, path, done) {
					return true
				}
				if done {
					return false
				}
				if j := strings.IndexByte(path, '/'); j >= 0 {
					path = path[j+1:]
				} else {
					path, done = "", true
				}
			}
		}
		if done {
			return false
		}
		elem := path
		if j := strings.IndexByte(path, '/'); j >= 0 {
			elem, path = path[:j], path[j+1:]
		} else {
			path, done = "", true
		}
		if !e.name.match(elem) {
			return false
		}
	}
	return done
}

// packageNames returns the names a package with this import path is likely declared
// with: its last element, and when that is a major version ("/v2") the element before
// it, and when it ends in ".vN" (gopkg.in style) the text before that. Short type
// qualifiers such as "model.Owner" or "yaml.Node" match any of them.
func packageNames(path string) (name, alt1, alt2 string) {
	name = path[strings.LastIndexByte(path, '/')+1:]
	if isMajorVersion(name) && len(path) > len(name) {
		prev := path[:len(path)-len(name)-1]
		alt1 = prev[strings.LastIndexByte(prev, '/')+1:]
	}
	if i := strings.LastIndex(name, ".v"); i > 0 && isDigits(name[i+2:]) {
		alt2 = name[:i]
	}
	return name, alt1, alt2
}

func isMajorVersion(s string) bool { return len(s) >= 2 && s[0] == 'v' && isDigits(s[1:]) }

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// typeMatcher matches one type written the way Signature writes types (go/types
// notation with full import paths). match consumes a type at the start of a string
// and reports how many bytes it used, so patterns nest: "map[string]*".
type typeMatcher struct {
	kind    typeKind
	lit     string       // typePrefix: the fixed prefix; typeWord: the word
	elem    *typeMatcher // typePrefix, typeArray, typeMap (value)
	key     *typeMatcher // typeMap
	pkg     *pkgMatcher  // typeNamed; nil for an unqualified name
	name    glob         // typeNamed
	args    *listMatcher // typeNamed: type arguments (nil: not checked); typeFunc: parameters
	results *listMatcher // typeFunc
}

type typeKind uint8

const (
	typeAny    typeKind = iota // "*": any one type
	typePrefix                 // "*T", "[]T", "[4]T", "chan T", "<-chan T", "chan<- T", "...T"
	typeArray                  // "[*]T": an array of any length
	typeMap                    // "map[K]V"
	typeFunc                   // "func(P) R"
	typeNamed                  // "pkg.Name[Args]", "int", "T"
	typeWord                   // "interface{}", "struct{}"
)

// matchAll reports whether t matches all of s.
func (t *typeMatcher) matchAll(s string) bool {
	if t.kind == typeAny {
		return s != ""
	}
	n, ok := t.match(s)
	return ok && n == len(s)
}

func (t *typeMatcher) match(s string) (int, bool) {
	switch t.kind {
	case typeAny:
		n := skipType(s)
		return n, n > 0
	case typePrefix:
		if !strings.HasPrefix(s, t.lit) {
			return 0, false
		}
		n, ok := t.elem.match(s[len(t.lit):])
		return len(t.lit) + n, ok
	case typeArray:
		i := 1
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if len(s) == 0 || s[0] != '[' || i == 1 || i >= len(s) || s[i] != ']' {
			return 0, false
		}
		n, ok := t.elem.match(s[i+1:])
		return i + 1 + n, ok
	case typeMap:
		if !strings.HasPrefix(s, "map[") {
			return 0, false
		}
		i := len("map[")
		n, ok := t.key.match(s[i:])
		if !ok || i+n >= len(s) || s[i+n] != ']' {
			return 0, false
		}
		i += n + 1
		n, ok = t.elem.match(s[i:])
		return i + n, ok
	case typeFunc:
		return t.matchFunc(s)
	case typeWord:
		if strings.HasPrefix(s, t.lit) {
			return len(t.lit), true
		}
		if t.lit == "interface{}" && isWord(s, "any") {
			return len("any"), true
		}
		return 0, false
	}
	return t.matchNamed(s)
}

func (t *typeMatcher) matchNamed(s string) (int, bool) {
	n := scanName(s)
	if n == 0 {
		return 0, false
	}
	run := s[:n]
	dot := strings.LastIndexByte(run, '.')
	switch {
	case t.pkg == nil:
		if dot >= 0 || !t.name.match(run) {
			if t.name.kind == globLiteral && t.name.lit == "any" && strings.HasPrefix(s, "interface{}") {
				return len("interface{}"), true
			}
			return 0, false
		}
	case dot <= 0 || !t.name.match(run[dot+1:]) || !t.pkg.match(run[:dot]):
		return 0, false
	}
	if n < len(s) && s[n] == '[' {
		if t.args == nil {
			return n + skipGroup(s[n:]), true
		}
		m, ok := t.args.matchSeq(s[n+1:], ']')
		return n + 1 + m + 1, ok
	}
	return n, t.args == nil
}

func (t *typeMatcher) matchFunc(s string) (int, bool) {
	if !strings.HasPrefix(s, "func(") {
		return 0, false
	}
	i := len("func(")
	n, ok := t.args.matchSeq(s[i:], ')')
	if !ok {
		return 0, false
	}
	i += n + 1
	rest := s[i:]
	switch {
	case strings.HasPrefix(rest, " ("):
		n, ok := t.results.matchSeq(rest[2:], ')')
		return i + 2 + n + 1, ok
	case strings.HasPrefix(rest, " ") && len(rest) > 1 && !isDelimiter(rest[1]):
		n := skipType(rest[1:])
		return i + 1 + n, t.results.matchOne(rest[1 : 1+n])
	}
	return i, t.results.min == 0
}

// scanName returns the length of the qualified identifier at the start of s: an
// import path, a dot and a name ("example.com/shop/model.Owner"), or a plain name.
func scanName(s string) int {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '_' || c == '.' || c == '/' || c == '-' || c == '~' || c == '+' || c >= 0x80 {
			i++
			continue
		}
		break
	}
	return i
}

func isWord(s, w string) bool {
	return strings.HasPrefix(s, w) && (len(s) == len(w) || scanName(s[len(w):]) == 0)
}

func isDelimiter(c byte) bool {
	return c == ',' || c == ')' || c == ']' || c == '}' || c == ';'
}

// skipType returns the length of the type at the start of s: everything up to the
// first ",", ")", "]", "}" or ";" outside brackets.
func skipType(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth == 0 {
				return i
			}
			depth--
		case ',', ';':
			if depth == 0 {
				return i
			}
		}
	}
	return len(s)
}

// skipGroup returns the length of the bracketed group at the start of s, or len(s)
// when it is not closed.
func skipGroup(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

// listMatcher matches a list of types: parameters, results or type arguments.
type listMatcher struct {
	items []listItem
	min   int  // number of items that match exactly one type
	many  bool // some item is ".."
}

// listItem is one entry of a list pattern: ".." (any number of types) or a type.
type listItem struct {
	many bool
	typ  *typeMatcher
}

// matchStrings matches a list given as one string per type (Signature.Params and
// Signature.Results).
func (l *listMatcher) matchStrings(xs []string) bool {
	if len(xs) < l.min || !l.many && len(xs) != l.min {
		return false
	}
	return matchStrings(l.items, xs)
}

func matchStrings(items []listItem, xs []string) bool {
	for len(items) > 0 {
		if items[0].many {
			items = items[1:]
			if len(items) == 0 {
				return true
			}
			for k := 0; k <= len(xs); k++ {
				if matchStrings(items, xs[k:]) {
					return true
				}
			}
			return false
		}
		if len(xs) == 0 || !items[0].typ.matchAll(xs[0]) {
			return false
		}
		items, xs = items[1:], xs[1:]
	}
	return len(xs) == 0
}

// matchOne matches a list of exactly one type, s.
func (l *listMatcher) matchOne(s string) bool {
	switch {
	case l.min == 1:
		for i := range l.items {
			if !l.items[i].many {
				return l.items[i].typ.matchAll(s)
			}
		}
	case l.min == 0:
		return l.many
	}
	return false
}

// matchSeq matches the items against the ", "-separated types at the start of s that
// end at closer (outside brackets) and returns the length up to the closer.
func (l *listMatcher) matchSeq(s string, closer byte) (int, bool) {
	if s != "" && s[0] == closer {
		return 0, matchSeqAt(l.items, s, 0, closer, true)
	}
	end := 0
	for {
		n := skipType(s[end:])
		end += n
		if end >= len(s) {
			return 0, false
		}
		if s[end] == closer {
			break
		}
		if s[end] != ',' {
			return 0, false
		}
		end++
	}
	return end, matchSeqAt(l.items, s[:end+1], 0, closer, false)
}

// matchSeqAt matches items against the types of seq from offset i; seq ends with the
// closer. empty reports that no type is left.
func matchSeqAt(items []listItem, seq string, i int, closer byte, empty bool) bool {
	for len(items) > 0 {
		if items[0].many {
			items = items[1:]
			if len(items) == 0 {
				return true
			}
			for {
				if matchSeqAt(items, seq, i, closer, empty) {
					return true
				}
				if empty {
					return false
				}
				i, empty = nextInSeq(seq, i+skipType(seq[i:]), closer)
			}
		}
		if empty {
			return false
		}
		n, ok := items[0].typ.match(seq[i:])
		if !ok || n != skipType(seq[i:]) {
			return false
		}
		i, empty = nextInSeq(seq, i+n, closer)
		items = items[1:]
	}
	return empty
}

// nextInSeq steps over the separator after a type that ends at offset end.
func nextInSeq(seq string, end int, closer byte) (int, bool) {
	if seq[end] == closer {
		return end, true
	}
	end++ // ","
	if end < len(seq) && seq[end] == ' ' {
		end++
	}
	return end, false
}

// resultMatcher matches Signature.Results.
type resultMatcher struct {
	any  bool // "*" or no result pattern: any results, including none
	list listMatcher
}

func (r *resultMatcher) match(results []string) bool { return r.any || r.list.matchStrings(results) }

// recvMatcher matches the receiver of a Signature.
type recvMatcher struct {
	kind    recvKind
	name    glob
	generic bool // the receiver type has type parameters
}

type recvKind uint8

const (
	recvEither recvKind = iota // no receiver pattern: functions and methods
	recvSet                    // "(*T)": methods in the method set of *T, pointer or value receiver
	recvValue                  // "T": methods with a value receiver
)

func (r *recvMatcher) match(s *Signature) bool {
	switch r.kind {
	case recvEither:
		return true
	case recvValue:
		if s.RecvPtr {
			return false
		}
	}
	return s.Recv != "" && r.name.match(s.Recv) && (!r.generic || s.Flags&Generic != 0)
}

// sigMatcher matches a signature pattern: execution(...) and call(...).
type sigMatcher struct {
	pkg     pkgMatcher
	recv    recvMatcher
	name    glob
	generic bool // the name has type parameters
	lit     glob // hasLit: the literal part, separator first; "*" matches dots too
	hasLit  bool // the pattern selects function literals, and only them
	params  listMatcher
	results resultMatcher
}

func (m *sigMatcher) match(s *Signature) bool {
	return (m.hasLit && s.Lit != "" && m.lit.match(s.Lit) || !m.hasLit && s.Lit == "") &&
		m.name.match(s.Name) &&
		m.recv.match(s) &&
		m.pkg.matchFunc(s) &&
		(!m.generic || s.Flags&Generic != 0) &&
		m.params.matchStrings(s.Params) &&
		m.results.match(s.Results)
}

// scopeMatcher matches within(...): a package and optionally a receiver.
type scopeMatcher struct {
	pkg  pkgMatcher
	recv recvMatcher
}

func (m *scopeMatcher) match(s *Signature) bool { return m.pkg.matchFunc(s) && m.recv.match(s) }
