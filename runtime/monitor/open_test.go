package monitor

import (
	"sync"
	"testing"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// loseSink is a recordSink that also takes the losses the close counts.
type loseSink struct {
	recordSink
	lost []writer.Loss
}

func (s *loseSink) Lose(l writer.Loss) {
	s.mu.Lock()
	s.lost = append(s.lost, l)
	s.mu.Unlock()
}

// of returns the records of probes ps.
func (s *loseSink) of(ps []Probe) []writer.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []writer.Record
	for _, r := range s.records {
		for i := range ps {
			if r.Probe == ps[i].id {
				out = append(out, r)
			}
		}
	}
	return out
}

// fineSink registers n probes of package pkg in fine mode and sets a
// loseSink, both undone when the test ends.
func fineSink(t *testing.T, pkg string, n int) ([]Probe, *loseSink) {
	ps := newProbes(t, pkg, n)
	if _, err := AddRule(Rule{Pattern: "execution(* " + pkg + ".*(..))", Mode: "fine"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { SetRules(nil) })
	s := &loseSink{}
	prev := SetSink(s)
	t.Cleanup(func() { SetSink(prev) })
	return ps, s
}

// nest calls probes ps[i:] nested, the innermost calling block.
func nest(ps []Probe, i int, block func()) {
	if i == len(ps) {
		block()
		return
	}
	if c := Enter(&ps[i]); c.On() {
		defer c.Exit(nil)
	}
	nest(ps, i+1, block)
}

// blockedInside starts a goroutine blocked inside nested fine calls of ps
// until release is closed, and returns once it is blocked; done is closed
// when the goroutine has returned.
func blockedInside(ps []Probe) (release, done chan struct{}) {
	release, done = make(chan struct{}), make(chan struct{})
	inside := make(chan struct{})
	go func() {
		defer close(done)
		nest(ps, 0, func() {
			close(inside)
			<-release
		})
	}()
	<-inside
	return release, done
}

// TestOpenCallsWrittenAtClose: a goroutine blocked inside two fine calls
// when the writer closes leaves two records marked unfinished, with the
// close's time as their exit, while another goroutine keeps making fine
// calls (run under -race); the calls' own exits after the close write
// nothing more.
func TestOpenCallsWrittenAtClose(t *testing.T) {
	ps, s := fineSink(t, "test.example/open", 3)

	var busy sync.WaitGroup
	stop := make(chan struct{})
	busy.Add(1)
	go func() { // fine calls all along the close
		defer busy.Done()
		for {
			select {
			case <-stop:
				return
			default:
				call(&ps[2], nil)
			}
		}
	}()
	release, done := blockedInside(ps[:2])
	before := ticksNow()
	if got := closeSink(); got != s {
		t.Fatalf("closeSink returned %v, want the sink that was set", got)
	}
	close(stop)
	busy.Wait()
	close(release)
	<-done

	var open []writer.Record
	for _, r := range s.of(ps[:2]) {
		if r.Flags&writer.FlagUnfinished == 0 {
			t.Errorf("a finished record of probe %d, which had not returned at the close", r.Probe)
			continue
		}
		open = append(open, r)
	}
	if len(open) != 2 {
		t.Fatalf("got %d unfinished records of the blocked calls, want 2: %+v", len(open), open)
	}
	outer, inner := open[0], open[1]
	if outer.ESS != 0 {
		outer, inner = inner, outer
	}
	if outer.Probe != ps[0].id || inner.Probe != ps[1].id || outer.ESS != 0 || inner.ESS != 1 ||
		outer.EOI != 0 || inner.EOI != 1 || outer.Trace != inner.Trace || outer.GID != inner.GID {
		t.Errorf("unfinished records do not form the blocked goroutine's stack: %+v", open)
	}
	for _, r := range open {
		if r.TIn > before || r.TOut < before {
			t.Errorf("record %+v: entry after the close began or exit before it (%d)", r, before)
		}
	}
	for _, d := range []uint32{ps[0].id, ps[1].id} {
		found := false
		for _, def := range s.defs {
			found = found || def.ID == d
		}
		if !found {
			t.Errorf("probe %d has an unfinished record and no definition", d)
		}
	}
	for _, r := range s.of(ps[2:]) {
		if r.Flags&writer.FlagUnfinished != 0 && r.ESS != 0 {
			t.Errorf("busy goroutine's record %+v", r)
		}
	}
}

// TestOpenCallsDeeperThanRingCounted: of a goroutine blocked openRing+4
// calls deep, the innermost openRing calls are written unfinished and the
// other 4 counted as lost.
func TestOpenCallsDeeperThanRingCounted(t *testing.T) {
	ps, s := fineSink(t, "test.example/deep", openRing+4)
	release, done := blockedInside(ps)
	closeSink()
	close(release)
	<-done
	recs := s.of(ps)
	if len(recs) != openRing {
		t.Fatalf("got %d records, want the %d innermost", len(recs), openRing)
	}
	for _, r := range recs {
		if r.ESS < 4 || r.Flags&writer.FlagUnfinished == 0 || r.Probe != ps[r.ESS].id {
			t.Errorf("record %+v: want unfinished at depth 4 or more", r)
		}
	}
	var lost uint64
	for _, l := range s.lost {
		if l.Reason != writer.LossUnfinished {
			t.Errorf("loss for %v, want %v", l.Reason, writer.LossUnfinished)
		}
		lost += l.Count
	}
	if lost != 4 {
		t.Errorf("%d open calls counted lost, want 4", lost)
	}
}

// TestExitWhileClosing: a call that returns while the writer closes is
// written once, as the finished call it is, and not as unfinished.
func TestExitWhileClosing(t *testing.T) {
	ps, s := fineSink(t, "test.example/closing", 2)

	innerDone := make(chan struct{})
	releaseOuter, releaseInner := make(chan struct{}), make(chan struct{})
	inside := make(chan struct{})
	go func() {
		if c := Enter(&ps[0]); c.On() {
			defer c.Exit(nil)
		}
		func() {
			if c := Enter(&ps[1]); c.On() {
				defer c.Exit(nil)
			}
			close(inside)
			<-releaseInner
		}()
		close(innerDone)
		<-releaseOuter
	}()
	<-inside
	// The close's first step: exits now find the closing sink.
	sink.Store(&sinkBox{closing: &closing{s: s}})
	close(releaseInner)
	<-innerDone
	forEachContext(func(ctx *traceCtx) { ctx.writeOpen(s, ticksNow()) })
	SetSink(nil)
	close(releaseOuter)

	recs := s.of(ps)
	if len(recs) != 2 {
		t.Fatalf("got %d records, want 2 (inner finished, outer unfinished): %+v", len(recs), recs)
	}
	for _, r := range recs {
		wantOpen := r.Probe == ps[0].id
		if got := r.Flags&writer.FlagUnfinished != 0; got != wantOpen {
			t.Errorf("record of probe %d (ESS %d): unfinished %v, want %v", r.Probe, r.ESS, got, wantOpen)
		}
	}
}
