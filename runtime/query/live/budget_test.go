package live

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/query"
	"github.com/tigrisgo/tigris/runtime/query/engine"
)

// The probes of the budget's tests, each of its own so that their rates
// (unknown until a test switches them on) leave the others' alone.
var (
	loads     = make([]monitor.Probe, 4)
	loadsOnce sync.Once
)

const (
	loadMeter = iota
	loadJoin
	loadCostly
	loadGroups
)

func setupLoads(t *testing.T) {
	setup(t)
	loadsOnce.Do(func() {
		var infos []monitor.ProbeInfo
		for i, name := range []string{"Meter", "Join", "Costly", "Groups"} {
			infos = append(infos, monitor.ProbeInfo{Package: "load.example/" + strings.ToLower(name), Name: name, File: "load.go", Line: i + 1})
		}
		monitor.RegisterPackage(loads, infos, monitor.Links{})
	})
}

// drive calls probe p from two goroutines, batch calls every millisecond
// each, until the test ends.
func drive(t *testing.T, p *monitor.Probe, batch int) {
	var stop int32
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for atomic.LoadInt32(&stop) == 0 {
				for j := 0; j < batch; j++ {
					call(p, 0, nil)
				}
				time.Sleep(time.Millisecond)
			}
		}()
	}
	t.Cleanup(func() {
		atomic.StoreInt32(&stop, 1)
		wg.Wait()
	})
}

// costCatalog is one probe at a given rate, with the program's measured
// costs.
type costCatalog []*engine.Probe

func (c costCatalog) Probes() []*engine.Probe { return c }
func (c costCatalog) Costs() engine.Costs     { return measured().costs }

// TestMeasuredCostMatchesEstimate: what a query is measured to cost (its
// thread's CPU time and its taps' deliveries) agrees with EXPLAIN's
// estimate at the rate the stream really had, within a factor of three,
// and is a small share of a core, not the wall time the query lived.
func TestMeasuredCostMatchesEstimate(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector the engine runs several times slower than the estimate's costs, which are a normal build's; the normal run of the suite checks it")
	}
	setupLoads(t)
	reg := NewRegistry(Options{Tick: 100 * time.Millisecond, Lateness: 100 * time.Millisecond})
	const text = "SELECT function, count(*), p99(duration) FROM calls WHERE package = 'load.example/meter' GROUP BY function WINDOW 1s"
	posted, err := reg.Post(text, true)
	if err != nil {
		t.Fatal(err)
	}
	q := posted[0].Query
	drive(t, &loads[loadMeter], 20)
	time.Sleep(500 * time.Millisecond) // the stream settles
	before, at := q.Info().Stats, time.Now()
	time.Sleep(3 * time.Second)
	after, el := q.Info().Stats, time.Since(at)
	q.Cancel()
	rate := float64(after.Tuples-before.Tuples) / el.Seconds()
	used := float64(after.CPU-before.CPU) / el.Seconds() // ns a second
	// EXPLAIN at the rate seen. The probe counts as already coarse: the
	// coarse calls it adds are the program's, not measured in the query.
	qs, err := query.Compile(text, nil)
	if err != nil {
		t.Fatal(err)
	}
	pr := readCatalog().byID[loads[loadMeter].ID()]
	pr.Rate, pr.Mode = rate, "coarse"
	p, err := engine.New(qs[0], costCatalog{pr}, engine.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%.0f tuples/s: estimated %.1f µs/s, measured %.1f µs/s (%.0f ns a tuple; the estimate's %.0f)",
		rate, p.CostNs/1e3, used/1e3, used/rate, p.Costs.TupleNs)
	if rate < 1000 {
		t.Fatalf("the stream ran at %.0f tuples/s", rate)
	}
	if ratio := used / p.CostNs; ratio < 1.0/3 || ratio > 3 {
		t.Errorf("measured %.1f µs/s against an estimate of %.1f µs/s: %.2f times", used/1e3, p.CostNs/1e3, ratio)
	}
	if share := used / 1e9; share > 0.5 {
		t.Errorf("measured %.0f%% of a core: the wall time, not the CPU", share*100)
	}
}

// loadMode is the mode of load probe i.
func loadMode(i int) string {
	for _, p := range monitor.Probes(nil) {
		if p.ID == loads[i].ID() {
			return string(p.Mode)
		}
	}
	return "unregistered"
}

