package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/runtime/query"
)

// catalog is a fixed set of probes for tests.
type catalog []*Probe

func (c catalog) Probes() []*Probe { return c }
func (c catalog) Costs() Costs {
	return Costs{CoarseNs: 20, FineNs: 30, TupleNs: 200, SampleNs: 5000}
}

func probe(id uint32, sig string, rate, mean, sd float64) *Probe {
	i := paramsStart(sig)
	head := sig[:i]
	dot := strings.LastIndexByte(head, '.')
	pkg, name := head[:dot], head[dot+1:]
	recv := ""
	if j := strings.Index(head, ".(*"); j >= 0 {
		pkg = head[:j]
		recv = head[j+3 : strings.IndexByte(head, ')')]
	}
	return &Probe{ID: id, Function: Symbol(sig), Package: pkg, Receiver: recv, Name: name, Signature: sig,
		File: "f.go", Line: int(id), Sig: SignatureOf(sig, pkg, recv, name, "f.go", int(id)), Mode: "coarse",
		Rate: rate, MeanNs: mean, SDNs: sd}
}

var shop = catalog{
	probe(1, "example.com/shop.(*Store).Find(int) (Owner, error)", 1000, 2e6, 1e6),
	probe(2, "example.com/shop.(*Store).Save(Owner) error", 100, 5e6, 2e6),
	probe(3, "example.com/shop.Handler(http.ResponseWriter, *http.Request)", 50, 1e7, 5e6),
	probe(4, "example.com/shop/util.Hash([]byte) uint64", 1e5, 300, 50),
}

func compile(t *testing.T, text string) *query.Query {
	t.Helper()
	qs, err := query.Compile(text, nil)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return qs[len(qs)-1]
}

func plan(t *testing.T, text string, lim Limits) *Plan {
	t.Helper()
	p, err := New(compile(t, text), shop, lim)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAcquisitionAndPushdown(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  string // probe id:mode:min:max:require:forbid, one per acquired probe
	}{
		{`SELECT * FROM calls WHERE function = 'example.com/shop.(*Store).Find' AND duration > 5ms`,
			"1:coarse:5000001:0:0:0"},
		{`SELECT count(*) FROM calls WHERE package = 'example.com/shop' AND error`,
			"1:coarse:0:0:1:0 2:coarse:0:0:1:0 3:coarse:0:0:1:0"},
		{`SELECT trace FROM calls WHERE function MATCHES 'execution(* example.com/shop.(*Store).*(..))' AND NOT panicked AND duration <= 1s`,
			"1:fine:0:1000000000:0:2 2:fine:0:1000000000:0:2"},
		// OR with a static side: decided per probe.
		{`SELECT * FROM calls WHERE name = 'Hash' OR duration > 1s`,
			"1:coarse:1000000001:0:0:0 2:coarse:1000000001:0:0:0 3:coarse:1000000001:0:0:0 4:coarse:0:0:0:0"},
		{`SELECT * FROM calls WHERE function LIKE '%Store%' AND receiver != 'Store'`, ""},
		{`SELECT * FROM calls WHERE duration > 2s AND duration < 1s`, ""},
		{`SELECT * FROM calls WHERE receiver = 'Store' AND duration * 2 > 1s`, "1:coarse:0:0:0:0 2:coarse:0:0:0:0"},
	} {
		p := plan(t, tc.query, Limits{})
		var got []string
		for _, n := range p.Leaves[0].Probes {
			got = append(got, fmt.Sprintf("%d:%s:%d:%d:%d:%d", n.Probe.ID, n.mode(), n.MinNs, n.MaxNs, n.Require, n.Forbid))
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%s\n got  %s\n want %s\n%s", tc.query, g, tc.want, p.Explain())
		}
	}
}

func TestLimitsRefuseWithThePlan(t *testing.T) {
	p := plan(t, `SELECT * FROM calls`, Limits{MaxProbes: 3})
	if !strings.Contains(p.Refused, "4 probes; the most is 3") || !strings.Contains(p.Explain(), "refused:") {
		t.Fatalf("refused %q\n%s", p.Refused, p.Explain())
	}
	// Hash runs 100k times a second: coarse-on would be cheap, but every
	// call passing costs 200 ns: 2 % of a core.
	p = plan(t, `SELECT * FROM calls WHERE name = 'Hash'`, Limits{Budget: 0.01})
	if !strings.Contains(p.Refused, "over the budget") {
		t.Fatalf("budget not applied: %q\n%s", p.Refused, p.Explain())
	}
	p = plan(t, `SELECT * FROM calls WHERE name = 'Hash' AND duration > 1ms`, Limits{Budget: 0.01})
	if p.Refused != "" {
		t.Fatalf("a pushed-down bound that almost nothing passes was refused: %s\n%s", p.Refused, p.Explain())
	}
}

