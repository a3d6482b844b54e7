// Package dsl implements TigrisDSL, the language of relevance filters from
// Mertz & Nunes, "Tigris: A DSL and framework for monitoring software systems
// at runtime" (JSS, 2021): its grammar, and the semantics tigris gives it,
// grouping each criterion's metric values into five partitions and combining
// them with set operations.
//
// The run-time analyzer links this package into user programs, so it imports
// only the standard library and participle. docs/dsl.md is the user-facing
// reference; this comment is the contract for callers.
//
// # Parsing
//
// [Parse] turns text such as
//
//	(more frequent ∪ most expensive) ∩ least changeable
//
// into a [*Filter]. A filter is built from filterdefs, an optional modifier
// (least, less, more, most) and a criterion ([Criteria]), combined with ∪
// (also "|", "or"), ∩ ("&", "and") and \ ("∖", "-", "minus") and parentheses.
// ∩ binds tighter than ∪ and \, which are equal and left-associative; words
// are case-insensitive. Errors implement participle.Error with the line and
// column. [Filter.String] is the canonical text, [Filter.Criteria] the criteria
// used. A *Filter is immutable and safe for concurrent use. The parser is built
// once, on first use, so a program that never parses a filter never builds it;
// [Grammar] prints it as EBNF.
//
// # Metrics and bindings
//
// A criterion is measured by a metric ([Metrics]): the analyzer's [Binding]
// maps criteria to metric names ([DefaultBinding] follows the paper's
// Listing 2). Each metric has a [Direction] per criterion: for mean-time a
// higher value is more expensive; for result-size-sd a higher value is less
// changeable (the paper's reading); for cyclomatic a higher value is less
// maintainable. [Binding.Validate] checks a binding against a filter before
// anything runs.
//
// # Grouping and evaluation
//
// [Group] splits one metric's values into the levels Least, Less, Plain, More
// and Most ([Level]): with a Lilliefors normality test (α = 0.05, at least 20
// values) it cuts at mean ± 0.674·sd and ± 1.150·sd, otherwise at the
// quartiles and the medians of the outer quarters, as in the paper's
// section 4.3. NaN and ±Inf are left out; equal values always share a level.
// [Evaluate] groups each criterion of a filter, applies the metric's
// direction and evaluates the filter over the [Candidates] with union,
// intersection and difference. A filterdef selects a partition range:
// "most"/"least"/no modifier select exactly Most/Least/Plain, while the
// comparatives are inclusive, "more" selecting More and Most and "less" Less
// and Least ([Level.Selects]). [Options] tune the test and the cuts; the zero
// value is the default. Group and Evaluate do not modify their inputs, never
// panic on any float input, and are safe for concurrent use.
package dsl
