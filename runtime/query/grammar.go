package query

import (
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// The grammar, in the EBNF that docs/queries.md prints (a golden test keeps
// it in step with the parser, testdata/grammar.ebnf):
//
//	Script      = { ";" } Statement { ";" { ";" } [ Statement ] } .
//	Statement   = [ "EXPLAIN" ] ( Select | "CREATE" ( CreateStream | CreateTrigger ) ) .
//	CreateStream  = "STREAM" ident "AS" "(" Select ")" .
//	CreateTrigger = "TRIGGER" ident "FROM" From "WHEN" Expr "BEGIN" Action { ";" [ Action ] } "END" .
//	Select      = "SELECT" Item { "," Item } "FROM" From [ "WHERE" Expr ]
//	              [ "GROUP" "BY" Expr { "," Expr } ] [ Window ] [ "HAVING" Expr ] [ "LIMIT" int ] .
//	Item        = "*" | Expr [ [ "AS" ] ident ] .
//	From        = Source [ "WINDOW" "JOIN" Source "WINDOW" duration [ ident "FOLLOWED" "BY" ident ] ] .
//	Source      = ( "SAMPLE" "(" ident "," duration ")" | ident ) [ [ "AS" ] ident ] .
//	Window      = "WINDOW" duration [ "SLIDE" duration ] .
//	Action      = "FINE" string "FOR" duration
//	            | "SAMPLE" "(" ident "," duration ")" "FOR" duration
//	            | "SNAPSHOT" .
//	Expr        = And { "OR" And } .
//	And         = Not { "AND" Not } .
//	Not         = "NOT" Not | Compare .
//	Compare     = Sum [ CompareOp Sum | [ "NOT" ] "IN" "(" Expr { "," Expr } ")"
//	              | [ "NOT" ] "LIKE" string | "MATCHES" string ] .
//	Sum         = Product { ( "+" | "-" ) Product } .
//	Product     = Unary { ( "*" | "/" ) Unary } .
//	Unary       = "-" Unary | Primary .
//	Primary     = number | duration | percent | string | "TRUE" | "FALSE"
//	            | ident "(" [ "*" | Expr { "," Expr } ] ")" | ident [ "." ident ] | "(" Expr ")" .
//
// Keywords are case-insensitive and reserved; identifiers are case-sensitive.
// A duration is a Go duration (300ms, 1.5s, 2m, 1h) or "min"; a percent is a
// number with "%" (70% is 0.7); strings are single-quoted, '' is a quote.

// Script is a whole query text: statements separated by semicolons.
type Script struct {
	Pos        lexer.Position
	Statements []*Statement `parser:"';'* ( @@ ';'* )+"`
}

// Statement is one SELECT, CREATE STREAM or CREATE TRIGGER, optionally under
// EXPLAIN.
type Statement struct {
	Pos     lexer.Position
	Explain bool           `parser:"@'EXPLAIN'?"`
	Select  *Select        `parser:"( @@"`
	Stream  *CreateStream  `parser:"| 'CREATE' ( @@"`
	Trigger *CreateTrigger `parser:"           | @@ ) )"`
	Stop    checkpoint     `parser:"@@"`
}

// CreateStream names a derived stream: queries may read it like a built-in
// one. It acquires nothing until a query reads it.
type CreateStream struct {
	Pos    lexer.Position
	Name   string  `parser:"'STREAM' @Ident 'AS'"`
	Select *Select `parser:"'(' @@ ')'"`
}

// CreateTrigger runs Actions whenever a tuple of From satisfies When.
type CreateTrigger struct {
	Pos     lexer.Position
	Name    string    `parser:"'TRIGGER' @Ident"`
	From    *From     `parser:"'FROM' @@"`
	When    *Expr     `parser:"'WHEN' @@"`
	Actions []*Action `parser:"'BEGIN' @@ ( ';' @@? )* 'END'"`
}

// Action is what a trigger does when it fires; exactly one field is set.
type Action struct {
	Pos lexer.Position
	// Fine switches the probes the pointcut matches to fine for For.
	Fine *Text `parser:"(   'FINE' @@"`
	// Sample runs a runtime sampler for For; its readings are the trigger's
	// output.
	Sample *Sample `parser:"  | @@ )"`
	For    *Dur    `parser:"  'FOR' @Duration"`
	// Snapshot copies the recent fine records to a trace file of their own.
	Snapshot bool `parser:"| @'SNAPSHOT'"`
}

// Select is a continuous query.
type Select struct {
	Pos     lexer.Position
	Items   []*Item `parser:"'SELECT' @@ ( ',' @@ )*"`
	From    *From   `parser:"'FROM' @@"`
	Where   *Expr   `parser:"( 'WHERE' @@ )?"`
	GroupBy []*Expr `parser:"( 'GROUP' 'BY' @@ ( ',' @@ )* )?"`
	Window  *Window `parser:"@@?"`
	Having  *Expr   `parser:"( 'HAVING' @@ )?"`
	Limit   *int    `parser:"( 'LIMIT' @Int )?"`
}

// Item is one output column: "*" (every column of the sources) or an
// expression with an optional name.
type Item struct {
	Pos   lexer.Position
	Star  bool       `parser:"(  @'*'"`
	Expr  *Expr      `parser:" | @@"`
	Alias string     `parser:"    ( 'AS'? @Ident )? )"`
	Stop  checkpoint `parser:"@@"`
}

// From is one source, or two joined within a time window.
type From struct {
	Pos  lexer.Position
	Left *Source `parser:"@@"`
	Join *Join   `parser:"@@?"`
}

// Join pairs tuples of two sources whose times lie within Within of each
// other; with Followed, only pairs where First's tuple came first.
type Join struct {
	Pos      lexer.Position
	Right    *Source   `parser:"'WINDOW' 'JOIN' @@"`
	Within   Dur       `parser:"'WINDOW' @Duration"`
	Followed *Followed `parser:"@@?"`
}

// Followed is "a FOLLOWED BY b": a's tuple arrives no later than b's.
type Followed struct {
	Pos   lexer.Position
	First string `parser:"@Ident 'FOLLOWED' 'BY'"`
	Then  string `parser:"@Ident"`
}

// Source is a stream: a built-in or derived stream by name, or a sampled
// runtime stream, with an optional alias.
type Source struct {
	Pos    lexer.Position
	Sample *Sample `parser:"(  @@"`
	Name   string  `parser:" | @Ident )"`
	Alias  string  `parser:"( 'AS'? @Ident )?"`
}

// Sample reads a runtime stream (cpu, heap, goroutines, gc) every Every.
type Sample struct {
	Pos    lexer.Position
	Stream string `parser:"'SAMPLE' '(' @Ident ','"`
	Every  Dur    `parser:"@Duration ')'"`
}

// Window groups a query's aggregates into windows of Size that start every
// Slide (tumbling when Slide is 0).
type Window struct {
	Pos   lexer.Position
	Size  Dur  `parser:"'WINDOW' @Duration"`
	Slide *Dur `parser:"( 'SLIDE' @Duration )?"`
}

// Expr is a boolean or arithmetic expression: Ands joined by OR.
type Expr struct {
	Pos  lexer.Position
	Head *And   `parser:"@@"`
	Tail []*And `parser:"( 'OR' @@ )*"`
}

// And is Nots joined by AND.
type And struct {
	Pos  lexer.Position
	Head *Not   `parser:"@@"`
	Tail []*Not `parser:"( 'AND' @@ )*"`
}

// Not is a negation or a comparison.
type Not struct {
	Pos     lexer.Position
	Negated *Not     `parser:"  'NOT' @@"`
	Compare *Compare `parser:"| @@"`
}

// Compare is a Sum, optionally compared, tested for membership or matched.
type Compare struct {
	Pos   lexer.Position
	Left  *Sum   `parser:"@@"`
	Op    string `parser:"( @( '<=' | '>=' | '<>' | '!=' | '=' | '<' | '>' )"`
	Right *Sum   `parser:"  @@"`
	// NotIn, In: "x [NOT] IN (a, b, ...)".
	NotIn bool    `parser:"| @'NOT'? 'IN'"`
	In    []*Expr `parser:"  '(' @@ ( ',' @@ )* ')'"`
	// Like: "x [NOT] LIKE 'pattern'", % any run, _ one character.
	NotLike bool    `parser:"| @'NOT'? 'LIKE'"`
	Like    *string `parser:"  @String"`
	// Matches: "function MATCHES 'pointcut'".
	Matches *Text `parser:"| 'MATCHES' @@ )?"`
}

// Text is a string literal with its position, for errors inside it.
type Text struct {
	Pos   lexer.Position
	Value string `parser:"@String"`
}

// Sum is Products joined by + and -.
type Sum struct {
	Pos  lexer.Position
	Head *Product `parser:"@@"`
	Tail []*SumOp `parser:"@@*"`
}

// SumOp is one "+ Product" or "- Product".
type SumOp struct {
	Pos   lexer.Position
	Op    string   `parser:"@( '+' | '-' )"`
	Right *Product `parser:"@@"`
}

// Product is Unaries joined by * and /.
type Product struct {
	Pos  lexer.Position
	Head *Unary       `parser:"@@"`
	Tail []*ProductOp `parser:"@@*"`
	Stop checkpoint   `parser:"@@"`
}

// ProductOp is one "* Unary" or "/ Unary".
type ProductOp struct {
	Pos   lexer.Position
	Op    string     `parser:"@( '*' | '/' )"`
	Right *Unary     `parser:"@@"`
	Stop  checkpoint `parser:"@@"`
}

// Unary is a negation or a Primary.
type Unary struct {
	Pos     lexer.Position
	Negated *Unary   `parser:"  '-' @@"`
	Primary *Primary `parser:"| @@"`
}

// Primary is a literal, a function call, a column reference or a
// parenthesised expression; exactly one field is set.
type Primary struct {
	Pos      lexer.Position
	Duration *Dur     `parser:"  @Duration"`
	Percent  *Percent `parser:"| @Percent"`
	Number   *string  `parser:"| @( Float | Int )"`
	String   *string  `parser:"| @String"`
	True     bool     `parser:"| @'TRUE'"`
	False    bool     `parser:"| @'FALSE'"`
	Call     *Call    `parser:"| @@"`
	Ref      *Ref     `parser:"| @@"`
	Group    *Expr    `parser:"| '(' @@ ')'"`
}

// Call is an aggregate or scalar function call, e.g. count(*), p99(duration).
type Call struct {
	Pos  lexer.Position
	Name string  `parser:"@Ident '('"`
	Star bool    `parser:"( @'*'"`
	Args []*Expr `parser:"| @@ ( ',' @@ )* )? ')'"`
}

// Ref names a column, optionally qualified by its source: duration, c.duration.
type Ref struct {
	Pos    lexer.Position
	Source string `parser:"( @Ident '.' )?"`
	Column string `parser:"@Ident"`
}

// keywords are the reserved words, matched case-insensitively.
var keywords = []string{
	"SELECT", "FROM", "WHERE", "GROUP", "BY", "HAVING", "LIMIT", "WINDOW", "SLIDE",
	"JOIN", "FOLLOWED", "AS", "AND", "OR", "NOT", "IN", "LIKE", "MATCHES", "TRUE",
	"FALSE", "CREATE", "STREAM", "TRIGGER", "WHEN", "BEGIN", "END", "EXPLAIN",
	"SAMPLE", "FOR", "FINE", "SNAPSHOT",
}

// isKeyword reports whether w is reserved.
func isKeyword(w string) bool {
	for _, k := range keywords {
		if strings.EqualFold(k, w) {
			return true
		}
	}
	return false
}
