package writer

import (
	"runtime"
	"testing"
)

// oneP runs the test with GOMAXPROCS 1, so an Async has exactly one queue and
// every Write goes to it, and restores the old value afterwards.
func oneP(t *testing.T) {
	old := runtime.GOMAXPROCS(1)
	t.Cleanup(func() { runtime.GOMAXPROCS(old) })
}

// TestForcedFullDropCountsExactly: with the consumer lock held nothing is
// drained, so a queue of Q slots takes Q records and Drop discards every
// further one. Stats, the loss record and the exit-time span must count
// exactly those.
func TestForcedFullDropCountsExactly(t *testing.T) {
	oneP(t)
	opt := testOptions(t)
	opt.QueueSize = 256
	opt.OnFull = Drop
	var final Stats
	opt.OnClose = func(st Stats) { final = st }
	w, err := NewAsync(opt)
	if err != nil {
		t.Fatal(err)
	}
	w.Define(ProbeDef{ID: 1, Name: "f"})
	const queue, extra = 256, 1000
	w.mu.Lock() // no consumer: the writer goroutine waits for the lock
	for i := 0; i < queue+extra; i++ {
		w.Write(&Record{Probe: 1, EOI: uint32(i), TIn: int64(i), TOut: int64(i + 1)})
	}
	st := w.Stats()
	w.mu.Unlock()
	if st.Queued != queue || st.Dropped != extra || st.QueueFull != extra || st.Written != 0 {
		t.Fatalf("held: %+v; want %d queued, %d dropped to a full queue", st, queue, extra)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st = w.Stats()
	if st.Written != queue || st.Dropped != extra || st.QueueFull != extra || st.Queued != 0 {
		t.Fatalf("closed: %+v; want %d written, %d dropped", st, queue, extra)
	}
	if final != st {
		t.Errorf("OnClose got %+v, Stats %+v", final, st)
	}
	got := readFile(t, opt.Path)
	if got.err != nil || len(got.records) != queue || len(got.losses) != 1 {
		t.Fatalf("read %d records, %d loss records (%v)", len(got.records), len(got.losses), got.err)
	}
	want := Loss{Count: extra, From: queue + 1, To: queue + extra, Reason: LossQueueFull}
	if got.losses[0] != want {
		t.Errorf("loss record %+v, want %+v", got.losses[0], want)
	}
	for i, r := range got.records {
		if r.EOI != uint32(i) {
			t.Fatalf("record %d has EOI %d: the first %d records must be the ones kept", i, r.EOI, queue)
		}
	}
}
