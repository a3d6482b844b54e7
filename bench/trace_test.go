package bench

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// countTrace counts what the real writer wrote; with a tiny queue that drops,
// the records written and the losses it reports still add up to every Write.
func TestCountTrace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace.tgr")
	w, err := writer.NewAsync(writer.Options{Path: path, QueueSize: 16, OnFull: writer.Drop})
	if err != nil {
		t.Fatal(err)
	}
	w.Define(writer.ProbeDef{ID: 1, Signature: "main.f()", Package: "main", Name: "f"})
	const n = 20_000
	for i := range n {
		w.Write(&writer.Record{Probe: 1, EOI: uint32(i), Trace: 1, TIn: int64(i), TOut: int64(i + 1)})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := countTrace(path, n)
	if err != nil {
		t.Fatal(err)
	}
	if c.Unit != "records" || c.Expected != n || c.Written+c.Lost != n || c.Unaccounted() != 0 || c.Written == 0 {
		t.Errorf("count %+v: want %d records written or lost", c, n)
	}
	if _, err := countTrace(filepath.Join(dir, "missing.tgr"), n); err == nil || !strings.Contains(err.Error(), "no trace file") {
		t.Errorf("missing trace: error %v", err)
	}
}

func TestSpanCounts(t *testing.T) {
	out := []byte("starting\nmoobench-otel: spans started=200000 exported=18944 dropped=181056\n")
	c := spanCounts(out)
	if c == nil || *c != (TraceCount{Unit: "spans", Expected: 200000, Written: 18944, Lost: 181056}) {
		t.Errorf("spanCounts = %+v", c)
	}
	if !near(c.LostShare(), 181056.0/200000) {
		t.Errorf("lost share %v", c.LostShare())
	}
	for _, bad := range []string{"", "spans started=lots exported=1 dropped=0", "nothing to see"} {
		if c := spanCounts([]byte(bad)); c != nil {
			t.Errorf("spanCounts(%q) = %+v, want nil", bad, c)
		}
	}
}

func TestETA(t *testing.T) {
	fast := Experiment{Name: "fast", Params: Params{Calls: 1000, Depth: 10, Runs: 2}}
	slow := Experiment{Name: "slow", Params: Params{Calls: 1000, Depth: 10, Runs: 2, MethodTime: time.Millisecond}}
	a, b := &Variant{Name: "a"}, &Variant{Name: "b"}
	var jobs []job
	for _, e := range []Experiment{fast, slow} {
		for run := 1; run <= 2; run++ {
			jobs = append(jobs, job{e, a, run}, job{e, b, run})
		}
	}
	m := newETA(0)
	// Nothing ran: the estimates at 100 ns per monitored call.
	fastEst, slowEst := fast.Params.estimate(etaPerCall), slow.Params.estimate(etaPerCall)
	if got := m.remaining(jobs); got != 4*fastEst+4*slowEst {
		t.Errorf("before any run: %v, want %v", got, 4*fastEst+4*slowEst)
	}
	// a's first run shows 1 µs per monitored call (10 ms for 10,000 calls),
	// b's 100 ns: the rest of fast is measured, slow estimated with those costs.
	m.observe(jobs[0], runOverhead+10*time.Millisecond)
	m.observe(jobs[1], runOverhead+time.Millisecond)
	want := (runOverhead + 10*time.Millisecond) + (runOverhead + time.Millisecond) +
		2*slow.Params.estimate(time.Microsecond) + 2*slow.Params.estimate(100*time.Nanosecond)
	if got := m.remaining(jobs[2:]); got != want {
		t.Errorf("after two runs: %v, want %v", got, want)
	}
	if got := m.remaining(nil); got != 0 {
		t.Errorf("nothing left: %v", got)
	}
}
