package writer

import (
	"testing"
	"time"
)

// TestAppendWakeAndFull pins Append's reading of the consumer's tail: it
// reads the tail only from the wake mark on, yet it asks for a wake exactly
// when the real fill reaches the mark and refuses exactly when the queue is
// full, also after a consumer drained part of it behind the producer's back.
func TestAppendWakeAndFull(t *testing.T) {
	opt := testOptions(t)
	opt.QueueSize = 64
	opt.FlushInterval = time.Hour // no drain but the test's own
	w, err := NewAsync(opt)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s := w.shards[0].Load()
	size := s.mask + 1
	appendOne := func(i int) (ok, wake bool) {
		return w.Append(0, 1, 0, uint32(i), 0, 1, 1, int64(i), int64(i), 0)
	}
	// drain frees n slots as a consumer would (under mu, tail stored).
	drain := func(n uint64) {
		w.mu.Lock()
		s.tail.Store(s.tail.Load() + n)
		w.mu.Unlock()
	}
	wakes := 0
	for i := 0; uint64(i) < size; i++ {
		ok, wake := appendOne(i)
		if !ok {
			t.Fatalf("record %d of a queue of %d refused", i, size)
		}
		if wake {
			if used := uint64(i); used != s.wakeAt {
				t.Fatalf("wake asked at fill %d, mark %d", used, s.wakeAt)
			}
			wakes++
		}
	}
	if wakes != 1 {
		t.Fatalf("%d wakes while filling the queue once, want 1", wakes)
	}
	if ok, _ := appendOne(-1); ok {
		t.Fatal("a full queue took a record")
	}
	// The consumer drains all but a quarter minus one: the fill is below the
	// mark, and the producer, which saw a full queue, must notice both the
	// room and the mark when the fill reaches it again.
	drain(size - s.wakeAt + 1)
	wakes = 0
	n := 0
	for {
		ok, wake := appendOne(n)
		if !ok {
			break
		}
		if wake {
			if used := s.head.Load() - 1 - s.tail.Load(); used != s.wakeAt {
				t.Fatalf("wake asked at fill %d, mark %d", used, s.wakeAt)
			}
			wakes++
		}
		n++
	}
	if uint64(n) != size-s.wakeAt+1 || wakes != 1 {
		t.Fatalf("after the drain: %d records taken (want %d), %d wakes (want 1)", n, size-s.wakeAt+1, wakes)
	}
	// Records taken stay counted: Close writes every one of them.
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, opt.Path)
	if want := uint64(n) + size - (size - s.wakeAt + 1); uint64(len(got.records)) != want {
		t.Fatalf("file holds %d records, want %d", len(got.records), want)
	}
}

// TestReserve: Reserve, Append's inlined common case, gives a slot below the
// wake mark only (from the mark on Append must decide the wake), none on a
// closed writer or for a P without a queue; what is committed reaches the
// file field for field.
func TestReserve(t *testing.T) {
	opt := testOptions(t)
	opt.QueueSize = 64
	opt.FlushInterval = time.Hour // no drain but Close's
	w, err := NewAsync(opt)
	if err != nil {
		t.Fatal(err)
	}
	s := w.shards[0].Load()
	if _, ok := w.Reserve(maxShards); ok {
		t.Fatal("a slot for a P beyond the table")
	}
	if w.shards[maxShards-1].Load() == nil {
		if _, ok := w.Reserve(maxShards - 1); ok {
			t.Fatal("a slot for a P without a queue")
		}
	}
	var want []Record
	for i := 0; ; i++ {
		sl, ok := w.Reserve(0)
		if !ok {
			if uint64(i) != s.wakeAt {
				t.Fatalf("Reserve refused at fill %d, the wake mark is %d", i, s.wakeAt)
			}
			break
		}
		r := Record{Probe: 7, Flags: FlagError | FlagSize, EOI: uint32(i), ESS: 2, Trace: 9, GID: 11, TIn: int64(100 + i), TOut: int64(150 + 2*i), Size: int64(i)}
		*sl.R = r
		sl.Commit()
		want = append(want, r)
	}
	// At the mark Append takes the record and asks for the wake.
	if ok, wake := w.Append(0, 7, 0, 99, 0, 9, 11, 1000, 1001, 0); !ok || !wake {
		t.Fatalf("Append at the wake mark: ok %v, wake %v", ok, wake)
	}
	want = append(want, Record{Probe: 7, EOI: 99, Trace: 9, GID: 11, TIn: 1000, TOut: 1001})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := w.Reserve(0); ok {
		t.Fatal("a slot in a closed writer")
	}
	got := readFile(t, opt.Path).records
	if len(got) != len(want) {
		t.Fatalf("file holds %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("record %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
