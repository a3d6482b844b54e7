package engine

import (
	"strings"
	"testing"
)

// TestPlanSaysWhyNothingComes: a plan no probe can feed says so and why,
// naming the condition and the form of the names it compares; one that can
// produce tuples says nothing of the kind.
func TestPlanSaysWhyNothingComes(t *testing.T) {
	for _, tc := range []struct{ query, want string }{
		// docs/queries.md prints long import paths as …/: taken literally,
		// the condition matches no probe.
		{"SELECT time FROM calls WHERE function = '…/shop.(*Store).Find' AND duration > 1ms LIMIT 5",
			"calls: no probe matches function = '…/shop.(*Store).Find'; probes have function like 'example.com/shop.(*Store).Find' ('…' stands for a part left out in print: write the whole name, or LIKE with %)"},
		{"SELECT name FROM calls WHERE package LIKE '%/repository'",
			"calls: no probe matches package LIKE '%/repository'; probes have package like 'example.com/shop'"},
		{"SELECT name FROM calls WHERE duration > 5ms AND duration < 1ms",
			"calls: no call can pass what WHERE asks of duration, error and panicked together"},
		{"SELECT name FROM calls WHERE 1 = 2", "calls: 1 = 2 is never true"},
		{"SELECT name FROM calls WHERE name = 'Find' AND package = 'example.com/shop/util'",
			"calls: no probe passes WHERE's conditions on function, package and the other static columns together"},
		// A join needs both sides.
		{"SELECT a.name FROM calls AS a WINDOW JOIN SAMPLE(cpu, 1s) AS b WINDOW 1s WHERE a.name = 'Nope'",
			"a: no probe matches a.name = 'Nope'; probes have name like '"},
		// Through a derived stream.
		{"CREATE STREAM s AS (SELECT name FROM calls WHERE name = 'Nope'); SELECT count(*) FROM s",
			"calls: no probe matches name = 'Nope'"},
		{"SELECT name FROM calls WHERE name = 'Find'", ""},
		{"SELECT * FROM SAMPLE(cpu, 1s)", ""},
		{"SELECT a.name FROM calls AS a WINDOW JOIN SAMPLE(cpu, 1s) AS b WINDOW 1s WHERE a.name = 'Find'", ""},
	} {
		p := plan(t, tc.query, Limits{})
		if !strings.HasPrefix(p.Nothing, tc.want) || (tc.want == "") != (p.Nothing == "") {
			t.Errorf("%s:\n got  %q\n want %q", tc.query, p.Nothing, tc.want)
		}
		if tc.want != "" && !strings.Contains(p.Explain(), "produces nothing: "+p.Nothing+"\n") {
			t.Errorf("%s: the plan does not say it produces nothing:\n%s", tc.query, p.Explain())
		}
	}
}
