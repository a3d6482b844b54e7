package live

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/runtime/monitor"
)

// TestCancelAWindowJoinAtHighRate: a window join of a stream with itself,
// at a high rate and over a long window, pairs each call with all the
// buffered ones: a tick's work is far more than a tick. A cancel still
// answers within a second, and the probes are back in their modes when it
// does. (It took minutes, the query staying "running (cancelled)", its
// probes raised.)
func TestCancelAWindowJoinAtHighRate(t *testing.T) {
	setup(t)
	burstOnce.Do(func() {
		monitor.RegisterPackage(burst, []monitor.ProbeInfo{{Package: "load.example/burst", Name: "Tick", File: "burst.go", Line: 1}}, monitor.Links{})
	})
	before := modes()
	reg := NewRegistry(Options{Tick: 10 * time.Millisecond, Lateness: 20 * time.Millisecond, Limits: engineLimits(100, 0)})
	posted, err := reg.Post(`SELECT a.goroutine, b.goroutine, count(*) FROM calls AS a WINDOW JOIN calls AS b WINDOW 24h a FOLLOWED BY b
		WHERE a.package = 'load.example/burst' AND b.package = 'load.example/burst' GROUP BY a.goroutine, b.goroutine`, true)
	if err != nil {
		t.Fatal(err)
	}
	q := posted[0].Query
	drive(t, &burst[0], 100)
	time.Sleep(1500 * time.Millisecond) // the buffers fill: well into a step's pairing
	start := time.Now()
	cancelled := make(chan struct{})
	go func() {
		q.Cancel()
		close(cancelled)
	}()
	select {
	case <-cancelled:
	case <-time.After(time.Second):
		t.Errorf("the cancel did not answer within a second (%+v)", q.Info())
		select {
		case <-cancelled:
		case <-time.After(5 * time.Minute):
		}
	}
	took := time.Since(start)
	if got := modes(); strings.Join(got, ",") != strings.Join(before, ",") || burstMode() != "off" {
		t.Errorf("modes when the cancel answered: %v and %s, want %v and off", got, burstMode(), before)
	}
	in := q.Info()
	if in.State != "ended" || in.Reason != "cancelled" {
		t.Errorf("%+v", in)
	}
	t.Logf("cancel answered in %v after %d tuples, %d rows", took, in.Stats.Tuples, in.Stats.Rows)
}

// burst is a probe of its own for the high-rate stream, so that its rate
// leaves the estimates of the other tests' probes alone.
var (
	burst     = make([]monitor.Probe, 1)
	burstOnce sync.Once
)

func burstMode() string {
	for _, p := range monitor.Probes(nil) {
		if strings.HasPrefix(p.Signature, "load.example/") {
			return string(p.Mode)
		}
	}
	return "unregistered"
}

// A cancel whose loop is still busy after CancelWait releases what the
// query acquired itself; what the loop acquires after that is released at
// once.
func TestHoldsReleaseAll(t *testing.T) {
	setup(t)
	before := modes()
	var h holds
	tap, err := monitor.Acquire(map[uint32]monitor.TapNeed{probes[0].ID(): {}}, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	h.add(tap)
	if got := modes(); got[0] != "coarse" {
		t.Fatalf("modes %v", got)
	}
	h.releaseAll()
	if got := modes(); strings.Join(got, ",") != strings.Join(before, ",") {
		t.Fatalf("modes after releaseAll: %v", got)
	}
	late, err := monitor.Acquire(map[uint32]monitor.TapNeed{probes[1].ID(): {Fine: true}}, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	h.add(late)
	if got := modes(); strings.Join(got, ",") != strings.Join(before, ",") {
		t.Fatalf("a hold added after releaseAll stays: %v", got)
	}
	tap.Release() // the loop's own release, later: harmless
}
