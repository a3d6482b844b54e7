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
