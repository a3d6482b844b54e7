package live

import (
	"context"
	"sync"

	"github.com/tigrisgo/tigris/runtime/query"
)

// Result is one output row.
type Result struct {
	Seq    uint64
	Schema int
	Time   int64
	Vals   []query.Value
	// Note, when set, is not a row but what the query left out
	// (dropped.go).
	Note *Dropped
}

// results keeps a query's most recent rows for its readers, in a ring: a
// reader that falls behind by more than its size is told how many rows it
// missed, and the program never waits for a reader.
type results struct {
	mu      sync.Mutex
	schemas []query.Schema
	ring    []Result
	next    uint64 // the Seq of the next row
	ended   bool
	reason  string
	wake    chan struct{} // closed and replaced when rows arrive or the query ends
}

func newResults(size int, main query.Schema) *results {
	return &results{schemas: []query.Schema{main}, ring: make([]Result, size), wake: make(chan struct{})}
}

// schema adds a schema and returns its index; adding one of the same name
// returns the existing index.
func (r *results) schema(s query.Schema) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, have := range r.schemas {
		if have.Name == s.Name {
			return i
		}
	}
	r.schemas = append(r.schemas, s)
	return len(r.schemas) - 1
}

func (r *results) add(schema int, t int64, vals []query.Value) {
	r.put(Result{Schema: schema, Time: t, Vals: vals})
}

// note adds what the query left out, among its rows.
func (r *results) note(t int64, d *Dropped) { r.put(Result{Time: t, Note: d}) }

func (r *results) put(res Result) {
	r.mu.Lock()
	res.Seq = r.next
	r.ring[r.next%uint64(len(r.ring))] = res
	r.next++
	w := r.wake
	r.wake = make(chan struct{})
	r.mu.Unlock()
	close(w)
}

func (r *results) end(reason string) {
	r.mu.Lock()
	if r.ended {
		r.mu.Unlock()
		return
	}
	r.ended, r.reason = true, reason
	w := r.wake
	r.wake = make(chan struct{})
	r.mu.Unlock()
	close(w)
}

// read returns the rows from Seq from on (at most max), how many before them
// were already overwritten, the Seq to read from next, and whether the
// query ended (and why) with no row left after these.
func (r *results) read(from uint64, max int) (rows []Result, skipped, next uint64, ended bool, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if oldest := r.oldest(); from < oldest {
		skipped, from = oldest-from, oldest
	}
	for s := from; s < r.next && len(rows) < max; s++ {
		rows = append(rows, r.ring[s%uint64(len(r.ring))])
	}
	next = from + uint64(len(rows))
	return rows, skipped, next, r.ended && next == r.next, r.reason
}

func (r *results) oldest() uint64 {
	if r.next > uint64(len(r.ring)) {
		return r.next - uint64(len(r.ring))
	}
	return 0
}

// wait blocks until there is a row from Seq from on, the query ended, or ctx
// is done.
func (r *results) wait(ctx context.Context, from uint64) {
	r.mu.Lock()
	if from < r.next || r.ended {
		r.mu.Unlock()
		return
	}
	w := r.wake
	r.mu.Unlock()
	select {
	case <-w:
	case <-ctx.Done():
	}
}

// Schemas returns the schemas so far.
func (r *results) Schemas() []query.Schema {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]query.Schema(nil), r.schemas...)
}
