package pointcut

import (
	"sync"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// This file holds the concrete syntax: the lexer, one struct per grammar rule and the
// parser built from them. compile.go turns the parse tree into matchers. The EBNF in
// the comments is the grammar as a reader should see it; testdata/grammar.ebnf is what
// participle generates from the struct tags (see TestGrammarGolden).

// lex splits an expression into tokens. Rules are tried in order.
//
// An Ident may contain "*" after its first character, so that a glob such as "Find*"
// or "Get*By*" is one token and a glob never spans white space. A glob that starts
// with "*" ("*Handler") is two tokens, captured together into a []lexer.Token field.
//
// A Path token is an import path pattern with at least one "/": every element before
// the last "/" may contain dots ("example.com"), the last element may not, so the "."
// that follows ends the package ("net/http.Get"). The last element may be "..." or
// "..", and then a directly following name needs no "." ("example.com/shop/...Find").
// A path whose last element contains a dot ("gopkg.in/yaml.v3") must be quoted.
//
// The Go type keywords are Keyword tokens, not Ident: otherwise an invalid
// "map[map[...]]" would be tried again as a generic type named map at every level,
// which takes exponential time.
//
// A StarSpace token is a "*" followed by white space: it is always the any-type
// wildcard, never a pointer or part of a glob, so "[]* example.com/x.F(..)" reads as a
// result of type "[]*" and a function. Grammar rules that take "*" as a wildcard also
// take StarSpace; "'*'" alone matches only the bare star.
// Built on first use: compiling it at init would cost every instrumented
// program start-up time, and most programs never parse a pattern at run time.
var lex = sync.OnceValue(func() *lexer.StatefulDefinition {
	return lexer.MustSimple([]lexer.SimpleRule{
		{Name: "Whitespace", Pattern: `[ \t\r\n]+`},
		{Name: "String", Pattern: `"(?:[^"\\\n]|\\.)*"`},
		{Name: "Path", Pattern: `(?:\*|[\pL\pN_~+.-][\pL\pN_~+.*-]*)/(?:[\pL\pN_~+.*-]+/)*(?:\.\.\.|\.\.|[\pL\pN_~+*-]+)`},
		{Name: "StarSpace", Pattern: `\*[ \t\r\n]+`},
		{Name: "Range", Pattern: `-range[0-9*]*`},
		{Name: "Punct", Pattern: `\.\.\.|\.\.|&&|\|\||<-|[!(),.\[\]{}*]`},
		{Name: "Int", Pattern: `[0-9]+`},
		{Name: "Keyword", Pattern: `(?:map|chan|func|interface|struct)\b`},
		{Name: "Ident", Pattern: `[\pL_][\pL\pN_]*(?:\*+[\pL\pN_]*)*`},
	})
})

// parser is the pointcut expression parser. Lookahead is unbounded: an optional
// result pattern and an optional receiver can only be told apart from what follows
// them, and expressions are short.
var parser = sync.OnceValue(func() *participle.Parser[orExpr] {
	return participle.MustBuild[orExpr](
		participle.Lexer(lex()),
		participle.Elide("Whitespace"),
		participle.UseLookahead(participle.MaxLookahead),
	)
})

// orExpr = andExpr { "||" andExpr } .
type orExpr struct {
	Pos   lexer.Position
	Terms []*andExpr `parser:"@@ ( '||' @@ )*"`
}

// andExpr = unaryExpr { "&&" unaryExpr } .
type andExpr struct {
	Pos   lexer.Position
	Terms []*unaryExpr `parser:"@@ ( '&&' @@ )*"`
}

// unaryExpr = "!" unaryExpr | primary .
type unaryExpr struct {
	Pos     lexer.Position
	Not     *unaryExpr `parser:"  '!' @@"`
	Primary *primary   `parser:"| @@"`
}

// primary = "(" orExpr ")"
//
//	| "execution" "(" sigPattern ")"
//	| "call" "(" sigPattern ")"
//	| "withincode" "(" sigPattern ")"
//	| "within" "(" scopePattern ")"
//	| "args" "(" [ paramList ] ")"
//	| Ident "(" ")"       (a predicate)
//	| Ident .             (a named pointcut)
type primary struct {
	Pos       lexer.Position
	Group     *orExpr       `parser:"  '(' @@ ')'"`
	Execution *sigPattern   `parser:"| 'execution' '(' @@ ')'"`
	Call      *sigPattern   `parser:"| 'call' '(' @@ ')'"`
	Code      *sigPattern   `parser:"| 'withincode' '(' @@ ')'"`
	Within    *scopePattern `parser:"| 'within' '(' @@ ')'"`
	Args      *argsPattern  `parser:"| 'args' '(' @@ ')'"`
	Predicate string        `parser:"| @Ident '(' ')'"`
	Ref       string        `parser:"| @Ident"`
}

// sigPattern = [ resultPattern ] funcPattern .
type sigPattern struct {
	Pos    lexer.Position
	Result *resultPattern `parser:"@@?"`
	Func   *funcPattern   `parser:"@@"`
}

// resultPattern = ( typeTuple | typePattern | "*" ) &funcStart .
//
// funcStart = Path | String | Ident | "*" | "..." | ".." .
//
// The lookahead lets "* strings.Index(..)" read as any result of strings.Index and
// "*model.Owner example.com/x.F(..)" as a pointer result; "*" is tried last so that a
// pointer type wins when both readings parse.
type resultPattern struct {
	Pos   lexer.Position
	Tuple *typeTuple   `parser:"( ( @@"`
	Type  *typePattern `parser:"  | @@ ) (?= ( Path | String | Ident | '*' | '...' | '..' ) )"`
	Any   bool         `parser:"| @( '*' | StarSpace ) (?= ( Path | String | Ident | '*' | '...' | '..' ) ) )"`
}

// funcPattern = pkgPattern [ "." ] [ recvPattern "." ] [ namePattern | Int ] [ litPattern ] "(" [ paramList ] ")" .
//
// The "." after the package and the name may only be left out after a package that
// ends in "..."; compile checks that. The Int is the number of a func init
// ("init.0"), and a receiver without parentheses followed by a name that
// starts with "func" and a number or "*" ("F.func1", "F.func*") is a function
// and its literal: compile sorts that out.
type funcPattern struct {
	Pos    lexer.Position
	Pkg    *pkgPattern  `parser:"@@"`
	Dot    bool         `parser:"@'.'?"`
	Recv   *recvPattern `parser:"( @@ '.' )?"`
	Name   *namePattern `parser:"( @@"`
	Index  string       `parser:"  | @Int )?"`
	Lit    *litPattern  `parser:"@@?"`
	Params *paramList   `parser:"'(' @@? ')'"`
}

// litPattern = { Range } { "." litElem } .     (at least one)
//
// litElem = Int | "*" [ Ident ] | Ident | "func" "*" [ Ident ] .
//
// The rest of a function literal's Go name after its function's: ".func1",
// ".func2.1", "-range1.1".
type litPattern struct {
	Pos   lexer.Position
	Elems []*litElem `parser:"@@+"`
}

type litElem struct {
	Pos  lexer.Position
	Toks []lexer.Token `parser:"@( Range | '.' ( Int | '*' Ident? | Ident | StarSpace | 'func' '*' Ident? ) )"`
}

// scopePattern = pkgPattern [ "." recvPattern ] .
type scopePattern struct {
	Pos  lexer.Position
	Pkg  *pkgPattern  `parser:"@@"`
	Recv *recvPattern `parser:"( '.' @@ )?"`
}

// argsPattern = [ paramList ] .
type argsPattern struct {
	Pos    lexer.Position
	Params *paramList `parser:"@@?"`
}

// pkgPattern = Path | String | "..." | ".." | "*" [ Ident ] | Ident | StarSpace .
type pkgPattern struct {
	Pos    lexer.Position
	Path   string        `parser:"  @Path"`
	Quoted string        `parser:"| @String"`
	Tree   string        `parser:"| @( '...' | '..' )"`
	Parts  []lexer.Token `parser:"| @( '*' Ident? | Ident | StarSpace )"`
}

// recvPattern = "(" [ "*" ] [ namePattern ] ")" | namePattern .
type recvPattern struct {
	Pos     lexer.Position
	Paren   bool         `parser:"( @'('"`
	Pointer bool         `parser:"  @( '*' | StarSpace )?"`
	InParen *namePattern `parser:"  @@? ')'"`
	Bare    *namePattern `parser:"| @@ )"`
}

// namePattern = ( "*" [ Ident ] | Ident | StarSpace | "func" "*" [ Ident ] ) [ typeParams ] .
type namePattern struct {
	Pos        lexer.Position
	Parts      []lexer.Token `parser:"@( '*' Ident? | Ident | StarSpace | 'func' '*' Ident? )"`
	TypeParams *typeParams   `parser:"@@?"`
}

// typeParams = "[" typeParam { "," typeParam } "]" .
//
// typeParam = Ident | "*" | "..." | ".." .
type typeParams struct {
	Pos   lexer.Position
	Names []string `parser:"'[' @( Ident | '*' | StarSpace | '...' | '..' ) ( ',' @( Ident | '*' | StarSpace | '...' | '..' ) )* ']'"`
}

// paramList = param { "," param } .
type paramList struct {
	Pos   lexer.Position
	Items []*param `parser:"@@ ( ',' @@ )*"`
}

// param = "..." typePattern | "..." | ".." | typePattern .
type param struct {
	Pos      lexer.Position
	Variadic *typePattern `parser:"  '...' @@"`
	Many     string       `parser:"| @( '...' | '..' )"`
	Type     *typePattern `parser:"| @@"`
}

// typeTuple = "(" [ paramList ] ")" .
type typeTuple struct {
	Pos    lexer.Position
	Params *paramList `parser:"'(' @@? ')'"`
}

// typePattern = "*" typePattern
//
//	| "[" "]" typePattern
//	| arrayType
//	| mapType
//	| chanType
//	| funcType
//	| ( "interface" | "struct" ) "{" "}"
//	| namedType
//	| "*" .
type typePattern struct {
	Pos     lexer.Position
	Pointer *typePattern `parser:"  '*' @@"`
	Slice   *typePattern `parser:"| '[' ']' @@"`
	Array   *arrayType   `parser:"| @@"`
	Map     *mapType     `parser:"| @@"`
	Chan    *chanType    `parser:"| @@"`
	Func    *funcType    `parser:"| @@"`
	Empty   string       `parser:"| @( 'interface' | 'struct' ) '{' '}'"`
	Named   *namedType   `parser:"| @@"`
	Any     bool         `parser:"| @( '*' | StarSpace )"`
}

// arrayType = "[" ( Int | "*" ) "]" typePattern .
type arrayType struct {
	Pos  lexer.Position
	Len  string       `parser:"'[' @( Int | '*' | StarSpace ) ']'"`
	Elem *typePattern `parser:"@@"`
}

// mapType = "map" "[" typePattern "]" typePattern .
type mapType struct {
	Pos  lexer.Position
	Key  *typePattern `parser:"'map' '[' @@ ']'"`
	Elem *typePattern `parser:"@@"`
}

// chanType = ( "<-" "chan" | "chan" [ "<-" ] ) typePattern .
type chanType struct {
	Pos  lexer.Position
	Recv bool         `parser:"(  @'<-' 'chan'"`
	Send bool         `parser:"| 'chan' @'<-'? )"`
	Elem *typePattern `parser:"@@"`
}

// funcType = "func" typeTuple [ typeTuple | typePattern ] .
type funcType struct {
	Pos     lexer.Position
	Params  *typeTuple   `parser:"'func' @@"`
	Results *typeTuple   `parser:"(  @@"`
	Result  *typePattern `parser:" | @@ )?"`
}

// namedType = ( pkgPattern "." ( "*" [ Ident ] | Ident | StarSpace ) | Ident ) [ "[" paramList "]" ] .
//
// A qualified name may use globs; an unqualified one is a predeclared type or a type
// parameter and is matched exactly.
type namedType struct {
	Pos  lexer.Position
	Pkg  *pkgPattern   `parser:"(  @@ '.'"`
	Name []lexer.Token `parser:"   @( '*' Ident? | Ident | StarSpace )"`
	Word string        `parser:"| @Ident )"`
	Args *paramList    `parser:"( '[' @@ ']' )?"`
}
