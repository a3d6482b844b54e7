package dsl

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"

	"github.com/tigrisgo/tigris/runtime/internal/num"
)

// The grammar is the paper's Listing 1,
//
//	filter    ::= filterdef | ( filter ) | filter operator filter
//	filterdef ::= modifier criterion | criterion
//	operator  ::= ∪ | ∩ | \
//
// made unambiguous with the usual set-algebra precedence (∩ binds tighter than ∪
// and \, which are equal and left-associative; see docs/dsl.md):
//
//	Filter       = Intersection { ( "∪" | "\" ) Intersection } .
//	Intersection = Operand { "∩" Operand } .
//	Operand      = FilterDef | "(" Filter ")" .
//	FilterDef    = [ Modifier ] Criterion .
//	Modifier     = "least" | "less" | "more" | "most" .
//	Criterion    = "frequent" | "maintainable" | "expensive" | "changeable" | "error-prone"
//	             | "usage-pattern" | "state-variation" | "concurrent" | "latent" .
//
// ASCII spellings: "|" and "or" for ∪, "&" and "and" for ∩, "-" and "minus" (and
// U+2216 ∖) for \. Words are case-insensitive.

// Filter is a parsed TigrisDSL expression: Intersections joined by ∪ and \,
// applied left to right. Values are immutable after Parse and safe for
// concurrent use.
type Filter struct {
	Pos  lexer.Position
	Head *Intersection `parser:"@@"`
	Tail []*FilterTail `parser:"@@*"`
}

// FilterTail is one "∪ Intersection" or "\ Intersection" step of a Filter.
type FilterTail struct {
	Pos   lexer.Position
	Op    Op            `parser:"@( '∪' | '|' | 'or' | '\\\\' | '∖' | '-' | 'minus' )"`
	Right *Intersection `parser:"@@"`
}

// Intersection is one or more Operands joined by ∩.
type Intersection struct {
	Pos  lexer.Position
	Head *Operand   `parser:"@@"`
	Tail []*Operand `parser:"( ( '∩' | '&' | 'and' ) @@ )*"`
}

// Operand is a FilterDef or a parenthesised Filter; exactly one is set.
type Operand struct {
	Pos   lexer.Position
	Def   *FilterDef `parser:"  @@"`
	Group *Filter    `parser:"| '(' @@ ')'"`
}

// FilterDef is one criterion with its optional modifier, e.g. "more frequent".
type FilterDef struct {
	Pos lexer.Position
	// Modifier is Least, Less, More or Most, or Plain when no modifier is written.
	Modifier Level `parser:"@( 'least' | 'less' | 'more' | 'most' )?"`
	// Criterion is one of Criteria, in lower case.
	Criterion string `parser:"(?! 'or' | 'and' | 'minus' ) @Ident"`
}

// Op is a set operator between filters.
type Op int8

const (
	Union      Op = iota + 1 // ∪, |, or
	Intersect                // ∩, &, and
	Difference               // \, ∖, -, minus
)

