package writer

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Sync is the synchronous writer: Write encodes the record into the current chunk
// under a lock, and the Write that fills the chunk also writes it to the file. There
// is no queue and no writer goroutine, so nothing is dropped for lack of room; the
// cost is a lock per record and an occasional write on the producer's time. Kieker
// measured the synchronous writer as the better choice on a single core.
type Sync struct {
	mu        sync.Mutex
	out       *fileOut
	closed    bool
	closeErr  error
	timer     *time.Timer
	late      atomic.Uint64 // Write after Close
	rep       error         // for OnError once s.mu is released (guarded)
	opt       Options
	closeOnce sync.Once // OnClose
}

// NewSync creates the file at opt.Path and writes its header. It fails only when the
// file cannot be created. QueueSize and OnFull do not apply.
func NewSync(opt Options) (*Sync, error) {
	s := &Sync{opt: opt.withDefaults()}
	out, err := newFileOut(&s.opt)
	if err != nil {
		return nil, err
	}
	s.out = out
	s.opt.report(out.takeReport())
	s.timer = time.AfterFunc(s.opt.FlushInterval, s.tick)
	return s, nil
}

// tick flushes every FlushInterval (on a timer goroutine).
func (s *Sync) tick() {
	s.guarded(func() {
		if s.closed {
			return
		}
		s.out.clock()
		s.out.flush()
		s.rep = s.out.takeReport()
		s.timer.Reset(s.opt.FlushInterval)
	})
}

// guarded runs f under s.mu and then reports s.rep. A panic in f (a bug in
// tigris; f runs on the instrumented program's goroutine or the flush timer's)
// stops there: it closes the writer, so later records are counted as dropped,
// is reported, and never reaches the caller or leaves s.mu locked. f does not
// escape, so Write stays free of allocations.
func (s *Sync) guarded(f func()) {
	s.mu.Lock()
	defer func() {
		if v := recover(); v != nil {
			s.closed = true
			s.timer.Stop()
			s.out.c.dropped.Add(s.out.recs) // the unwritten chunk; nothing else is held
			s.out.abandon()
			s.closeErr = fmt.Errorf("trace writer stopped by an internal error: %v", v)
			s.rep = s.closeErr
		}
		rep := s.rep
		s.rep = nil
		s.mu.Unlock()
		s.opt.report(rep)
	}()
	f()
}

// Define announces a probe.
func (s *Sync) Define(d ProbeDef) {
	if s == nil {
		return
	}
	s.guarded(func() {
		if !s.closed {
			s.out.define(d)
		}
	})
}

// Lose counts calls that never became records as lost (see Async.Lose).
func (s *Sync) Lose(l Loss) {
	if s == nil {
		return
	}
	s.guarded(func() {
		if !s.closed {
			s.out.loss(l)
		}
	})
}

// Write encodes *r; it does not retain r. It allocates nothing; it may write to the
// file on the caller's time.
func (s *Sync) Write(r *Record) {
	if s == nil {
		return
	}
	s.guarded(func() {
		if s.closed {
			s.late.Add(1)
			return
		}
		s.out.record(r)
		if s.out.report != nil {
			s.rep = s.out.takeReport()
		}
	})
}

// Flush writes the current chunk.
func (s *Sync) Flush() (err error) {
	if s == nil {
		return nil
	}
	s.guarded(func() {
		if s.closed {
			err = ErrClosed
			return
		}
		err = s.out.flush()
		s.rep = s.out.takeReport()
	})
	return err
}

// Close flushes and closes the file. It is idempotent.
func (s *Sync) Close() (err error) {
	if s == nil {
		return nil
	}
	s.guarded(func() {
		if !s.closed {
			s.closed = true
			s.timer.Stop()
			s.closeErr = s.out.close()
			s.rep = s.out.takeReport()
		}
		err = s.closeErr
	})
	if s.opt.OnClose != nil {
		s.closeOnce.Do(func() { s.opt.OnClose(s.Stats()) })
	}
	return err
}

// Stats returns a snapshot of the writer's counters. It takes the writer's lock, so it
// waits while a Write is writing a chunk.
func (s *Sync) Stats() Stats {
	if s == nil {
		return Stats{}
	}
	var st Stats
	s.mu.Lock()
	st.Queued = s.out.recs
	s.out.c.fill(&st)
	s.mu.Unlock()
	st.Late = s.late.Load()
	st.Dropped += st.Late
	return st
}
