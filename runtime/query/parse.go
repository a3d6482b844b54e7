package query

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// MaxText is the longest query text Parse accepts, in bytes; a longer one is
// refused before it is read ("query text of N bytes; the most is 65536").
const MaxText = 64 << 10

// MaxNesting bounds parentheses and NOT/- chains, which the parser follows
// by recursion.
const MaxNesting = 64

// The lexer and parser are built on first use: a program links this package
// with its admin endpoint, and most never parse a query.
var (
	queryLexer = sync.OnceValue(func() *lexer.StatefulDefinition {
		return lexer.MustSimple([]lexer.SimpleRule{
			{Name: "Comment", Pattern: `--[^\n]*`},
			{Name: "Whitespace", Pattern: `\s+`},
			{Name: "Keyword", Pattern: `(?i)\b(` + strings.Join(keywords, "|") + `)\b`},
			{Name: "Duration", Pattern: `(\d+(\.\d+)?(ns|us|µs|ms|min|s|m|h))+\b`},
			{Name: "Percent", Pattern: `\d+(\.\d+)?%`},
			{Name: "Float", Pattern: `\d+\.\d+([eE][-+]?\d+)?|\d+[eE][-+]?\d+`},
			{Name: "Int", Pattern: `\d+`},
			{Name: "String", Pattern: `'(?:[^']|'')*'`},
			{Name: "Ident", Pattern: `[a-zA-Z_][a-zA-Z0-9_]*`},
			{Name: "Op", Pattern: `<=|>=|<>|!=|[-+*/=<>(),;.]`},
		})
	})
	parser = sync.OnceValue(func() *participle.Parser[Script] {
		return participle.MustBuild[Script](
			participle.Lexer(queryLexer()),
			participle.Elide("Whitespace", "Comment"),
			participle.CaseInsensitive("Keyword"),
			participle.Map(unquote, "String"),
			participle.UseLookahead(4),
		)
	})
)

func unquote(t lexer.Token) (lexer.Token, error) {
	t.Value = strings.ReplaceAll(t.Value[1:len(t.Value)-1], "''", "'")
	return t, nil
}

// Grammar returns the grammar as participle's EBNF, without the
// checkpoints that let a parse stop (stop.go): they match nothing.
func Grammar() string { return strings.ReplaceAll(parser().String(), " checkpoint", "") }

// Error is a query error at a position of the text. Its Error method gives
// "query:LINE:COL: message"; Caret gives the line with a caret under the
// column, for terminals.
type Error struct {
	Line, Col int // from 1; Col counts runes
	Msg       string
	text      string
}

func (e *Error) Error() string { return fmt.Sprintf("query:%d:%d: %s", e.Line, e.Col, e.Msg) }

// Caret returns the line of the query the error is on and a caret under its
// column, two lines without a final newline; "" when the text is unknown.
func (e *Error) Caret() string {
	if e.text == "" {
		return ""
	}
	lines := strings.Split(e.text, "\n")
	if e.Line < 1 || e.Line > len(lines) {
		return ""
	}
	line := strings.TrimRight(lines[e.Line-1], "\r")
	col := e.Col
	if n := utf8.RuneCountInString(line); col > n+1 {
		col = n + 1
	}
	return line + "\n" + strings.Repeat(" ", col-1) + "^"
}

// errorAt builds an Error at pos of text.
func errorAt(text string, pos lexer.Position, format string, args ...any) *Error {
	line, col := pos.Line, pos.Column
	if line == 0 {
		line, col = 1, 1
	}
	return &Error{Line: line, Col: col, Msg: fmt.Sprintf(format, args...), text: text}
}

// Parse parses a query text: one or more statements separated by semicolons.
// Errors are *Error. The cost is linear in the text, which is at most
// MaxText bytes.
func Parse(text string) (*Script, error) { return parse(text, nil) }

// parse is Parse, stopping with ErrStopped when st says so.
func parse(text string, st *stopper) (*Script, error) {
	if len(text) > MaxText {
		return nil, &Error{Line: 1, Col: 1, Msg: fmt.Sprintf("query text of %d bytes; the most is %d", len(text), MaxText)}
	}
	if !utf8.ValidString(text) {
		return nil, &Error{Line: 1, Col: 1, Msg: "query text is not valid UTF-8"}
	}
	toks, err := lex(text, st)
	if errors.Is(err, ErrStopped) {
		return nil, err
	}
	if err != nil {
		var lerr *lexer.Error
		if errors.As(err, &lerr) {
			return nil, errorAt(text, lerr.Pos, "unexpected character %q", firstRune(text, lerr.Pos.Offset))
		}
		return nil, &Error{Line: 1, Col: 1, Msg: err.Error(), text: text}
	}
	if err := checkNesting(text, toks); err != nil {
		return nil, err
	}
	s, err := parseTokens(toks, st)
	if st != nil && st.stopped {
		return nil, ErrStopped
	}
	if err != nil {
		var perr participle.Error
		if errors.As(err, &perr) {
			return nil, errorAt(text, perr.Position(), "%s", Clip(friendly(perr.Message())))
		}
		return nil, &Error{Line: 1, Col: 1, Msg: err.Error(), text: text}
	}
	return s, nil
}

