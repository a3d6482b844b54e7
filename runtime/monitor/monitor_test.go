package monitor

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/runtime/settings"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// newProbes registers n fresh probes named name0..name(n-1) in package pkg.
func newProbes(t testing.TB, pkg string, n int) []Probe {
	t.Helper()
	probes := make([]Probe, n)
	infos := make([]ProbeInfo, n)
	for i := range infos {
		infos[i] = ProbeInfo{Package: pkg, Name: "F" + string(rune('a'+i)), Results: []string{"error"}, File: pkg + "/f.go", Line: 10 + i}
	}
	Register(`{"format":1,"mode":"coarse","sampling":1,"writer":{"mode":"null","queue":1,"onFull":"drop","flush":"1s"},"analysis":{"interval":"1m"}}`, probes, infos)
	return probes
}

func call(p *Probe, err error) {
	if c := Enter(p); c.On() {
		defer c.Exit(err)
	}
}

// recordSink counts what reaches it.
type recordSink struct {
	mu      sync.Mutex
	defs    []writer.ProbeDef
	records []writer.Record
}

func (s *recordSink) Define(d writer.ProbeDef) {
	s.mu.Lock()
	s.defs = append(s.defs, d)
	s.mu.Unlock()
}
func (s *recordSink) Write(r *writer.Record) {
	s.mu.Lock()
	s.records = append(s.records, *r)
	s.mu.Unlock()
}

func TestEnterInlines(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the compiler")
	}
	out, err := exec.Command("go", "build", "-gcflags=-m", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m: %v\n%s", err, out)
	}
	for _, want := range []string{"can inline (*Probe).On", "can inline Enter", "can inline (*Call).On",
		// The test of a root that looks for its remote parent (join.go).
		"can inline (*Call).Joins",
		// The exits of defer-free functions: a test of the Call and, only
		// for a started call, the exit's call (the generic ones are
		// reported where they are instantiated: TestOffPathMachineCode).
		"can inline Done\n", "can inline DoneErr\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("compiler did not report %q; the probe prologue would cost a call:\n%s", want, out)
		}
	}
	// The fine exit's store into the writer's queue: two calls more on
	// every fine record if these stop inlining (Reserve is at the budget).
	for _, want := range []string{"inlining call to writer.(*Async).Reserve", "inlining call to writer.Slot.Commit"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("compiler did not report %q; the fine exit would cost a call:\n%s", want, out)
		}
	}
}

func TestCoarseStatistics(t *testing.T) {
	ps := newProbes(t, "test.example/coarse", 1)
	p := &ps[0]
	boom := errors.New("boom")
	for i := 0; i < 100; i++ {
		var err error
		if i%4 == 0 {
			err = boom
		}
		call(p, err)
	}
	func() {
		defer func() { recover() }()
		c := Enter(p)
		defer c.Exit(nil)
		panic("x")
	}()
	st := statsFor(t, p.ID())
	if st.Count != 101 {
		t.Errorf("count = %d, want 101", st.Count)
	}
	if st.Errors != 25 {
		t.Errorf("errors = %d, want 25", st.Errors)
	}
	if st.MeanNs <= 0 {
		t.Errorf("mean = %v, want > 0", st.MeanNs)
	}
	if st.Mode != "coarse" {
		t.Errorf("mode = %v, want coarse", st.Mode)
	}
}

