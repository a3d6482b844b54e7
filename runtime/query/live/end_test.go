package live

import (
	"testing"
	"time"
)

// TestEveryEndSaysWhyAndWhen: whatever ends a query (a cancel, its client
// with its reason, its LIMIT), the stream's end line says why, and when, as
// an RFC 3339 time no earlier than the query's start.
func TestEveryEndSaysWhyAndWhen(t *testing.T) {
	setup(t)
	reg := NewRegistry(fastOptions())
	for _, c := range []struct {
		text, want string
		end        func(q *Query)
	}{
		{"SELECT name FROM calls WHERE name = 'Hash'", "cancelled", (*Query).Cancel},
		{"SELECT name FROM calls WHERE name = 'Hash'", "ended after 1s (--for)", func(q *Query) { q.End("ended after 1s (--for)") }},
		{"SELECT name FROM calls WHERE name = 'Hash'", "cancelled", func(q *Query) { q.End("") }},
		{"SELECT name FROM calls WHERE name = 'Hash' LIMIT 1", "LIMIT 1 reached", func(*Query) { call(&probes[2], 0, nil) }},
	} {
		p, err := reg.Post(c.text, false)
		if err != nil {
			t.Fatal(err)
		}
		q := p[0].Query
		c.end(q)
		awaitEnd(t, q)
		lines := read(t, q)
		last := lines[len(lines)-1]
		if last["end"] != c.want {
			t.Errorf("%s: end %v, want %q", c.text, last["end"], c.want)
		}
		s, _ := last["ended"].(string)
		at, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || at.Before(q.Started.Add(-time.Millisecond)) {
			t.Errorf("%s: ended %q (%v), started %v", c.text, s, err, q.Started)
		}
		if in := q.Info(); in.Reason != c.want || in.Ended == nil || !in.Ended.Equal(at) {
			t.Errorf("%s: listed reason %q, ended %v; want %q, %v", c.text, in.Reason, in.Ended, c.want, at)
		}
	}
}
