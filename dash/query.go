package dash

import (
	"context"
)

// The query box: the hook for tigris's query language (issue 24), which is
// built apart from the dashboard. The dashboard depends on nothing of it:
// the command that starts the server passes a QueryRunner when the engine
// exists, and the page shows the box only then. Posting a query is a change
// (it may switch probes on), so it gets every protection a mode switch gets
// (same origin, the page's form token).

// QueryRunner runs one query against the page's source and streams its
// results. It is called on the request's goroutine; ctx ends when the page
// stops reading (the tab closed, a new query).
type QueryRunner interface {
	// RunQuery runs query until it ends or ctx does, calling rows with each
	// result as one line of text (no newline; JSON lines suit the page). It
	// returns rows' first error, or the query's: a syntax error, a refusal,
	// which the page shows after the rows sent.
	RunQuery(ctx context.Context, query string, rows func(line []byte) error) error
}

// QueryFunc adapts a function to QueryRunner.
type QueryFunc func(ctx context.Context, query string, rows func(line []byte) error) error

// RunQuery implements QueryRunner.
func (f QueryFunc) RunQuery(ctx context.Context, query string, rows func(line []byte) error) error {
	return f(ctx, query, rows)
}
