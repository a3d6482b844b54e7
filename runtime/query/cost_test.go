package query

import (
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/runtime/internal/costcheck"
)

// chains are queries that grow by repeating one construct n times: every
// construct whose text, name or key is made from its operands'.
var chains = map[string]func(n int) string{
	"sum":     func(n int) string { return "SELECT 1" + strings.Repeat("+1", n) + " AS x FROM SAMPLE(cpu, 1s) LIMIT 1" },
	"unnamed": func(n int) string { return "SELECT 1" + strings.Repeat("+1", n) + " FROM SAMPLE(cpu, 1s)" },
	"product": func(n int) string { return "SELECT * FROM calls WHERE duration" + strings.Repeat("*1", n) + " > 1ms" },
	"mixed": func(n int) string {
		return "SELECT * FROM calls WHERE -(duration" + strings.Repeat(" - 1ms*2/1", n/4) + ") < 1ms"
	},
	"explain": func(n int) string { return "EXPLAIN SELECT 1" + strings.Repeat("-1", n) + " AS x FROM SAMPLE(cpu, 1s)" },
	"and":     func(n int) string { return "SELECT * FROM calls WHERE error" + strings.Repeat(" AND error", n/5) },
	"or": func(n int) string {
		return "SELECT * FROM calls WHERE (error" + strings.Repeat(" OR NOT error", n/6) + ") AND line > 1"
	},
	"in": func(n int) string {
		return "SELECT * FROM calls WHERE line IN (1" + strings.Repeat(strings.Repeat(",1", 100)+") OR line IN (1", n/200) + ")"
	},
	"aggregates": func(n int) string {
		return "SELECT count(*)" + strings.Repeat("+count(*)", n/9) + " FROM calls GROUP BY name"
	},
	"distinct aggregates": func(n int) string {
		var b strings.Builder
		b.WriteString("SELECT sum(line)")
		for i := 0; i < n/12; i++ {
			b.WriteString("+sum(line+")
			b.WriteString(strings.Repeat("1", 1+i%5))
			b.WriteString(")")
		}
		return b.String() + " FROM calls"
	},
	"grouped": func(n int) string {
		e := "line" + strings.Repeat("+1", n/4)
		return "SELECT " + e + ", count(*) FROM calls GROUP BY " + e
	},
	"having": func(n int) string {
		return "SELECT name FROM calls GROUP BY name HAVING count(*)" + strings.Repeat("*2", n/2) + " > 1"
	},
	"stream": func(n int) string {
		return "CREATE STREAM s AS (SELECT duration" + strings.Repeat("+1ms", n/4) + " AS d FROM calls); SELECT a.d FROM s a WINDOW JOIN s b WINDOW 1s"
	},
	"trigger": func(n int) string {
		return "CREATE TRIGGER t FROM calls WHEN duration" + strings.Repeat("+1ms", n/4) + " > 1s BEGIN SNAPSHOT END"
	},
}

// compileBound is what compiling a query may allocate: the parser's share
// is about 3.5 KB an input byte (participle branches at every operand). In
// a race-detector build the parser's reflection allocates some 15 times
// that, close to the widened allowance at 6 KiB a byte (3.16 GB against
// 3.156 GB once on a loaded machine): 8 KiB leaves room in both builds.
var compileBound = costcheck.Bound{
	Fixed:   costcheck.Cost{Bytes: 1 << 20, Allocs: 4 << 10},
	PerByte: costcheck.Cost{Bytes: 8 << 10, Allocs: 64},
}

// longest are the chains compiled at the longest a query may be.
var longest = map[string]bool{"sum": true, "product": true, "grouped": true, "stream": true}

// TestCompileChainsLinear: compiling a chain of n operators allocates in
// proportion to n, for every construct, and a chain as long as a query may
// be (MaxText) within compileBound. A chain of 32k additions used to take
// 3.9 GB: each node's text was built from its operands'.
func TestCompileChainsLinear(t *testing.T) {
	for name, chain := range chains {
		name, chain := name, chain
		t.Run(name, func(t *testing.T) {
			gen := func(n int) []byte { return []byte(chain(n)) }
			compile := func(in []byte) {
				if _, err := Compile(string(in), nil); err != nil {
					t.Fatal(err)
				}
			}
			costcheck.Linear(t, gen, compile, 500, 8)
			if !longest[name] {
				return
			}
			n := 1000
			for len(chain(2*n)) <= MaxText {
				n *= 2
			}
			for len(chain(n+n/8)) <= MaxText {
				n += n / 8
			}
			in := gen(n)
			if len(in) < MaxText*3/4 {
				t.Fatalf("the longest chain is %d bytes", len(in))
			}
			compileBound.Check(t, len(in), func() { compile(in) })
		})
	}
}

// TestTextIsOneString: the nodes' texts are slices of the statement's, and
// the canonical text is unchanged by how it is written.
func TestTextIsOneString(t *testing.T) {
	qs, err := Compile("SELECT -(duration + 1ms) * 2 / (3 - line) AS x, count(*) FROM calls WHERE NOT (error OR panicked AND line IN (1, 2)) AND name NOT LIKE 'a''b' GROUP BY duration + 1ms, line", nil)
	if err != nil {
		t.Fatal(err)
	}
	q := qs[0]
	const want = "SELECT (-(duration + 1ms) * 2) / (3 - line) AS x, count(*) FROM calls WHERE NOT (error OR panicked AND line IN (1, 2)) AND name NOT LIKE 'a''b' GROUP BY duration + 1ms, line"
	if q.Text != want {
		t.Fatalf("got  %s\nwant %s", q.Text, want)
	}
	var check func(n *Node)
	check = func(n *Node) {
		if !strings.Contains(q.Text, n.Text) || n.Text == "" {
			t.Errorf("node text %q is not in the statement's", n.Text)
		}
		for _, k := range n.Kids {
			check(k)
		}
	}
	check(q.Where)
	for _, it := range q.Items {
		check(it.Expr)
	}
	if got := q.Where.Kids[0].Text; got != "NOT (error OR panicked AND line IN (1, 2))" {
		t.Errorf("NOT's text %q", got)
	}
}

// TestLongErrorsAreBrief: an error about a long expression or token quotes
// its start and end, not all of it.
func TestLongErrorsAreBrief(t *testing.T) {
	for _, text := range []string{
		"SELECT * FROM calls WHERE line" + strings.Repeat(" + 1", 5000) + " > 1s",
		"SELECT * FROM calls WHERE error " + strings.Repeat("x", 40000),
	} {
		_, err := Compile(text, nil)
		if err == nil {
			t.Fatalf("%.100s compiled", text)
		}
		if len(err.Error()) > 600 || !strings.Contains(err.Error(), "…") {
			t.Fatalf("%d bytes: %.300v", len(err.Error()), err)
		}
	}
}