// parseTokens runs the parser over the tokens Parse lexed (lexing once: the
// lexer takes half of the parse's time); a panic inside it (a bug of the
// parser library or of the grammar) becomes an error, never the caller's
// panic.
func parseTokens(toks []lexer.Token, st *stopper) (s *Script, err error) {
	defer func() {
		if v := recover(); v != nil {
			s, err = nil, fmt.Errorf("internal parser error: %v", v)
		}
	}()
	peek, err := lexer.Upgrade(&replay{toks: toks}, elided()...)
	if err != nil {
		return nil, err
	}
	if st != nil {
		first := &peek.Range(0, 1)[0]
		parsing.Store(first, st)
		defer parsing.Delete(first)
	}
	return parser().ParseFromLexer(peek)
}

// lex splits text into the parser's tokens (its String tokens unquoted),
// looking at st every stopEvery tokens.
func lex(text string, st *stopper) ([]lexer.Token, error) {
	l, err := parser().Lexer().Lex("", strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	var toks []lexer.Token
	for {
		if st.step() {
			return nil, ErrStopped
		}
		t, err := l.Next()
		if err != nil {
			return nil, err
		}
		toks = append(toks, t)
		if t.EOF() {
			return toks, nil
		}
	}
}

// replay is a lexer that gives back tokens lexed before.
type replay struct{ toks []lexer.Token }

func (r *replay) Next() (lexer.Token, error) {
	if len(r.toks) == 0 {
		return lexer.EOFToken(lexer.Position{}), nil
	}
	t := r.toks[0]
	r.toks = r.toks[1:]
	return t, nil
}

// elided are the token types the parser skips (participle.Elide).
func elided() []lexer.TokenType {
	sym := queryLexer().Symbols()
	return []lexer.TokenType{sym["Whitespace"], sym["Comment"]}
}

// checkNesting refuses texts nested deeper than MaxNesting before the
// recursive parser sees them.
func checkNesting(text string, toks []lexer.Token) error {
	depth, run := 0, 0
	for _, t := range toks {
		switch {
		case t.Value == "(":
			depth++
			if depth > MaxNesting {
				return errorAt(text, t.Pos, "parentheses nested deeper than %d", MaxNesting)
			}
		case t.Value == ")":
			depth--
		}
		if t.Value == "-" || strings.EqualFold(t.Value, "NOT") {
			run++
			if run > MaxNesting {
				return errorAt(text, t.Pos, "more than %d NOT or - in a row", MaxNesting)
			}
		} else if strings.TrimSpace(t.Value) != "" {
			run = 0
		}
	}
	return nil
}

// friendly rewrites participle's messages where they name grammar internals.
func friendly(msg string) string {
	msg = strings.ReplaceAll(msg, `<ident>`, "a name")
	msg = strings.ReplaceAll(msg, `<string>`, "a quoted string")
	msg = strings.ReplaceAll(msg, `<duration>`, "a duration")
	msg = strings.ReplaceAll(msg, `<int>`, "an integer")
	return msg
}

func firstRune(s string, off int) string {
	if off < 0 || off >= len(s) {
		return ""
	}
	r, _ := utf8.DecodeRuneInString(s[off:])
	return string(r)
}

// Dur is a duration literal: a Go duration (300ms, 1.5s, 1h30m) or minutes
// written "min".
type Dur time.Duration

// Capture implements participle.Capture.
func (d *Dur) Capture(values []string) error {
	v, err := ParseDuration(strings.Join(values, ""))
	if err != nil {
		return err
	}
	*d = Dur(v)
	return nil
}

// ParseDuration parses a duration literal.
func ParseDuration(s string) (time.Duration, error) {
	v, err := time.ParseDuration(strings.ReplaceAll(s, "min", "m"))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration", s)
	}
	return v, nil
}

func (d Dur) String() string { return time.Duration(d).String() }

// Percent is a percent literal; its value is the fraction (70% is 0.7).
type Percent float64

// Capture implements participle.Capture.
func (p *Percent) Capture(values []string) error {
	s := strings.TrimSuffix(strings.Join(values, ""), "%")
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) {
		return fmt.Errorf("%q is not a percentage", s+"%")
	}
	*p = Percent(v / 100)
	return nil
}
