package writer

import (
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
	mu       sync.Mutex
	out      *fileOut
	closed   bool
	closeErr error
	timer    *time.Timer
	late     atomic.Uint64 // Write after Close
	opt      Options
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
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.out.flush()
	err := s.out.takeReport()
	s.timer.Reset(s.opt.FlushInterval)
	s.mu.Unlock()
	s.opt.report(err)
}

// Define announces a probe.
func (s *Sync) Define(d ProbeDef) {
	if s == nil {
		return
	}
	s.mu.Lock()
	if !s.closed {
		s.out.define(d)
	}
	s.mu.Unlock()
}

// Write encodes *r; it does not retain r. It allocates nothing; it may write to the
// file on the caller's time.
func (s *Sync) Write(r *Record) {
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.late.Add(1)
		return
	}
	s.out.record(r)
	if s.out.report == nil {
		s.mu.Unlock()
		return
	}
	err := s.out.takeReport()
	s.mu.Unlock()
	s.opt.report(err)
}

// Flush writes the current chunk.
func (s *Sync) Flush() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	err := s.out.flush()
	rep := s.out.takeReport()
	s.mu.Unlock()
	s.opt.report(rep)
	return err
}

// Close flushes and closes the file. It is idempotent.
func (s *Sync) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return s.closeErr
	}
	s.closed = true
	s.timer.Stop()
	s.closeErr = s.out.close()
	rep := s.out.takeReport()
	s.mu.Unlock()
	s.opt.report(rep)
	return s.closeErr
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
	st.Dropped += s.late.Load()
	return st
}
