package export

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/gob"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/export/otlptest"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// simFile writes simulated calls to a trace file (rotating at rotate bytes,
// if set) with a sync writer, in steps, calling between(i) after each step.
func simFile(t testing.TB, path string, calls []simCall, rotate int64, steps int, between func(i int)) {
	t.Helper()
	w, err := writer.NewSync(writer.Options{Path: path, RotateBytes: rotate, ChunkBytes: 4096, FlushInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for p := uint32(1); p <= 3; p++ {
		w.Define(writer.ProbeDef{ID: p, Signature: fmt.Sprintf("example.com/sim.F%d(int) error", p), Package: "example.com/sim", Name: fmt.Sprintf("F%d", p), File: "/src/sim/sim.go", Line: int(10 * p)})
	}
	per := (len(calls) + steps - 1) / steps
	for i := 0; i < steps; i++ {
		for j := i * per; j < min(len(calls), (i+1)*per); j++ {
			w.Write(&calls[j].rec)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if between != nil {
			between(i)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkDelivered checks that the receiver holds exactly one span per call,
// each with its true parent.
func checkDelivered(t *testing.T, r *otlptest.Receiver, stream uint64, calls []simCall) {
	t.Helper()
	spans := r.Spans()
	if _, dups := r.Count(); dups != 0 {
		t.Errorf("%d spans received twice", dups)
	}
	if len(spans) != len(calls) {
		t.Errorf("received %d spans for %d records", len(spans), len(calls))
	}
	wrong := 0
	for _, c := range calls {
		hi, lo := traceID(stream, c.rec.Trace)
		var tid [16]byte
		binary.BigEndian.PutUint64(tid[:], hi)
		binary.BigEndian.PutUint64(tid[8:], lo)
		var sid [8]byte
		binary.BigEndian.PutUint64(sid[:], spanID(stream, c.rec.Trace, c.rec.EOI))
		sp, ok := spans[otlptest.Key(tid[:], sid[:])]
		if !ok {
			t.Errorf("no span for trace %d eoi %d", c.rec.Trace, c.rec.EOI)
			continue
		}
		var want []byte
		if c.parent >= 0 {
			binary.BigEndian.PutUint64(sid[:], spanID(stream, c.rec.Trace, uint32(c.parent)))
			want = sid[:]
		}
		if string(sp.ParentSpanId) != string(want) {
			if wrong++; wrong < 5 {
				t.Errorf("trace %d eoi %d: parent %x, want %x", c.rec.Trace, c.rec.EOI, sp.ParentSpanId, want)
			}
		}
	}
	if wrong > 0 {
		t.Errorf("%d spans with a wrong parent", wrong)
	}
}

func streamOf(t testing.TB, path string) uint64 {
	h, err := peekHeader(path)
	if err != nil || h == nil {
		t.Fatalf("no header in %s: %v", path, err)
	}
	return h.Stream
}

func testOptions(r *otlptest.Receiver, dir string) Options {
	var endpoint string
	if r != nil {
		endpoint = r.URL
	}
	return Options{
		Traces: []string{dir}, Endpoint: endpoint, Checkpoint: filepath.Join(dir, "export.ckpt"),
		Poll: 10 * time.Millisecond, BatchWait: 10 * time.Millisecond, BatchSpans: 500,
		Hold: 100 * time.Millisecond, Settle: 50 * time.Millisecond, CheckpointEvery: 10 * time.Millisecond,
		BackoffMin: 5 * time.Millisecond, BackoffMax: 20 * time.Millisecond,
	}
}

// waitFor polls cond for up to 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// runFor runs a shipper for d, then until cond (if given), and stops it.
func runFor(t *testing.T, o Options, d time.Duration, cond func() bool) Stats {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Stats)
	go func() {
		st, err := Run(ctx, o)
		if err != nil {
			t.Error(err)
		}
		done <- st
	}()
	time.Sleep(d)
	if cond != nil {
		waitFor(t, "progress", cond)
	}
	cancel()
	return <-done
}

// TestFollowRotating follows a stream while it is written and rotated: every
// record arrives once with its parent, traces that never end included.
func TestFollowRotating(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.tgr")
	rng := rand.New(rand.NewPCG(1, 2))
	calls := simulate(rng, 4, 3000, true)
	r := otlptest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	var st Stats
	done := make(chan error, 1)
	started := false
	simFile(t, path, calls, 8<<10, 20, func(i int) {
		if !started {
			started = true
			go func() { var err error; st, err = Run(ctx, testOptions(r, dir)); done <- err }()
		}
		time.Sleep(5 * time.Millisecond)
	})
	if _, err := os.Stat(writer.RotatedPath(path, 3)); err != nil {
		t.Fatalf("the writer did not rotate enough: %v", err)
	}
	waitFor(t, "every span", func() bool { n, _ := r.Count(); return n >= len(calls) })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	checkDelivered(t, r, streamOf(t, path), calls)
	if st.Records != int64(len(calls)) || st.SpansSent != int64(len(calls)) || st.SpansFailed != 0 || st.SpansPending != 0 {
		t.Errorf("stats %+v for %d records", st, len(calls))
	}
}

// TestOutageAndRestart: the receiver refuses for a while, then the shipper
// is stopped and started again twice; every span arrives exactly once, and
// the shipper held no more than its memory bound meanwhile.
func TestOutageAndRestart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.tgr")
	rng := rand.New(rand.NewPCG(3, 4))
	calls := simulate(rng, 6, 5000, false)
	simFile(t, path, calls, 0, 1, nil)
	r := otlptest.New(t)
	r.Status.Store(http.StatusServiceUnavailable)
	o := testOptions(r, dir)
	o.MaxMemory = 4 << 20
	var maxPending int64
	var mu sync.Mutex
	o.OnStats = func(s Stats) {
		mu.Lock()
		maxPending = max(maxPending, s.SpansPending)
		mu.Unlock()
	}
	run := func(d time.Duration, cond func() bool) Stats { return runFor(t, o, d, cond) }
	run(300*time.Millisecond, nil) // refused all along
	if n, _ := r.Count(); n != 0 {
		t.Fatalf("%d spans received while refusing", n)
	}
	r.Status.Store(0)
	run(0, func() bool { n, _ := r.Count(); return n > len(calls)/4 }) // stopped midway
	st := run(0, func() bool { n, _ := r.Count(); return n >= len(calls) })
	checkDelivered(t, r, streamOf(t, path), calls)
	if st.SpansSent != int64(len(calls)) || st.Records != int64(len(calls)) || st.Retries == 0 {
		t.Errorf("stats %+v for %d records", st, len(calls))
	}
	// 4 MiB at 72 bytes a span, plus a read batch of slack.
	if bound := int64(o.MaxMemory/recordCost) + readBatchRecords; maxPending > bound {
		t.Errorf("up to %d spans pending, more than the memory bound allows (%d)", maxPending, bound)
	}
}

// TestOnce exports finished files and returns; a second run sends nothing.
func TestOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.tgr")
	calls := simulate(rand.New(rand.NewPCG(5, 6)), 3, 2000, false)
	simFile(t, path, calls, 0, 1, nil)
	r := otlptest.New(t)
	o := testOptions(r, dir)
	o.Once = true
	o.Gzip = true
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := Run(ctx, o); err != nil {
		t.Fatal(err)
	}
	checkDelivered(t, r, streamOf(t, path), calls)
	st, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if n, dups := r.Count(); n != len(calls) || dups != 0 || st.SpansSent != int64(len(calls)) {
		t.Errorf("after a second run: %d spans, %d duplicates, stats %+v", n, dups, st)
	}
	o.Traces = []string{filepath.Join(dir, "none-*.tgr")}
	o.Checkpoint = ""
	if _, err := Run(ctx, o); err == nil {
		t.Error("Once with no files: no error")
	}
}

// TestRefused: a receiver that refuses for good (400) gets each batch once,
// and the spans are counted as not delivered.
func TestRefused(t *testing.T) {
	dir := t.TempDir()
	calls := simulate(rand.New(rand.NewPCG(7, 8)), 2, 300, false)
	simFile(t, filepath.Join(dir, "app.tgr"), calls, 0, 1, nil)
	r := otlptest.New(t)
	r.Status.Store(http.StatusBadRequest)
	o := testOptions(r, dir)
	o.Once = true
	st, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if st.SpansFailed != int64(len(calls)) || st.SpansSent != 0 || st.Retries != 0 {
		t.Errorf("stats %+v for %d records", st, len(calls))
	}
}

// TestCrashRestart: a crash leaves the last checkpoint written, older than
// what was delivered. The restart sends again only what was delivered after
// it, with the same ids, and loses nothing.
func TestCrashRestart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.tgr")
	calls := simulate(rand.New(rand.NewPCG(9, 10)), 4, 3000, false)
	simFile(t, path, calls, 0, 1, nil)
	r := otlptest.New(t)
	o := testOptions(r, dir)
	o.Once = true
	old := filepath.Join(t.TempDir(), "old.ckpt")
	var sentAtCopy int64
	copied := make(chan struct{})
	go func() {
		// Copy the checkpoint once a third has arrived: the state a crash
		// would leave behind.
		defer close(copied)
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if n, _ := r.Count(); n > len(calls)/3 {
				if b, err := os.ReadFile(o.Checkpoint); err == nil && os.WriteFile(old, b, 0o644) == nil {
					n, _ = r.Count()
					sentAtCopy = int64(n)
				}
				return
			}
		}
	}()
	o.BatchSpans = 100
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	<-copied
	if sentAtCopy == 0 {
		t.Skip("the export finished before a checkpoint could be copied")
	}
	b, err := os.ReadFile(old)
	if err != nil {
		t.Fatal(err)
	}
	var ck ckptFile
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&ck); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(o.Checkpoint, b, 0o644) // the crash: back to the older checkpoint
	o.OnStats = nil
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	n, dups := r.Count()
	if n != len(calls) {
		t.Errorf("%d spans for %d records", n, len(calls))
	}
	// What the checkpoint counts as delivered is never sent again.
	if after := len(calls) - int(ck.Stats.SpansSent); dups > after {
		t.Errorf("%d spans sent twice; at most those delivered after the checkpoint (%d) may be", dups, after)
	}
	t.Logf("%d spans; the checkpoint had %d delivered, %d had arrived when it was taken; %d sent again after the crash", n, ck.Stats.SpansSent, sentAtCopy, dups)
}

