// Package pointcut is tigris's pointcut language: AspectJ-like expressions, shaped
// for Go, that select the functions to instrument, and the matcher that evaluates them
// against a [Signature].
//
// The same matcher runs at build time (the rewriter fills a Signature from go/types
// for every function declaration and call site) and at run time (the monitor rebuilds
// Signatures from probe metadata to switch probes by pattern), so it depends on
// nothing but the Signature value. docs/pointcuts.md is the user's reference; this
// comment is the contract for code.
//
// # Language
//
//	expr      = term { ("&&" | "||") term } ;  "!" binds tightest, then &&, then ||
//	term      = "!" term | "(" expr ")" | designator | predicate "(" ")" | name
//	execution(Sig)   the body of a function matching Sig runs
//	call(Sig)        a call to a function matching Sig
//	withincode(Sig)  the join point is in a function matching Sig
//	within(Pkg)      the join point is in a package matching Pkg; within(Pkg.Recv)
//	                 also requires a method of a receiver matching Recv
//	args(Types)      the (called) function's parameters match Types
//	predicates       exported() method() function() generic() variadic()
//	                 returns_error() test() pointer_receiver() literal() all() none()
//	name             a named pointcut of the Env
//
//	Sig   = [Result] Pkg "." [Recv "."] Name [ "[...]" ] [Lit] "(" Params ")"
//	Lit   = the rest of a function literal's Go name: ".func1", ".func2.1", "-range1.1"
//
// Examples:
//
//	execution(* net/http.(*Client).Do(..))
//	execution(* example.com/shop/...*(..))           any function under example.com/shop
//	execution(error example.com/shop/...(context.Context, ..))
//	execution(* example.com/shop/repo.(*Store).Find*(..))
//	execution(* example.com/x.(*Tree[...]).Insert(..)) || execution(* example.com/x.Map[...](..))
//	call(* database/sql.(*DB).*(..)) && within(example.com/shop/...)
//
// In names and path elements "*" matches any run of characters within one element;
// "..." (or "..") as a path element matches any number of elements, including none,
// and a lone "*" or "..." is any package; ".." in a list matches any number of
// types. After a package ending in "..." the "." before the name may be left out,
// and so may the name (then any name). A receiver "(*T)" selects the method set of
// *T (pointer and value receivers, as in a Go method expression), "T" only value
// receivers, "(*)" any receiver; no receiver pattern selects functions and methods
// alike. Brackets after a name or receiver require type parameters; their contents
// are not checked. Types are written as go/types writes them, with full import
// paths; a qualifier without "/" ("model.Owner") matches any package with that name.
// A result pattern "*", or none, matches any results; "T" exactly one result;
// "(T1, T2)" exactly those. A path whose last element has a dot is quoted:
// "gopkg.in/yaml.v3".Marshal.
//
// # Function literals
//
// A function literal's [Signature] has the Package, Recv and Name of the
// declared function it is written in (Name as Go prints it: "init.0" in the
// first func init, "init" in a package-level initializer) and the rest of its
// Go name in Lit (".func1"). A pattern selects it by that name, "F.func1",
// "(*T).M.func2.1", "init.0.func1": a receiver without parentheses before a
// name shaped like "func1" or "func*" is the function, the rest the literal
// part. In the literal part "*" also matches dots, so "F.func*" is every
// literal in F. A pattern without a literal part never matches a literal, a
// pattern with one never a declared function, and a literal's execution is
// selected only when the expression is true and would be false with every
// literal term (a pattern with a literal part, literal()) replaced by false:
// expressions that do not name literals select none.
//
// # Executions and calls
//
// [Pointcut.MatchExecution] evaluates an expression for a function declaration:
// execution(S) and withincode(S) test the function, within tests its package (and
// receiver), args its parameters, predicates its flags, and call(S) is false.
//
// [Pointcut.MatchCall] evaluates it for a call site: call(S) tests the callee,
// within and withincode test the caller, args and predicates test the callee, and
// execution(S) is false, as in AspectJ: a join point is either an execution or a
// call. A call is selected only if the expression is true and would be false with
// every call(...) term forced to false, so a call(...) term must be what selects it:
// within(x) alone wraps no call, and neither does !call(S). "execution(A) &&
// call(B)" can never match and is rejected; "call(B) && withincode(A)" is the way to
// select calls to B made in A.
//
// # Named pointcuts
//
// [NewEnv] compiles a list of named pointcuts that refer to each other by bare name,
// in any order; [Env.Parse] compiles an expression that refers to them. References
// are resolved at compile time by sharing the named pointcut's compiled node, so a
// Pointcut never looks a name up and compiling costs memory linear in the
// definitions. A match still walks the expansion (each use of a name counts its
// whole expression), which a chain of names doubles at every link: a pointcut
// above [MaxTerms] expanded terms is an error positioned at the term that crosses
// the bound. Names that are not identifiers or are reserved, duplicates, unknown
// names, cycles and oversized expansions are all reported, each as a
// [*DefinitionError] naming the pointcut; a cycle's cause is a [*CycleError]
// listing the loop. A name that fails only because one it uses failed is not
// reported again.
//
// # Errors
//
// Every problem in an expression is a participle.Error whose Position has Line and
// Column relative to the expression (1:1 is its first byte), so a caller that knows
// where the expression sits in a file can report file:line:col. Messages say what was
// expected or what is allowed. An expression is at most 16 KiB long, with at most 64
// brackets open at once and 64 prefix tokens ("!", "*", "[]", "chan") in a row, and
// at most MaxTerms terms with its names expanded.
//
// # Concurrency and cost
//
// A Pointcut and an Env are immutable and safe for concurrent use. Globs and package
// patterns are compiled once; MatchExecution, MatchCall and MayMatchPackage do not
// allocate, use no regular expressions and visit at most MaxTerms terms for a
// pointcut from Parse or Env.Parse. String writes the canonical text on first
// use; with names expanded it can be as long as MaxTerms terms. A nil *Pointcut matches nothing and a nil
// *Env has no names. Nothing in this package panics on any input.
package pointcut
