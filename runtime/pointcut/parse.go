package pointcut

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// Limits that keep parsing cheap and its recursion shallow whatever the input.
const (
	maxExprLen = 16 << 10
	maxNesting = 64 // brackets open at once
	maxRun     = 64 // prefix tokens in a row: "!!!", "***", "[][]", "chan chan"
)

// parseAST lexes and parses expr. Before handing the tokens to participle it checks
// what participle reports poorly: an empty expression, unbalanced brackets and deep
// nesting; when participle fails it looks for a misspelt designator.
func parseAST(expr string) (*orExpr, error) {
	if len(expr) > maxExprLen {
		return nil, participle.Errorf(lexer.Position{Line: 1, Column: 1}, "expression is longer than %d bytes", maxExprLen)
	}
	toks, err := parser().Lex("", strings.NewReader(expr))
	if err != nil {
		return nil, explainLexError(err)
	}
	toks = significant(toks)
	if err := checkBrackets(toks, expr); err != nil {
		return nil, err
	}
	ast, err := parser().ParseString("", expr)
	if err != nil {
		if better := unknownDesignator(toks); better != nil {
			return nil, better
		}
		return nil, explainParseError(err)
	}
	return ast, nil
}

// significant drops white space and the EOF token.
func significant(toks []lexer.Token) []lexer.Token {
	ws := lex().Symbols()["Whitespace"]
	out := toks[:0]
	for _, t := range toks {
		if t.Type != ws && !t.EOF() {
			out = append(out, t)
		}
	}
	return out
}

// checkBrackets reports an empty expression, an unclosed or unopened bracket, and
// nesting deeper than maxNesting or maxRun, which keeps the parser's recursion shallow.
func checkBrackets(toks []lexer.Token, expr string) error {
	if len(toks) == 0 {
		return participle.Errorf(endPos(expr), "empty pointcut expression; expected e.g. execution(* example.com/shop/...*(..))")
	}
	var open []lexer.Token
	run := 0
	for _, t := range toks {
		switch strings.TrimSpace(t.Value) {
		case "!", "*", "[", "]", "chan", "<-":
			if run++; run > maxRun {
				return participle.Errorf(t.Pos, "expression nested deeper than %d", maxRun)
			}
		default:
			run = 0
		}
		switch t.Value {
		case "(", "[", "{":
			if len(open) == maxNesting {
				return participle.Errorf(t.Pos, "expression nested deeper than %d", maxNesting)
			}
			open = append(open, t)
		case ")", "]", "}":
			if len(open) == 0 {
				return participle.Errorf(t.Pos, "unexpected %q without a matching opening bracket", t.Value)
			}
			o := open[len(open)-1]
			if want := closing(o.Value); t.Value != want {
				return participle.Errorf(t.Pos, "expected %q to close %q at %d:%d, found %q", want, o.Value, o.Pos.Line, o.Pos.Column, t.Value)
			}
			open = open[:len(open)-1]
		}
	}
	if len(open) > 0 {
		o := open[len(open)-1]
		return participle.Errorf(endPos(expr), "expected %q to close %q at %d:%d", closing(o.Value), o.Value, o.Pos.Line, o.Pos.Column)
	}
	return nil
}

func closing(open string) string {
	switch open {
	case "(":
		return ")"
	case "[":
		return "]"
	}
	return "}"
}

// endPos is the position just after the last byte of expr.
func endPos(expr string) lexer.Position {
	pos := lexer.Position{Offset: len(expr), Line: 1 + strings.Count(expr, "\n"), Column: 1}
	pos.Column += len(expr) - (strings.LastIndexByte(expr, '\n') + 1)
	return pos
}

// unknownDesignator finds a word followed by "(" where a term is expected that is not
// a designator or predicate, such as "executon(".
func unknownDesignator(toks []lexer.Token) error {
	for i := 0; i < len(toks)-1; i++ {
		t := toks[i]
		if toks[i+1].Value != "(" || !isIdent(t.Value) {
			continue
		}
		if i > 0 {
			switch toks[i-1].Value {
			case "(", "!", "&&", "||":
			default:
				continue
			}
		}
		known := isPredicateName(t.Value)
		for _, d := range designators {
			known = known || d == t.Value
		}
		if !known {
			return participle.Errorf(t.Pos, "unknown designator %s(; expected execution(...), call(...), within(...), args(...) or a predicate: %s", t.Value, predicateList())
		}
		// Skip the designator's arguments: their words are patterns, not terms.
		depth := 0
		for i++; i < len(toks); i++ {
			if v := toks[i].Value; v == "(" {
				depth++
			} else if v == ")" {
				if depth--; depth == 0 {
					break
				}
			}
		}
	}
	return nil
}

func isIdent(s string) bool {
	for i, r := range s {
		if !(r == '_' || isLetter(r) || i > 0 && isDigit(r)) {
			return false
		}
	}
	return s != ""
}

func isLetter(r rune) bool { return unicode.IsLetter(r) }
func isDigit(r rune) bool  { return unicode.IsDigit(r) }

// explainLexError rewrites participle's "invalid input text" with the character at
// fault and, for the usual slips, what to write instead.
func explainLexError(err error) error {
	var lerr *lexer.Error
	if !errors.As(err, &lerr) {
		return err
	}
	text := lerr.Msg
	if i := strings.IndexByte(text, '"'); i >= 0 {
		if s, uerr := strconv.Unquote(text[i:]); uerr == nil && s != "" {
			text = s
		}
	}
	r, _ := utf8.DecodeRuneInString(text)
	hint := ""
	switch {
	case strings.HasPrefix(text, "&"):
		hint = "; write && for and"
	case strings.HasPrefix(text, "|"):
		hint = "; write || for or"
	case strings.HasPrefix(text, "\""):
		hint = "; a quoted package path must end with \" on the same line"
	case strings.HasPrefix(text, "/"):
		hint = "; a package path has no empty elements (no leading, trailing or double /)"
	}
	return participle.Errorf(lerr.Pos, "unexpected character %q%s", r, hint)
}

// grammarWords turns the production names participle puts in "(expected ...)" into
// words for people.
var grammarWords = strings.NewReplacer(
	`token "<EOF>"`, "end of expression",
	"ParamList?", "parameters",
	"ParamList", "parameters",
	"UnaryExpr", "a term such as execution(...), within(...) or a pointcut name",
	"OrExpr", "an expression",
	"Param", "a parameter type or ..",
	"TypePattern", "a type",
	"SigPattern", "a function pattern such as * example.com/x.F(..)",
	"ScopePattern", "a package pattern",
	"PkgPattern", "a package pattern",
	"RecvPattern", "a receiver",
	"NamePattern", "a name",
	"<ident>", "a name",
	"<path>", "a package path",
	"<string>", "a quoted package path",
	"<int>", "an array length",
	"<keyword>", "a type",
	"<starspace>", `"*"`,
)

// explainParseError rewrites participle's errors in the words of the pointcut language.
func explainParseError(err error) error {
	var perr participle.Error
	if !errors.As(err, &perr) {
		return err
	}
	msg := grammarWords.Replace(perr.Message())
	var unexpected *participle.UnexpectedTokenError
	if errors.As(err, &unexpected) && !strings.Contains(msg, "(expected") {
		// participle found a complete expression followed by more tokens.
		switch v := unexpected.Unexpected.Value; v {
		case "&&", "||":
			msg += fmt.Sprintf("; expected a term before %s", v)
		default:
			msg += "; expected && or || between terms"
		}
	}
	return participle.Errorf(perr.Position(), "%s", msg)
}
