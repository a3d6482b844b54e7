package query

import (
	"errors"
	"sync"

	"github.com/alecthomas/participle/v2/lexer"
)

// Compiling stops when asked (CompileStop), within a bounded amount of work
// whatever the text: the lexer looks at the stop function every stopEvery
// tokens, the parser at the end of every statement, output column, product
// and product operand (a zero-width checkpoint in the grammar, which
// Grammar leaves out: it matches nothing), and the checker every stopEvery
// operands. Every repetition of the grammar but a run of semicolons goes
// through one of those, so between two looks there are at most stopEvery
// tokens or operands (TestCompileStopsWithinBoundedWork).

// ErrStopped is the error of a compile its stop function stopped.
var ErrStopped = errors.New("compiling stopped")

// stopEvery is how many units of work (tokens lexed, checkpoints parsed,
// operands checked) pass between two looks at the stop function.
const stopEvery = 64

// stopper is one compile's stop function and its count of work.
type stopper struct {
	stop    func() bool
	n       int
	stopped bool
	// after counts the units of work asked for once stopped: what a stop
	// costs (tests).
	after int
}

// step counts one unit of work and reports whether the compile must stop.
// A nil stopper never stops.
func (s *stopper) step() bool {
	if s == nil || s.stop == nil {
		return false
	}
	if s.stopped {
		s.after++
		return true
	}
	if s.n++; s.n%stopEvery == 0 && s.stop() {
		s.stopped = true
	}
	return s.stopped
}

// parsing finds the stopper of the parse a checkpoint is in: the parser
// hands a checkpoint nothing but the tokens, so the parse is known by the
// address of its first token, which the tokens' copies share.
var parsing sync.Map // *lexer.Token → *stopper

// checkpoint is a zero-width element of the grammar: it matches nothing,
// counts a unit of the parse's work and fails the parse once it must stop.
type checkpoint struct{}

// Parse implements participle.Parseable.
func (*checkpoint) Parse(lex *lexer.PeekingLexer) error {
	first := lex.Range(0, 1)
	if len(first) == 0 {
		return nil
	}
	if s, ok := parsing.Load(&first[0]); ok && s.(*stopper).step() {
		return ErrStopped
	}
	return nil
}
