package live

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/query/engine"
)

// The probes of this test binary: package test.example/shop with Find,
// Save and Hash, registered by hand as generated code would.
var (
	probes = make([]monitor.Probe, 3)
	infos  = []monitor.ProbeInfo{
		{Package: "test.example/shop", Recv: "Store", RecvPtr: true, Name: "Find", Params: []string{"int"}, Results: []string{"error"}, File: "shop.go", Line: 10},
		{Package: "test.example/shop", Recv: "Store", RecvPtr: true, Name: "Save", Results: []string{"error"}, File: "shop.go", Line: 20},
		{Package: "test.example/shop/util", Name: "Hash", Results: []string{"uint64"}, File: "util.go", Line: 5},
	}
	register sync.Once
)

func setup(t testing.TB) {
	register.Do(func() {
		monitor.Register(`{"format":1,"mode":"off","sampling":1,"writer":{"mode":"null","queue":1,"onFull":"drop","flush":"1s"},"analysis":{"interval":"1m"}}`, probes, infos)
	})
	t.Cleanup(func() { monitor.SetRules(nil) })
}

func call(p *monitor.Probe, d time.Duration, err error) {
	if c := monitor.Enter(p); c.On() {
		defer c.Exit(err)
	}
	if d > 0 {
		time.Sleep(d)
	}
}

func modes() []string {
	var out []string
	for _, p := range monitor.Probes(nil) {
		if strings.HasPrefix(p.Signature, "test.example/") {
			out = append(out, string(p.Mode))
		}
	}
	return out
}

func fastOptions() Options {
	return Options{Tick: 10 * time.Millisecond, Lateness: 20 * time.Millisecond}
}

// read collects the JSON lines a query writes until it ends.
func read(t *testing.T, q *Query) []map[string]any {
	t.Helper()
	var buf bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := q.WriteStream(ctx, &buf, 0, time.Second, nil); err != nil {
		t.Fatalf("stream: %v", err)
	}
	var lines []map[string]any
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	return lines
}

func rowsOf(lines []map[string]any) [][]any {
	var out [][]any
	for _, l := range lines {
		if r, ok := l["row"].([]any); ok && l["schema"] == nil {
			out = append(out, r)
		}
	}
	return out
}

// A query switches on exactly the probe it reads, at coarse, with the
// duration bound decided at the exit; cancelling it restores every mode.
func TestAcquisitionalQuery(t *testing.T) {
	setup(t)
	before := modes()
	reg := NewRegistry(fastOptions())
	posted, err := reg.Post(`SELECT name, duration FROM calls WHERE name = 'Find' AND duration >= 20ms`, false)
	if err != nil {
		t.Fatal(err)
	}
	q := posted[0].Query
	if got := modes(); strings.Join(got, ",") != "coarse,off,off" {
		t.Fatalf("modes while the query runs: %v, want only Find coarse", got)
	}
	call(&probes[0], 0, nil)                   // too short: not produced
	call(&probes[0], 25*time.Millisecond, nil) // passes
	call(&probes[1], 25*time.Millisecond, nil) // off: nothing
	time.Sleep(50 * time.Millisecond)
	q.Cancel()
	if got := modes(); strings.Join(got, ",") != strings.Join(before, ",") {
		t.Fatalf("modes after cancel: %v, want %v", got, before)
	}
	lines := read(t, q)
	rows := rowsOf(lines)
	if len(rows) != 1 || rows[0][0] != "Find" || rows[0][1].(float64) < 20e6 {
		t.Fatalf("rows %v", rows)
	}
	if st := q.Info().Stats; st.Tuples != 1 {
		t.Fatalf("%d tuples reached the query; the pushed-down bound should have let one through", st.Tuples)
	}
	if last := lines[len(lines)-1]; last["end"] != "cancelled" {
		t.Fatalf("last line %v", last)
	}
}