func ms(d float64) int64 { return int64(d * float64(time.Millisecond)) }

// at is a base time on a window boundary.
var at = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC).UnixNano()

func callAt(pr *Probe, endMs, durMs float64, flags CallFlags) *Tuple {
	end := at + ms(endMs)
	return &Tuple{Time: end, Call: Call{Probe: pr, Start: end - ms(durMs), End: end, Flags: flags, GID: 7}}
}

func run(t *testing.T, text string, push func(r *Runner)) []string {
	t.Helper()
	p := plan(t, text, Limits{})
	var rows []string
	r := NewRunner(p, func(row Row) {
		var cells []string
		for _, v := range row.Vals {
			cells = append(cells, v.String())
		}
		rows = append(rows, strings.Join(cells, " "))
	})
	push(r)
	r.Finish(at + ms(1e6))
	return rows
}

func TestWindowsAndAggregates(t *testing.T) {
	rows := run(t, `SELECT function, count(*), avg(duration), max(duration), p50(duration) FROM calls
		WHERE receiver = 'Store' GROUP BY function WINDOW 1s`, func(r *Runner) {
		for i, c := range []*Tuple{
			callAt(shop[0], 100, 2, 0), callAt(shop[0], 200, 4, 0), callAt(shop[1], 300, 10, CallError),
			callAt(shop[0], 1100, 6, 0), callAt(shop[3], 1200, 1, 0),
		} {
			r.Push(0, c)
			if i == 2 {
				r.Advance(at + ms(1000)) // the first window is complete
			}
		}
	})
	want := []string{
		"2026-11-25T12:00:00.000Z 2026-11-25T12:00:01.000Z example.com/shop.(*Store).Find 2 3ms 4ms 2ms",
		"2026-11-25T12:00:00.000Z 2026-11-25T12:00:01.000Z example.com/shop.(*Store).Save 1 10ms 10ms 10ms",
		"2026-11-25T12:00:01.000Z 2026-11-25T12:00:02.000Z example.com/shop.(*Store).Find 1 6ms 6ms 6ms",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
}

func TestSlidingWindowHavingAndLate(t *testing.T) {
	p := plan(t, `SELECT count(*) AS n FROM calls GROUP BY name WINDOW 2s SLIDE 1s HAVING count(*) >= 2`, Limits{})
	var rows []string
	r := NewRunner(p, func(row Row) { rows = append(rows, row.Vals[2].String()) })
	r.Push(0, callAt(shop[0], 500, 1, 0))
	r.Push(0, callAt(shop[0], 1500, 1, 0))
	r.Advance(at + ms(2000))
	r.Push(0, callAt(shop[0], 900, 1, 0)) // its windows [-1s,1s) and [0,2s) are out
	r.Finish(at)
	// [-1s,1s): 1 (HAVING drops it); [0s,2s): 2; [1s,3s): 1 (dropped).
	if strings.Join(rows, ",") != "2" || r.Stats().Late != 2 {
		t.Fatalf("rows %v, late %d; want [2] and 2 late", rows, r.Stats().Late)
	}
}

func TestJoinFollowedBy(t *testing.T) {
	q := `SELECT a.name, b.name FROM calls a WINDOW JOIN calls b WINDOW 1s a FOLLOWED BY b WHERE a.name = 'Find' AND b.name = 'Save'`
	rows := run(t, q, func(r *Runner) {
		r.Push(0, callAt(shop[1], 0, 1, 0)) // Save before any Find: no pair
		r.Push(1, callAt(shop[1], 0, 1, 0))
		r.Push(0, callAt(shop[0], 100, 1, 0)) // Find
		r.Push(1, callAt(shop[0], 100, 1, 0))
		r.Push(0, callAt(shop[1], 600, 1, 0)) // Save 0.5 s after Find: a pair
		r.Push(1, callAt(shop[1], 600, 1, 0))
		r.Push(0, callAt(shop[1], 1200, 1, 0)) // 1.1 s after: too late
		r.Push(1, callAt(shop[1], 1200, 1, 0))
	})
	if strings.Join(rows, "|") != "Find Save" {
		t.Fatalf("rows %q, want one pair", rows)
	}
}

func TestDerivedStreamAndLimit(t *testing.T) {
	qs, err := query.Compile(`CREATE STREAM slow AS (SELECT name, duration FROM calls WHERE duration > 5ms);
		SELECT name, duration FROM slow WHERE name != 'Save' LIMIT 2`, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(qs[1], shop, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Leaves) != 1 || p.Leaves[0].Path != "slow/calls" || p.Leaves[0].Probes[0].MinNs != ms(5)+1 {
		t.Fatalf("derived leaf: %s", p.Explain())
	}
	var rows []string
	r := NewRunner(p, func(row Row) { rows = append(rows, row.Vals[0].String()+" "+row.Vals[1].String()) })
	for i, c := range []*Tuple{callAt(shop[0], 1, 6, 0), callAt(shop[1], 2, 9, 0), callAt(shop[0], 3, 1, 0), callAt(shop[2], 4, 7, 0), callAt(shop[0], 5, 8, 0)} {
		r.Push(0, c)
		if r.Done() && i < 4 {
			break
		}
	}
	if strings.Join(rows, ",") != "Find 6ms,Handler 7ms" || !r.Done() {
		t.Fatalf("rows %v done %v", rows, r.Done())
	}
}

func TestTriggerRows(t *testing.T) {
	p := plan(t, `CREATE TRIGGER slow_find FROM calls WHEN name = 'Find' AND duration > 10ms BEGIN FINE 'within(example.com/shop)' FOR 30s; SNAPSHOT END`, Limits{})
	if len(p.Actions) != 2 || len(p.Actions[0]) != 3 || p.Actions[1] != nil {
		t.Fatalf("action probes: %v", p.Actions)
	}
	var fired []Row
	r := NewRunner(p, func(row Row) { fired = append(fired, row) })
	r.Push(0, callAt(shop[0], 1, 5, 0))
	r.Push(0, callAt(shop[0], 2, 50, 0))
	if len(fired) != 1 || fired[0].Vals[0].S != "slow_find" || fired[0].Vals[1+query.CallDuration].I != ms(50) {
		t.Fatalf("fired: %+v", fired)
	}
}

func TestPercentilesExactThenSketched(t *testing.T) {
	var q quantiles
	for i := 1; i <= 1000; i++ {
		q.add(float64(i))
	}
	if v, _ := q.at(0.99); v != 990 {
		t.Fatalf("exact p99 of 1..1000 = %v, want 990", v)
	}
	for i := 1001; i <= 100000; i++ {
		q.add(float64(i))
	}
	v, _ := q.at(0.99)
	if rel := (v - 99000) / 99000; rel > relativeError || rel < -relativeError {
		t.Fatalf("sketched p99 of 1..100000 = %v, want 99000 within %v", v, relativeError)
	}
	// Order does not matter.
	var r quantiles
	for i := 100000; i >= 1; i-- {
		r.add(float64(i))
	}
	if w, _ := r.at(0.99); w != v {
		t.Fatalf("p99 depends on order: %v vs %v", w, v)
	}
}

func TestSymbolAndSignature(t *testing.T) {
	for sig, want := range map[string]string{
		"example.com/shop.(*Store).Find(int) (Owner, error)": "example.com/shop.(*Store).Find",
		"example.com/shop.Map[...](s []T, f func(T) U) []U":  "example.com/shop.Map[...]",
		"example.com/shop.(*Stack[...]).Pop() (T, bool)":     "example.com/shop.(*Stack[...]).Pop",
		"main.main()": "main.main",
	} {
		if got := Symbol(sig); got != want {
			t.Errorf("Symbol(%q) = %q, want %q", sig, got, want)
		}
	}
	s := SignatureOf("example.com/shop.(*Store).Find(ctx context.Context, f func(int) error) (Owner, error)", "example.com/shop", "Store", "Find", "f.go", 1)
	if !s.RecvPtr || len(s.Params) != 2 || s.Params[1] != "f func(int) error" || len(s.Results) != 2 {
		t.Fatalf("%+v", s)
	}
}
