package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/runtime/internal/costcheck"
	"github.com/tigrisgo/tigris/runtime/query"
)

// many is a program of 1000 probes.
var many = func() catalog {
	var c catalog
	for i := 0; i < 1000; i++ {
		c = append(c, probe(uint32(i+1), fmt.Sprintf("example.com/p%d.F%d(int) error", i%10, i), 10, 1e6, 1e5))
	}
	return c
}()

// planChains grow a query's WHERE (or its streams) by n operators.
var planChains = map[string]func(n int) string{
	"dynamic product": func(n int) string { return "SELECT * FROM calls WHERE duration" + strings.Repeat("*1", n) + " > 1ms" },
	"static product":  func(n int) string { return "SELECT * FROM calls WHERE line" + strings.Repeat("*1", n) + " > 1" },
	"static sum": func(n int) string {
		return "SELECT * FROM calls WHERE line" + strings.Repeat("+1", n) + " > 1 AND name != 'F3'"
	},
	"conjuncts": func(n int) string {
		return "SELECT * FROM calls WHERE line > 1" + strings.Repeat(" AND duration > 1ms AND line < 900", n/30)
	},
	"or": func(n int) string {
		return "SELECT * FROM calls WHERE (line > 5 AND duration > 1ms" + strings.Repeat(" OR line = 3 AND error", n/20) + ")"
	},
	"pushed": func(n int) string {
		return "SELECT * FROM calls WHERE (line > 0 AND NOT error" + strings.Repeat(" AND duration > 1ms", n/20) + ") OR line < 0"
	},
	"derived joins": func(n int) string {
		text := "CREATE STREAM s0 AS (SELECT * FROM calls WHERE line > 3 AND duration" + strings.Repeat("*1", n) + " > 1ms)"
		for i := 1; i <= 7; i++ {
			text += fmt.Sprintf("; CREATE STREAM s%d AS (SELECT a.time AS time FROM s%d a WINDOW JOIN s%d b WINDOW 1s)", i, i-1, i-1)
		}
		return text + "; EXPLAIN SELECT count(*) FROM s7"
	},
}

// TestPlanChainsLinear: planning (and explaining) a query against 1000
// probes allocates in proportion to its size, whatever grows, and its
// explanation stays within a few times the query's text. A static product
// of 16,000 terms took 3.5 GB against 1000 probes, and a derived stream read
// through 7 levels of self-joins 15 GB and three minutes.
func TestPlanChainsLinear(t *testing.T) {
	for name, chain := range planChains {
		name, chain := name, chain
		t.Run(name, func(t *testing.T) {
			compiled := map[int]*query.Query{} // by text length: gen compiles, outside the measure
			gen := func(n int) []byte {
				text := chain(n)
				qs, err := query.Compile(text, nil)
				if err != nil {
					t.Fatal(err)
				}
				compiled[len(text)] = qs[len(qs)-1]
				return []byte(text)
			}
			explain := func(in []byte) {
				q := compiled[len(in)]
				p, err := New(q, many, Limits{})
				if err != nil {
					t.Fatal(err)
				}
				if e := p.Explain(); len(e) > 3*len(q.Text)+64<<10 {
					t.Errorf("%d bytes of plan for %d of query", len(e), len(q.Text))
				}
			}
			costcheck.Linear(t, gen, explain, 500, 8)
		})
	}
}

// TestUndecidedConditions: conditions on static columns too large to decide
// for every probe within MaxPlanWork choose no probes, and the plan says so;
// the smaller ones still do.
func TestUndecidedConditions(t *testing.T) {
	text := "SELECT * FROM calls WHERE name = 'F3' AND line" + strings.Repeat("*1", 5000) + " > 0"
	qs, err := query.Compile(text, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(qs[0], many, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Leaves[0].Probes); n != 1 || !strings.Contains(p.Explain(), "too large to decide for each of 1000 probes") {
		t.Fatalf("%d probes\n%s", n, p.Explain())
	}
}

// TestChainsEvaluateInALoop: a long arithmetic chain gives the value its
// recursion would, and evaluating it allocates nothing.
func TestChainsEvaluateInALoop(t *testing.T) {
	q := compile(t, "SELECT duration"+strings.Repeat(" + 2ns - 1ns", 3000)+" + (line - 1) * 1ns AS v FROM calls")
	tup := callAt(shop[1], 100, 0.000001, 0) // 1ns, line 2
	e := &env{}
	e.tup[0] = tup
	if v := eval(q.Items[0].Expr, e); v.T != query.Duration || v.I != 3002 {
		t.Fatalf("%v", v)
	}
	if a := testing.AllocsPerRun(10, func() { eval(q.Items[0].Expr, e) }); a != 0 {
		t.Errorf("%v allocations a tuple", a)
	}
}