func TestSharedProbesAndManualRules(t *testing.T) {
	setup(t)
	reg := NewRegistry(fastOptions())
	if _, err := monitor.AddRule(monitor.Rule{Pattern: "execution(* test.example/shop.(*Store).Save(..))", Mode: "fine"}); err != nil {
		t.Fatal(err)
	}
	a, err := reg.Post(`SELECT count(*) FROM calls WHERE receiver = 'Store'`, true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := reg.Post(`SELECT trace, depth FROM calls WHERE name = 'Find'`, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := modes(); strings.Join(got, ",") != "fine,fine,off" {
		t.Fatalf("modes with both: %v (Find fine for trace, Save fine by the rule)", got)
	}
	b[0].Query.Cancel()
	if got := modes(); strings.Join(got, ",") != "coarse,fine,off" {
		t.Fatalf("modes after one cancel: %v", got)
	}
	a[0].Query.Cancel()
	if got := modes(); strings.Join(got, ",") != "off,fine,off" {
		t.Fatalf("modes after both: %v (the manual rule stays)", got)
	}
	if len(reg.List()) != 2 || reg.List()[0].Info().State != "ended" {
		t.Fatalf("list: %+v", reg.List())
	}
}

func TestBadAndRefusedQueriesChangeNothing(t *testing.T) {
	setup(t)
	reg := NewRegistry(Options{MaxQueries: 1, Limits: engineLimits(1, 0)})
	before := modes()
	for _, text := range []string{
		`SELECT count(* FROM calls`,
		`SELECT nope FROM calls`,
		`SELECT * FROM calls`, // 3 probes, limit 1
		`SELECT * FROM calls WHERE name = 'Find'; SELECT * FROM calls WHERE name = 'Save'`, // two queries, limit 1
	} {
		if _, err := reg.Post(text, true); err == nil {
			t.Fatalf("%s: accepted", text)
		} else {
			var refused *RefusedError
			if text == `SELECT * FROM calls` && (!errors.As(err, &refused) || !strings.Contains(refused.Plan.Explain(), "refused:")) {
				t.Fatalf("refusal without its plan: %v", err)
			}
		}
		if got := modes(); strings.Join(got, ",") != strings.Join(before, ",") || len(reg.List()) != 0 {
			t.Fatalf("%s changed modes to %v or started a query", text, got)
		}
	}
	p, err := reg.Post(`EXPLAIN SELECT * FROM calls WHERE name = 'Hash' AND error`, true)
	if err != nil || !p[0].Explain || !strings.Contains(p[0].Plan.Explain(), "at exit: error") {
		t.Fatalf("explain: %v %+v", err, p)
	}
}

func TestLimitEndsTheQuery(t *testing.T) {
	setup(t)
	reg := NewRegistry(fastOptions())
	p, err := reg.Post(`SELECT name FROM calls WHERE name = 'Hash' LIMIT 2`, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		call(&probes[2], 0, nil)
	}
	select {
	case <-p[0].Query.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the query did not end at its LIMIT")
	}
	lines := read(t, p[0].Query)
	if len(rowsOf(lines)) != 2 || lines[len(lines)-1]["end"] != "LIMIT 2 reached" {
		t.Fatalf("lines %v", lines)
	}
	if got := modes(); got[2] != "off" {
		t.Fatalf("Hash stays %s after its query ended", got[2])
	}
}

func TestTriggerSwitchesProbesForAWhile(t *testing.T) {
	setup(t)
	reg := NewRegistry(fastOptions())
	p, err := reg.Post(`CREATE TRIGGER slow FROM calls WHEN name = 'Find' AND error
		BEGIN FINE 'execution(* test.example/shop/util.*(..))' FOR 1s; SAMPLE(goroutines, 50ms) FOR 1s END`, true)
	if err != nil {
		t.Fatal(err)
	}
	q := p[0].Query
	call(&probes[0], 0, nil)
	time.Sleep(30 * time.Millisecond)
	if got := modes(); got[2] != "off" {
		t.Fatalf("Hash is %s before the trigger fired", got[2])
	}
	call(&probes[0], 0, errors.New("boom"))
	deadline := time.Now().Add(3 * time.Second)
	for modes()[2] != "fine" && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := modes(); got[2] != "fine" {
		t.Fatalf("Hash is %s after the trigger fired", got[2])
	}
	for modes()[2] != "off" && time.Now().Before(deadline.Add(2*time.Second)) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := modes(); got[2] != "off" {
		t.Fatalf("Hash stays %s after FOR 1s", got[2])
	}
	q.Cancel()
	lines := read(t, q)
	var fired, samples, actions int
	for _, l := range lines {
		switch {
		case l["row"] != nil && l["schema"] == nil:
			fired++
		case l["row"] != nil && l["schema"].(float64) == 1:
			samples++
		case l["row"] != nil:
			actions++
		}
	}
	if fired != 1 || samples < 5 || actions < 3 {
		t.Fatalf("fired %d, samples %d, action reports %d:\n%v", fired, samples, actions, lines)
	}
}

func engineLimits(maxProbes int, budget float64) engine.Limits {
	return engine.Limits{MaxProbes: maxProbes, Budget: budget}
}

// The budget bounds the running queries together; a probe a running query
// already switched on costs the next one nothing more.
func TestBudgetOfRunningQueries(t *testing.T) {
	setup(t)
	// Hash and Save get rates for the estimate: on for a while, then off.
	if _, err := monitor.AddRule(monitor.Rule{Pattern: "within(test.example/...)", Mode: "coarse"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20000; i++ {
		call(&probes[1], 0, nil)
		call(&probes[2], 0, nil)
	}
	monitor.SetRules(nil)
	// Rates are calls since the program started over its uptime while no
	// mark is recentMin old (recent.go): without clearMarks, a mark that
	// came of age between the EXPLAINs and the posts halved the span and
	// doubled Save's estimate (under -race, about 20 s into the package's
	// tests). Let the uptime dwarf the test's own few milliseconds, so the
	// rates hold still.
	clearMarks()
	time.Sleep(500 * time.Millisecond)
	hash, save := `SELECT name FROM calls WHERE name = 'Hash' AND duration > 1h`, `SELECT name FROM calls WHERE name = 'Save' AND duration > 1h`
	cost := func(q string) float64 {
		ex, err := NewRegistry(Options{}).Post("EXPLAIN "+q, true)
		if err != nil || ex[0].Plan.CostNs <= 0 {
			t.Fatalf("explain: %v %+v", err, ex)
		}
		return ex[0].Plan.CostNs
	}
	reg := NewRegistry(Options{Limits: engineLimits(100, (cost(hash)+cost(save)/2)/1e9)})
	p, err := reg.Post(hash, true)
	if err != nil {
		t.Fatal(err)
	}
	defer p[0].Query.Cancel()
	again, err := reg.Post(hash, true) // shares Hash's probe: no more cost
	if err != nil {
		t.Fatalf("a second query on the same probe: %v", err)
	}
	defer again[0].Query.Cancel()
	_, err = reg.Post(save, true)
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "the running queries' estimated cost") {
		t.Fatalf("a query on another probe: %v", err)
	}
}