// String returns the paper's symbol: "∪", "∩" or "\".
func (o Op) String() string {
	switch o {
	case Union:
		return "∪"
	case Intersect:
		return "∩"
	case Difference:
		return `\`
	}
	return fmt.Sprintf("Op(%d)", int8(o))
}

// Capture implements participle.Capture.
func (o *Op) Capture(values []string) error {
	v, ok := opWords[strings.ToLower(strings.Join(values, ""))]
	if !ok {
		return fmt.Errorf("unknown operator %q", strings.Join(values, ""))
	}
	*o = v
	return nil
}

var opWords = map[string]Op{
	"∪": Union, "|": Union, "or": Union,
	"∩": Intersect, "&": Intersect, "and": Intersect,
	`\`: Difference, "∖": Difference, "-": Difference, "minus": Difference,
}

var modifierWords = []string{"least", "less", "more", "most"}

// The lexer and parser are built on first use, not at init: every instrumented
// program links this package, and most never parse a filter.
var (
	dslLexer = sync.OnceValue(func() *lexer.StatefulDefinition {
		return lexer.MustSimple([]lexer.SimpleRule{
			// Hyphens join words, so "error-prone" is one identifier and a "-" meant
			// as set difference must not touch the word before it.
			{Name: "Ident", Pattern: `[\pL_][\pL\pN_]*(?:-[\pL_][\pL\pN_]*)*`},
			{Name: "Op", Pattern: `[∪∩∖\\|&-]`},
			{Name: "Paren", Pattern: `[()]`},
			{Name: "Whitespace", Pattern: `[\s\p{Zs}]+`},
		})
	})
	parser = sync.OnceValue(func() *participle.Parser[Filter] {
		return participle.MustBuild[Filter](
			participle.Lexer(dslLexer()),
			participle.Elide("Whitespace"),
			participle.CaseInsensitive("Ident"),
		)
	})
)

// Grammar returns the grammar as participle's EBNF.
func Grammar() string { return parser().String() }

// Parse parses a TigrisDSL filter such as
//
//	(more frequent ∪ most expensive) ∩ least changeable
//
// Errors implement participle.Error: Position gives the line and column (in
// runes, from 1) and Message says what is allowed there.
func Parse(expr string) (*Filter, error) {
	if len(expr) > MaxFilterLen {
		return nil, participle.Errorf(lexer.Position{Line: 1, Column: 1}, "filter is longer than %d bytes", MaxFilterLen)
	}
	toks, err := parser().Lex("", strings.NewReader(expr))
	if err != nil {
		var lerr *lexer.Error
		if errors.As(err, &lerr) {
			return nil, participle.Errorf(lerr.Pos, "invalid character %q: a filter has criteria, modifiers, parentheses and the operators ∪ ∩ \\ (or | & -, or, and, minus)", firstRune(expr, lerr.Pos.Offset))
		}
		return nil, err
	}
	if err := checkWords(toks); err != nil {
		return nil, err
	}
	if err := checkNesting(toks); err != nil {
		return nil, err
	}
	f, err := parser().ParseString("", expr)
	if err != nil {
		return nil, explain(err, toks)
	}
	if err := f.normalize(); err != nil {
		return nil, err
	}
	return f, nil
}

// Limits of a filter's text. The parser recurses once per open parenthesis,
// so without a bound a filter from the environment or the admin API of a few
// hundred kilobytes of "(" would grow a goroutine's stack past Go's limit and
// end the program; the analyzer never needs more than a few levels.
const (
	MaxFilterLen = 16 << 10 // bytes
	MaxNesting   = 64       // parentheses open at once
)

// checkNesting reports the parenthesis that opens more than MaxNesting at
// once.
func checkNesting(toks []lexer.Token) error {
	depth := 0
	for _, t := range toks {
		switch t.Value {
		case "(":
			if depth++; depth > MaxNesting {
				return participle.Errorf(t.Pos, "filter nested deeper than %d parentheses", MaxNesting)
			}
		case ")":
			depth--
		}
	}
	return nil
}

// MustParse is like Parse but panics on error. It is meant for filters written in
// code, like regexp.MustCompile.
func MustParse(expr string) *Filter {
	f, err := Parse(expr)
	if err != nil {
		panic(fmt.Sprintf("dsl: MustParse(%q): %v", expr, err))
	}
	return f
}

func firstRune(s string, off int) string {
	if off < 0 || off >= len(s) {
		return ""
	}
	for _, r := range s[off:] {
		return string(r)
	}
	return ""
}

// checkWords rejects a word that is neither a criterion, a modifier nor an
// operator, and a modifier not followed by a criterion, before the parser sees
// them, so the error names the word and lists the valid ones instead of
// complaining about the token after it.
func checkWords(all []lexer.Token) error {
	syms := dslLexer().Symbols()
	ident, ws := syms["Ident"], syms["Whitespace"]
	toks := slices.DeleteFunc(slices.Clone(all), func(t lexer.Token) bool { return t.Type == ws })
	word := func(i int) string {
		if i < len(toks) && toks[i].Type == ident {
			return strings.ToLower(toks[i].Value)
		}
		return ""
	}
	for i, t := range toks {
		w := word(i)
		switch {
		case w == "" || IsCriterion(w) || isOpWord(w):
		case slices.Contains(modifierWords, w):
			if i+1 < len(toks) && toks[i+1].Value == "(" {
				return participle.Errorf(t.Pos, "modifier %q applies to one criterion, not to a parenthesised filter", t.Value)
			}
			if !IsCriterion(word(i + 1)) {
				pos := t.Pos
				miss := ""
				if i+1 < len(toks) {
					pos = toks[i+1].Pos
					if near := nearest(word(i+1), Criteria); near != "" {
						miss = fmt.Sprintf(": %q is not one; did you mean %q?", toks[i+1].Value, near)
					}
				} else {
					pos.Advance(t.Value)
				}
				return participle.Errorf(pos, "expected a criterion after %q%s (valid: %s)", t.Value, miss, strings.Join(Criteria, ", "))
			}
		case IsCriterion(word(i + 1)):
			miss := ""
			if near := nearest(w, modifierWords); near != "" {
				miss = fmt.Sprintf("; did you mean %q?", near)
			}
			return participle.Errorf(t.Pos, "unknown modifier %q%s (valid: %s)", t.Value, miss, strings.Join(modifierWords, ", "))
		default:
			return participle.Errorf(t.Pos, "unknown criterion %q%s (valid: %s)", t.Value, hint(w), strings.Join(Criteria, ", "))
		}
	}
	return nil
}

// hint suggests a fix for a common misspelling of a criterion.
func hint(w string) string {
	if alt := strings.ReplaceAll(w, "_", "-"); alt != w && IsCriterion(alt) {
		return fmt.Sprintf("; did you mean %q?", alt)
	}
	if m, c, ok := strings.Cut(w, "-"); ok {
		if slices.Contains(modifierWords, m) && IsCriterion(c) {
			return fmt.Sprintf("; did you mean %q?", m+" "+c)
		}
		if IsCriterion(m) || IsCriterion(c) {
			return "; write set difference with spaces around \"-\", as in \"frequent - expensive\""
		}
	}
	if IsCriterion(strings.TrimSuffix(w, "s")) {
		return fmt.Sprintf("; did you mean %q?", strings.TrimSuffix(w, "s"))
	}
	if near := nearest(w, Criteria); near != "" {
		return fmt.Sprintf("; did you mean %q?", near)
	}
	if near := nearest(w, modifierWords); near != "" {
		return fmt.Sprintf("; did you mean the modifier %q (before a criterion)?", near)
	}
	return ""
}

// nearest returns the word of known that w is a near miss of: at most one
// edit (an insertion, deletion, substitution or swap of neighbours) per three
// characters away, the closest first; "" when none is.
func nearest(w string, known []string) string {
	limit := num.Max(1, utf8.RuneCountInString(w)/3)
	best, bestDist := "", limit+1
	for _, k := range known {
		if d := editDistance([]rune(w), []rune(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance of a and b: the
// Levenshtein distance with swaps of adjacent characters counting one edit
// ("mroe" is one edit from "more"). Cost O(len(a)·len(b)); words are short.
func editDistance(a, b []rune) int {
	// rows[k] holds the distances of a[:i-2+k] to every prefix of b.
	var rows [3][]int
	for k := range rows {
		rows[k] = make([]int, len(b)+1)
	}
	for j := range rows[2] {
		rows[2][j] = j
	}
	for i := 1; i <= len(a); i++ {
		rows[0], rows[1], rows[2] = rows[1], rows[2], rows[0]
		cur, prev, prev2 := rows[2], rows[1], rows[0]
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = num.Min(num.Min(prev[j]+1, cur[j-1]+1), prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = num.Min(cur[j], prev2[j-2]+1)
			}
		}
	}
	return rows[2][len(b)]
}

// explain turns participle's structural errors into messages that say what may
// come at that point.
func explain(err error, toks []lexer.Token) error {
	var ute *participle.UnexpectedTokenError
	if !errors.As(err, &ute) {
		return err
	}
	tok := ute.Unexpected
	if tok.EOF() {
		prev := ""
		for i := len(toks) - 1; i >= 0; i-- {
			if !toks[i].EOF() && toks[i].Type != dslLexer().Symbols()["Whitespace"] {
				prev = strings.ToLower(toks[i].Value)
				break
			}
		}
		switch {
		case prev == "":
			return participle.Errorf(tok.Pos, "empty filter: write criteria with optional modifiers joined by ∪ ∩ \\, e.g. \"more frequent ∪ most expensive\"")
		case slices.Contains(modifierWords, prev):
			return participle.Errorf(tok.Pos, "expected a criterion after %q (valid: %s)", prev, strings.Join(Criteria, ", "))
		case prev == "(":
			return participle.Errorf(tok.Pos, "expected a filter after \"(\"")
		case isOpWord(prev):
			return participle.Errorf(tok.Pos, "expected a filter after operator %q", prev)
		}
		return participle.Errorf(tok.Pos, "unexpected end of filter: missing \")\"")
	}
	v := strings.ToLower(tok.Value)
	switch {
	case v == ")":
		return participle.Errorf(tok.Pos, "unexpected \")\": expected a criterion, a modifier or \"(\"")
	case v == "(":
		return participle.Errorf(tok.Pos, "unexpected \"(\": expected an operator (∪ ∩ \\) or \")\" before it")
	case isOpWord(v):
		return participle.Errorf(tok.Pos, "unexpected operator %q: expected a criterion, a modifier or \"(\"", tok.Value)
	case IsCriterion(v) || slices.Contains(modifierWords, v):
		return participle.Errorf(tok.Pos, "unexpected %q: expected an operator (∪ ∩ \\, or | & -, or, and, minus) or \")\" before it", tok.Value)
	}
	return participle.Errorf(tok.Pos, "unexpected %q", tok.Value)
}

func isOpWord(w string) bool { _, ok := opWords[w]; return ok }

// normalize lower-cases the criteria, which the case-insensitive parser keeps as
// written, and rejects an operator word parsed as a criterion ("∪ or").
func (f *Filter) normalize() error {
	var err error
	f.walkDefs(func(d *FilterDef) {
		d.Criterion = strings.ToLower(d.Criterion)
		if err == nil && !IsCriterion(d.Criterion) {
			err = participle.Errorf(d.Pos, "unexpected operator %q: expected a criterion, a modifier or \"(\"", d.Criterion)
		}
	})
	return err
}

func (f *Filter) walkDefs(fn func(*FilterDef)) {
	f.Head.walkDefs(fn)
	for _, t := range f.Tail {
		t.Right.walkDefs(fn)
	}
}

func (in *Intersection) walkDefs(fn func(*FilterDef)) {
	in.Head.walkDefs(fn)
	for _, o := range in.Tail {
		o.walkDefs(fn)
	}
}

func (o *Operand) walkDefs(fn func(*FilterDef)) {
	if o.Def != nil {
		fn(o.Def)
	} else {
		o.Group.walkDefs(fn)
	}
}

// Criteria lists the criteria f uses, each once, in order of first appearance.
func (f *Filter) Criteria() []string {
	var cs []string
	f.walkDefs(func(d *FilterDef) {
		if !slices.Contains(cs, d.Criterion) {
			cs = append(cs, d.Criterion)
		}
	})
	return cs
}

// String returns the canonical text of f: lower-case words, the paper's symbols
// ∪ ∩ \ with single spaces, and only the parentheses the precedence needs.
// Parse(f.String()) selects exactly what f selects, and its String is the same.
func (f *Filter) String() string {
	var b strings.Builder
	f.print(&b)
	return b.String()
}

// MarshalText encodes f as its String. (There is no UnmarshalText: participle
// would treat a Filter field as text to capture; use Parse.)
func (f *Filter) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// Operator precedence levels for printing.
const (
	precUnion = 1 // ∪ and \
	precInter = 2 // ∩
	precLeaf  = 3
)

// prec returns the precedence of the outermost operator of f, looking through
// redundant parentheses.
func (f *Filter) prec() int {
	if len(f.Tail) > 0 {
		return precUnion
	}
	return f.Head.prec()
}

func (in *Intersection) prec() int {
	if len(in.Tail) > 0 {
		return precInter
	}
	return in.Head.prec()
}

func (o *Operand) prec() int {
	if o.Def != nil {
		return precLeaf
	}
	return o.Group.prec()
}

func (f *Filter) print(b *strings.Builder) {
	// The head of a left-associative chain never needs parentheses.
	f.Head.print(b)
	for _, t := range f.Tail {
		b.WriteString(" ")
		b.WriteString(t.Op.String())
		b.WriteString(" ")
		// The right operand of ∪ or \ needs them when it is itself a ∪/\ chain:
		// a \ (b ∪ c) differs from (a \ b) ∪ c.
		if t.Right.prec() == precUnion {
			b.WriteString("(")
			t.Right.print(b)
			b.WriteString(")")
		} else {
			t.Right.print(b)
		}
	}
}

func (in *Intersection) print(b *strings.Builder) {
	if len(in.Tail) == 0 {
		in.Head.print(b)
		return
	}
	for i, o := range append([]*Operand{in.Head}, in.Tail...) {
		if i > 0 {
			b.WriteString(" ∩ ")
		}
		// ∩ is associative, so a nested ∩ chain needs no parentheses in either
		// position; a ∪/\ chain always does.
		if o.prec() == precUnion {
			b.WriteString("(")
			o.print(b)
			b.WriteString(")")
		} else {
			o.print(b)
		}
	}
}

func (o *Operand) print(b *strings.Builder) {
	if o.Def != nil {
		b.WriteString(o.Def.String())
		return
	}
	o.Group.print(b)
}

// String returns "criterion" or "modifier criterion".
func (d *FilterDef) String() string {
	if d.Modifier == Plain {
		return d.Criterion
	}
	return d.Modifier.String() + " " + d.Criterion
}