func statsFor(t *testing.T, id uint32) Stats {
	t.Helper()
	for _, s := range Snapshot() {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no statistics for probe %d", id)
	return Stats{}
}

// TestZeroAllocations: no probe path allocates, whichever mode, result,
// sampling decision and writer: off, coarse, fine into the null writer, a
// call that returns an error, a nested call inside a recorded trace, a call of
// an unrecorded trace, a record through the async writer to a file (the
// default writer, on-full block), and the parent's side of a go statement
// outside a trace and inside an unrecorded one.
func TestZeroAllocations(t *testing.T) {
	ps := newProbes(t, "test.example/allocs", 3)
	if _, err := AddRule(Rule{Pattern: "execution(* test.example/allocs.Fb(..))", Mode: "off"}); err != nil {
		t.Fatal(err)
	}
	if _, err := AddRule(Rule{Pattern: "execution(* test.example/allocs.Fc(..))", Mode: "fine"}); err != nil {
		t.Fatal(err)
	}
	defer SetRules(nil)
	prev := SetSink(&writer.Null{})
	defer SetSink(prev)
	coarse, off, fine := &ps[0], &ps[1], &ps[2]
	errBoom := errors.New("boom")
	check := func(name string, f func()) {
		t.Helper()
		f() // a first fine call creates the goroutine's context
		if n := testing.AllocsPerRun(1000, f); n != 0 {
			t.Errorf("%s: got %v alloc(s) per call; want 0", name, n)
		}
	}
	check("coarse probe", func() { call(coarse, nil) })
	check("coarse probe, error result", func() { call(coarse, errBoom) })
	check("off probe", func() { call(off, nil) })
	check("fine probe", func() { call(fine, nil) })
	check("fine probe, error result", func() { call(fine, errBoom) })
	nested := func() {
		c := Enter(fine)
		call(fine, nil)
		c.Exit(nil)
	}
	check("fine probe inside a recorded trace", nested)
	check("go statement outside a trace (Fork)", func() {
		if l := Fork(fine); l.On() {
			t.Error("Fork outside a trace returned a link")
		}
	})

	// The default writer: async, on-full block, into a file.
	opt := writer.Options{Path: filepath.Join(t.TempDir(), "allocs.tgr"), OnFull: writer.Block, TickTimes: true}
	w, err := writer.NewAsync(opt)
	if err != nil {
		t.Fatal(err)
	}
	SetSink(w)
	check("fine probe into the async writer", nested)
	SetSink(&writer.Null{})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Written == 0 || st.Dropped != 0 {
		t.Errorf("async writer: %+v", st)
	}

	setThreshold(t, 0) // every trace unrecorded
	check("fine probe, trace not sampled", nested)
	check("go statement inside an unrecorded trace (Fork)", func() {
		c := Enter(fine)
		if l := Fork(fine); !l.On() {
			t.Error("Fork inside an unrecorded trace returned no link")
		}
		c.Exit(nil)
	})
}

// TestConcurrentModeSwitch hammers one probe from many goroutines while another
// goroutine switches its mode; every call that was measured must be counted once.
func TestConcurrentModeSwitch(t *testing.T) {
	ps := newProbes(t, "test.example/hammer", 1)
	p := &ps[0]
	prev := SetSink(&writer.Null{})
	defer SetSink(prev)
	defer SetRules(nil)
	var measured atomic.Uint64
	var wg sync.WaitGroup
	stop, switcherDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(switcherDone)
		modes := []string{"off", "coarse", "fine"}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_ = SetRules([]Rule{{Pattern: "execution(* test.example/hammer.*(..))", Mode: Mode(modes[i%3])}})
		}
	}()
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20000; i++ {
				if c := Enter(p); c.On() {
					measured.Add(1)
					c.Exit(nil)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-switcherDone // a late SetRules must not leak into the next test
	if got, want := statsFor(t, p.ID()).Count, measured.Load(); got != want {
		t.Errorf("count = %d, want %d measured calls", got, want)
	}
}

func TestFineRecordsTraceTree(t *testing.T) {
	ps := newProbes(t, "test.example/fine", 2)
	if _, err := AddRule(Rule{Pattern: "execution(* test.example/fine.*(..))", Mode: "fine"}); err != nil {
		t.Fatal(err)
	}
	defer SetRules(nil)
	sink := &recordSink{}
	prev := SetSink(sink)
	defer SetSink(prev)
	outer, inner := &ps[0], &ps[1]
	func() {
		c := Enter(outer)
		defer c.Exit(nil)
		call(inner, nil)
		call(inner, errors.New("x"))
	}()
	if len(sink.records) != 3 {
		t.Fatalf("got %d records, want 3", len(sink.records))
	}
	// Records arrive at exit: the two inner calls, then the outer one.
	in1, in2, out := sink.records[0], sink.records[1], sink.records[2]
	if out.EOI != 0 || out.ESS != 0 || in1.EOI != 1 || in1.ESS != 1 || in2.EOI != 2 || in2.ESS != 1 {
		t.Errorf("eoi/ess: outer %d/%d, inner %d/%d and %d/%d; want 0/0, 1/1, 2/1",
			out.EOI, out.ESS, in1.EOI, in1.ESS, in2.EOI, in2.ESS)
	}
	if in1.Trace != out.Trace || in2.Trace != out.Trace {
		t.Errorf("calls of one trace got trace ids %d, %d, %d", out.Trace, in1.Trace, in2.Trace)
	}
	if in2.Flags&writer.FlagError == 0 || in1.Flags&writer.FlagError != 0 {
		t.Errorf("error flags: %v %v", in1.Flags, in2.Flags)
	}
	if !(out.TIn <= in1.TIn && in2.TOut <= out.TOut) {
		t.Errorf("inner calls not inside the outer one: %+v %+v %+v", out, in1, in2)
	}
	if len(sink.defs) != 2 {
		t.Errorf("got %d probe definitions, want 2", len(sink.defs))
	}
	// The next root call starts a new trace.
	call(outer, nil)
	if last := sink.records[len(sink.records)-1]; last.Trace == out.Trace || last.EOI != 0 {
		t.Errorf("second root call: trace %d eoi %d; want a new trace at eoi 0", last.Trace, last.EOI)
	}
}

func TestSampling(t *testing.T) {
	ps := newProbes(t, "test.example/sampled", 1)
	if _, err := AddRule(Rule{Pattern: "execution(* test.example/sampled.*(..))", Mode: "fine"}); err != nil {
		t.Fatal(err)
	}
	defer SetRules(nil)
	sink := &recordSink{}
	prev := SetSink(sink)
	defer SetSink(prev)
	if err := SetSampling(0.25); err != nil {
		t.Fatal(err)
	}
	defer SetSampling(1)
	const n = 20000
	for i := 0; i < n; i++ {
		call(&ps[0], nil)
	}
	got := float64(len(sink.records)) / n
	if math.Abs(got-0.25) > 0.03 {
		t.Errorf("recorded share %.3f, want 0.25±0.03", got)
	}
	if err := SetSampling(1.5); err == nil {
		t.Error("SetSampling(1.5) succeeded")
	}
	if c := statsFor(t, ps[0].ID()).Count; c != n {
		t.Errorf("coarse count %d, want %d (sampling must not thin statistics)", c, n)
	}
}

func TestBadRuleChangesNothing(t *testing.T) {
	ps := newProbes(t, "test.example/badrule", 1)
	before := ps[0].mode.Load()
	if _, err := AddRule(Rule{Pattern: "execution(* (", Mode: "fine"}); err == nil {
		t.Error("bad pattern accepted")
	}
	if _, err := AddRule(Rule{Pattern: "execution(* *.*(..))", Mode: "loud"}); err == nil {
		t.Error("bad mode accepted")
	}
	if ps[0].mode.Load() != before {
		t.Error("a rejected rule changed a mode")
	}
}

func TestMomentsMergeAndMinus(t *testing.T) {
	xs := []float64{3, 7, 7, 19, 24, 1, 0, 5, 5, 5, 12}
	var all, head moments
	for i, x := range xs {
		one := moments{N: 1, Mean: x}
		all = all.merge(one)
		if i < 4 {
			head = head.merge(one)
		}
	}
	var tail moments
	for _, x := range xs[4:] {
		tail = tail.merge(moments{N: 1, Mean: x})
	}
	got := all.minus(head)
	if math.Abs(got.N-tail.N) > 1e-9 || math.Abs(got.Mean-tail.Mean) > 1e-9 || math.Abs(got.M2-tail.M2) > 1e-6 {
		t.Errorf("minus = %+v, want %+v", got, tail)
	}
	// The stripes' shifted sums agree with the merged moments, also far from
	// zero (durations of long calls in ticks), where plain sums of squares
	// would cancel the spread away.
	for _, off := range []float64{0, 1e12} {
		var acc shifted
		for i, x := range xs {
			acc.add(i == 0, off+x)
		}
		m := acc.moments(uint64(len(xs)))
		if m.N != all.N || math.Abs(m.Mean-off-all.Mean) > 1e-6 || math.Abs(m.M2-all.M2) > 1e-6*all.M2 {
			t.Errorf("offset %g: shifted sums give %+v; merged %+v", off, m, all)
		}
	}
}

// TestOpenedWriterTakesFastPath: the writer the settings open is boxed as
// SetSink boxes one, so the fine exit stores its records straight into the
// async writer's queue (or counts them for the null writer) rather than
// building each and calling Sink.Write. It was not, and instrumented programs
// paid about 8 ns a fine call that BenchmarkPaths, which calls SetSink, did
// not show.
func TestOpenedWriterTakesFastPath(t *testing.T) {
	for _, mode := range []settings.WriterMode{settings.WriterAsync, settings.WriterNull, settings.WriterSync} {
		registry.mu.Lock()
		cfg, chosen, prev := registry.cfg, registry.sinkChosen, sink.Load()
		registry.cfg.Writer.Mode = mode
		registry.cfg.Writer.Path = filepath.Join(t.TempDir(), "trace.tgr")
		registry.sinkChosen = false
		ensureWriterLocked()
		b := sink.Load()
		registry.cfg, registry.sinkChosen = cfg, chosen
		sink.Store(prev)
		registry.mu.Unlock()
		if out, ok := b.s.(writer.Output); ok {
			out.Close()
		}
		async, null := b.async != nil, b.null != nil
		if async != (mode == settings.WriterAsync) || null != (mode == settings.WriterNull) {
			t.Errorf("writer %q opened from the settings: %T boxed with async %v, null %v", mode, b.s, async, null)
		}
	}
}

// TestUnopenedWriter: when the trace file cannot be created, fine records are
// discarded and counted as dropped, and the error is what Flush returns.
func TestUnopenedWriter(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	wc := settings.Default().Writer
	wc.Path = filepath.Join(blocker, "trace.tgr") // a path below a regular file
	out := openOutput(wc)
	for left := 3; left > 0; left-- {
		out.Write(&writer.Record{Probe: 1})
	}
	if st := out.Stats(); st.Dropped != 3 || st.Written != 0 || st.Errors != 1 {
		t.Errorf("stats %+v; want 3 dropped, 1 error", st)
	}
	if err := out.Flush(); err == nil {
		t.Error("Flush of an unopened writer: no error")
	}
}

// TestSummariesSwitch: result sizes reach fine records only with summaries on;
// the coarse statistics keep them either way.
func TestSummariesSwitch(t *testing.T) {
	ps := newProbes(t, "test.example/sized", 1)
	if _, err := AddRule(Rule{Pattern: "execution(* test.example/sized.*(..))", Mode: "fine"}); err != nil {
		t.Fatal(err)
	}
	defer SetRules(nil)
	sink := &recordSink{}
	prev := SetSink(sink)
	defer SetSink(prev)
	defer summaries.Store(summaries.Load())
	for _, on := range []bool{false, true} {
		summaries.Store(on)
		c := Enter(&ps[0])
		c.ExitSize(nil, 42)
		r := sink.records[len(sink.records)-1]
		if got := r.Flags&writer.FlagSize != 0 && r.Size == 42; got != on {
			t.Errorf("summaries %v: record flags %v size %d", on, r.Flags, r.Size)
		}
	}
	if s := statsFor(t, ps[0].ID()); s.Sized != 2 || s.ResultSizeMean != 42 {
		t.Errorf("coarse statistics: %d sized calls, mean %v; want 2 and 42", s.Sized, s.ResultSizeMean)
	}
}

// TestSecondExitHarmless pins the ABI's promise that a second exit of the
// same Call does nothing: one call counted, one record, and the trace
// context back where the first exit put it (the next call at the root is a
// new trace at depth 0), in fine and in coarse mode, with the record going
// through Sink.Write and through the asynchronous writer's Append.
func TestSecondExitHarmless(t *testing.T) {
	ps := newProbes(t, "test.example/twice", 2)
	if _, err := AddRule(Rule{Pattern: "execution(* test.example/twice.Fa(..))", Mode: "fine"}); err != nil {
		t.Fatal(err)
	}
	defer SetRules(nil)
	fine, coarse := &ps[0], &ps[1]
	async, err := writer.NewAsync(writer.Options{Path: t.TempDir() + "/twice.tgr", FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	rs := &recordSink{}
	for _, s := range []writer.Sink{rs, async} {
		prev := SetSink(s)
		before := fineRecords.Load()
		func() {
			c := Start(fine)
			func() {
				d := Start(fine)
				d.Exit(nil)
				d.Exit(errors.New("again"))
			}()
			c.Exit(nil)
			c.Exit(nil)
		}()
		root := Start(fine)
		if root.ess() != 0 || root.eoi() != 0 {
			t.Errorf("%T: the next call is at depth %d, order %d; want a new trace's root", s, root.ess(), root.eoi())
		}
		root.Exit(nil)
		if got := fineRecords.Load() - before; got != 3 {
			t.Errorf("%T: %d records counted for 3 calls", s, got)
		}
		SetSink(prev)
	}
	if len(rs.records) != 3 || rs.records[0].Flags&writer.FlagError != 0 {
		t.Errorf("Sink.Write got %d records (%+v); want 3, none failed", len(rs.records), rs.records)
	}
	if err := async.Close(); err != nil {
		t.Fatal(err)
	}
	if st := async.Stats(); st.Written != 3 || st.Dropped != 0 {
		t.Errorf("the async writer wrote %d, dropped %d; want 3 and 0", st.Written, st.Dropped)
	}
	if st := statsFor(t, fine.ID()); st.Count != 6 || st.Errors != 0 {
		t.Errorf("fine probe: %d calls, %d errors; want 6 and 0", st.Count, st.Errors)
	}
	c := Start(coarse)
	c.Exit(nil)
	c.Exit(errors.New("again"))
	if st := statsFor(t, coarse.ID()); st.Count != 1 || st.Errors != 0 {
		t.Errorf("coarse probe: %d calls, %d errors; want 1 and 0", st.Count, st.Errors)
	}
}