// TestDamagedCheckpoint: a checkpoint that does not decode stops the
// shipper with a message that says what to do.
func TestDamagedCheckpoint(t *testing.T) {
	dir := t.TempDir()
	r := otlptest.New(t)
	o := testOptions(r, dir)
	os.WriteFile(o.Checkpoint, []byte("not a checkpoint"), 0o644)
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "remove it") {
		t.Errorf("damaged checkpoint: %v", err)
	}
}

// TestCheckpointInUse: a second shipper on a checkpoint in use stops at once
// and says so (it would send everything the first sends); once the first
// has stopped, the checkpoint is free again.
func TestCheckpointInUse(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no lock on this system")
	}
	dir := t.TempDir()
	simFile(t, filepath.Join(dir, "app.tgr"), simulate(rand.New(rand.NewPCG(15, 16)), 2, 100, false), 0, 1, nil)
	r := otlptest.New(t)
	o := testOptions(r, dir)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := Run(ctx, o); done <- err }()
	waitFor(t, "the first shipper's spans", func() bool { n, _ := r.Count(); return n > 0 })
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "in use by another tigris export (pid ") {
		t.Errorf("a second shipper on the same checkpoint: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	o.Once = true
	if _, err := Run(context.Background(), o); err != nil {
		t.Errorf("after the first stopped: %v", err)
	}
	if _, dups := r.Count(); dups != 0 {
		t.Errorf("%d spans twice", dups)
	}
}
