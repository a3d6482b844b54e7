package query

import (
	"errors"
	"strings"
	"testing"
)

// TestTraceIDLiterals: the ids a query compares trace_id with are made
// lower case where the query is compiled, which is in the program for a
// live query (tigris ctl query), so an id copied from a backend that shows
// it in upper case matches; one that is no trace id is an error at its
// literal, not a comparison that matches nothing.
func TestTraceIDLiterals(t *testing.T) {
	const upper = "4BF92F3577B34DA6A3CE929D0E0E4736"
	const lower = "4bf92f3577b34da6a3ce929d0e0e4736"
	for _, text := range []string{
		`SELECT name FROM calls WHERE trace_id = '` + upper + `'`,
		`SELECT name FROM calls WHERE '` + upper + `' = trace_id`,
		`SELECT name FROM calls WHERE trace_id IN ('` + upper + `', '')`,
		`CREATE STREAM j AS (SELECT trace_id AS t FROM calls); SELECT t FROM j WHERE t != '` + upper + `'`,
	} {
		qs, err := Compile(text, nil)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		q := qs[len(qs)-1]
		var lits []string
		q.eachNode(func(n *Node) {
			if n.Kind == NLit && n.Val.T == String && n.Val.S != "" {
				lits = append(lits, n.Val.S)
			}
		})
		if len(lits) != 1 || lits[0] != lower {
			t.Errorf("%s: literals %q, want [%q]", text, lits, lower)
		}
		if !q.ReadsTraceID() {
			t.Errorf("%s: ReadsTraceID false", text)
		}
	}
	qs, err := Compile(`SELECT name FROM calls WHERE trace_id LIKE '4BF9%'`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := qs[0].Where.Pattern; p != "4bf9%" {
		t.Errorf("LIKE pattern on trace_id %q, want lower case", p)
	}
	// A string column other than trace_id keeps its case.
	qs, err = Compile(`SELECT name FROM calls WHERE name = 'ABC'`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if qs[0].Where.Kids[1].Val.S != "ABC" || qs[0].ReadsTraceID() {
		t.Errorf("name = 'ABC' became %q (reads trace_id %v)", qs[0].Where.Kids[1].Val.S, qs[0].ReadsTraceID())
	}
	for _, bad := range []string{"4bf92f35", strings.Repeat("0", 32), strings.Repeat("g", 32)} {
		text := "SELECT name\nFROM calls WHERE trace_id = '" + bad + "'"
		_, err := Compile(text, nil)
		var qe *Error
		if !errors.As(err, &qe) || qe.Line != 2 || qe.Col != 29 || !strings.Contains(qe.Msg, "not a W3C trace id") {
			t.Errorf("trace_id = '%s': error %v, want one at 2:29 saying it is not a W3C trace id", bad, err)
		}
	}
}