// TestOverBudgetJoinHeld: a self window join over 24 h on a high-rate
// stream, whose probe has no rate yet (so the estimate cannot refuse it),
// wants far more than the budget of 5 % of a core. Its join window is cut,
// and it is sampled if need be, until what it measurably uses is within
// the budget; should even that not hold it, it stops saying why. Either way
// it is held: over the last two seconds it used at most twice the budget.
func TestOverBudgetJoinHeld(t *testing.T) {
	setupLoads(t)
	const budget = 0.05
	reg := NewRegistry(Options{Tick: 20 * time.Millisecond, Lateness: 40 * time.Millisecond, Limits: engineLimits(100, budget)})
	posted, err := reg.Post(`SELECT a.goroutine, b.goroutine, count(*) FROM calls AS a WINDOW JOIN calls AS b WINDOW 24h a FOLLOWED BY b
		WHERE a.package = 'load.example/join' AND b.package = 'load.example/join' GROUP BY a.goroutine, b.goroutine`, true)
	if err != nil {
		t.Fatal(err)
	}
	q := posted[0].Query
	defer q.Cancel()
	drive(t, &loads[loadJoin], 100)
	time.Sleep(4 * time.Second) // over, degraded, and settled
	before, at := q.Info().Stats, time.Now()
	time.Sleep(2 * time.Second)
	in := q.Info()
	used := float64(in.Stats.CPU-before.CPU) / float64(time.Since(at))
	t.Logf("state %s (%s); the last 2s: %.2f%% of a core; %+v", in.State, in.Reason, used*100, in.Stats)
	switch {
	case in.State == "ended":
		if !strings.HasPrefix(in.Reason, "stopped over budget: ") || !strings.Contains(in.Reason, "queries.budget") {
			t.Errorf("ended: %q", in.Reason)
		}
	case in.Stats.Degraded == "" || (in.Stats.JoinWindow == 0 && in.Stats.SampleOneIn == 0):
		t.Errorf("not degraded: %+v", in.Stats)
	case used > 2*budget:
		t.Errorf("used %.1f%% of a core, over twice the budget of %.0f%%", used*100, budget*100)
	}
	if in.Stats.JoinWindow == 0 || in.Stats.JoinWindow >= 24*time.Hour {
		t.Errorf("join window %v: not cut", in.Stats.JoinWindow)
	}
	if u := reg.Usage(); in.State == "running" && u.CPU <= 0 {
		t.Errorf("usage %+v", u)
	}
}

// TestCostlyExpressionStopped: an expression of 20,000 additions on every
// call of a high-rate stream, under a budget that even one call in 1024 of
// it passes, stops the query, saying why where its clients look (the
// listing, the end of its result stream), with its probe back off.
func TestCostlyExpressionStopped(t *testing.T) {
	setupLoads(t)
	reg := NewRegistry(Options{Tick: 20 * time.Millisecond, Lateness: 40 * time.Millisecond, Limits: engineLimits(100, 0.0005)})
	posted, err := reg.Post("SELECT 1"+strings.Repeat("+1", 20000)+" AS x FROM calls WHERE package = 'load.example/costly'", true)
	if err != nil {
		t.Fatal(err)
	}
	q := posted[0].Query
	defer q.Cancel()
	drive(t, &loads[loadCostly], 50)
	in := awaitEnd(t, q)
	if !strings.HasPrefix(in.Reason, "stopped over budget: ") || !strings.Contains(in.Reason, "one call in 1024") {
		t.Errorf("reason %q", in.Reason)
	}
	lines := read(t, q)
	if end := lines[len(lines)-1]["end"]; end != in.Reason {
		t.Errorf("the result stream ends with %v", end)
	}
	if m := loadMode(loadCostly); m != "off" {
		t.Errorf("the probe is %s", m)
	}
}

// TestOverMemoryStopped: a query whose group table outgrows its share of
// MaxMemory (a group per call) stops, saying so.
func TestOverMemoryStopped(t *testing.T) {
	setupLoads(t)
	reg := NewRegistry(Options{Tick: 20 * time.Millisecond, Lateness: 40 * time.Millisecond, MaxMemory: 256 << 10})
	posted, err := reg.Post("SELECT start, count(*) FROM calls WHERE package = 'load.example/groups' GROUP BY start WINDOW 1h", true)
	if err != nil {
		t.Fatal(err)
	}
	q := posted[0].Query
	defer q.Cancel()
	drive(t, &loads[loadGroups], 20)
	in := awaitEnd(t, q)
	if !strings.HasPrefix(in.Reason, "stopped over its memory: ") || in.Stats.MemoryPeak < 256<<10 {
		t.Errorf("reason %q, peak %d", in.Reason, in.Stats.MemoryPeak)
	}
	if m := loadMode(loadGroups); m != "off" {
		t.Errorf("the probe is %s", m)
	}
}

// awaitEnd waits until q has ended (at most 15 s) and returns its listing.
func awaitEnd(t *testing.T, q *Query) Info {
	t.Helper()
	select {
	case <-q.Done():
	case <-time.After(15 * time.Second):
		t.Fatalf("still running: %+v", q.Info())
	}
	in := q.Info()
	t.Logf("%s; %+v", in.Reason, in.Stats)
	return in
}
