package writer

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tigrisgo/tigris/runtime/internal/num"
)

// maxShards bounds the P ids an Async serves from its per-P table; it matches the
// runtime's GOMAXPROCS limit. A P beyond it (not possible today) drops its records.
const maxShards = 1024

// drainBatch is how many records the writer encodes before it frees their slots.
const drainBatch = 512

// wakeShare is the share of a queue that must fill before its producer wakes
// the writer goroutine: a quarter, so that three quarters of the queue are
// left to absorb the time the writer takes to get a CPU. On the 2-CPU
// development machine, under load, waking an idle P's thread took 0.1–0.5 ms
// and up to 5 ms; a 32,768-record queue fills in about 1.6 ms at 20 million
// records per second. Waking costs the producer a futex call, a few µs, so
// waking much earlier would cost every record more.
const wakeShare = 4

// shard is one P's single-producer single-consumer ring. The producer is whichever
// goroutine is pinned to the P (procPin makes it the only one); the consumer is
// whoever holds Async.mu.
type shard struct {
	// Read-only after creation.
	mask   uint64
	wakeAt uint64
	buf    []Record
	_      [24]byte

	head atomic.Uint64 // next slot to fill; stored by the producer
	// tailSeen is the tail as the producer last read it. The producer reads
	// the consumer's cache line again only when the queue looks filled to its
	// wake mark by tailSeen, not at every record (that read was a cache miss
	// whenever the writer goroutine drained on another CPU). The real fill
	// is never more than tailSeen says, so below the mark nothing needs the
	// real one, and from the mark on it is read at every record: the wake
	// and the full queue are decided on the real fill, as before.
	// Producer-only.
	tailSeen atomic.Uint64
	_        [48]byte
	tail     atomic.Uint64 // next slot to drain; stored by the consumer
	_        [56]byte

	mu        sync.Mutex // guards lost; taken on the drop path only, never while pinned
	lost      Loss
	dropped   atomic.Uint64 // records dropped here, ever
	harvested uint64        // dropped as of the consumer's last look; under Async.mu
}

func newShard(size int) *shard {
	return &shard{mask: uint64(size - 1), wakeAt: uint64(size / wakeShare), buf: make([]Record, size)}
}

// Async is the asynchronous writer: producers copy records into a ring owned by their
// P, without locks or allocation, and a writer goroutine encodes them into chunks
// and writes those to the file. Under Block a producer whose ring is full does
// the writer's work for its ring itself (an assist) instead of waiting for the
// writer goroutine to be scheduled. See the package documentation for the
// contract.
//
// The writer goroutine lives only while there is work: a producer whose ring
// reaches its wake mark starts one unless one runs, and it exits when the rings
// are drained; the periodic flush runs on a timer (time.AfterFunc). So no
// goroutine of the writer waits between bursts, where a program's own
// goroutine-leak checks (goleak and the like, at the end of a test) would see
// one.
type Async struct {
	closed atomic.Bool
	shards [maxShards]atomic.Pointer[shard]
	list   atomic.Pointer[[]*shard] // the non-nil shards, for the writer and Stats
	growMu sync.Mutex
	perP   int
	block  bool

	// active is set while a writer goroutine runs (or is being started); the
	// producer that sets it starts one.
	active  atomic.Bool
	serveFn func() // w.service, made once: a go statement of it allocates nothing
	ticker  *time.Timer

	// mu makes its holder the consumer of every queue and the owner of out:
	// the writer goroutine, or a producer assisting under Block.
	mu      sync.Mutex
	stopped bool // under mu: the final drain is done, or fail ran; nothing more is drained

	lateDrops atomic.Uint64 // Write after Close, or lost when the writer failed
	pending   atomic.Uint64 // records in the chunk under construction
	assisted  atomic.Uint64 // records producers drained themselves
	wakes     atomic.Uint64 // times a producer woke the writer goroutine

	defMu   sync.Mutex
	newDefs []ProbeDef

	opt   Options
	out   *fileOut // under mu after NewAsync returns
	heads []uint64 // consumer scratch, under mu

	closeOnce sync.Once
	closeErr  error
}

// NewAsync creates the file at opt.Path, writes its header and arms the flush
// timer. It fails only when the file cannot be created.
func NewAsync(opt Options) (*Async, error) {
	n := runtime.GOMAXPROCS(0)
	w := &Async{
		opt:   opt.withDefaults(),
		perP:  64,
		block: opt.OnFull == Block,
	}
	w.serveFn = w.service
	for w.perP*n < w.opt.QueueSize {
		w.perP *= 2
	}
	out, err := newFileOut(&w.opt)
	if err != nil {
		return nil, err
	}
	w.out = out
	list := make([]*shard, 0, n)
	for i := 0; i < n && i < maxShards; i++ {
		s := newShard(w.perP)
		w.shards[i].Store(s)
		list = append(list, s)
	}
	w.list.Store(&list)
	w.opt.report(out.takeReport())
	w.mu.Lock() // tick takes mu: it must see w.ticker set
	w.ticker = time.AfterFunc(w.opt.FlushInterval, w.tick)
	w.mu.Unlock()
	return w, nil
}

// Define announces a probe. It takes a lock; it is meant for probe registration,
// not for the hot path.
func (w *Async) Define(d ProbeDef) {
	if w == nil || w.closed.Load() {
		return
	}
	w.defMu.Lock()
	w.newDefs = append(w.newDefs, d)
	w.defMu.Unlock()
}

// Lose counts calls that never became records as lost: l.Count of them,
// for l.Reason, with l.From and l.To in the records' clock. The count reaches
// the stream as a loss record before the next chunk is written (at the
// latest by Close). The monitor calls it with LossUnfinished while it closes
// the writer; after Close it does nothing.
func (w *Async) Lose(l Loss) {
	if w == nil || w.closed.Load() {
		return
	}
	w.mu.Lock()
	if !w.stopped {
		w.out.loss(l)
	}
	w.mu.Unlock()
}

// Write copies *r into the calling P's queue. It never locks and never allocates
// while the queue has room; when it is full, Drop discards the record and
// Block drains the queue on the caller's time. It does not retain r.
func (w *Async) Write(r *Record) {
	if w == nil {
		return
	}
	if pid, ok := w.push(r); !ok {
		w.writeSlow(r, pid)
	}
}

// push copies *r into the calling P's queue if the writer is open and the queue has
// room, and wakes the writer goroutine when the queue reaches its wake mark.
func (w *Async) push(r *Record) (pid int, ok bool) {
	pid = procPin()
	ok, wake := w.Append(pid, r.Probe, r.Flags, r.EOI, r.ESS, r.Trace, r.GID, r.TIn, r.TOut, r.Size)
	procUnpin()
	if wake {
		w.Wake()
	}
	return pid, ok
}

// Append queues the record whose fields are its arguments (a Record's, in
// order) in the queue of P pid, if the writer is open and the queue has room
// (ok), and reports whether the queue reached its wake mark: the caller then
// calls Wake once it is unpinned (waking may start a goroutine, which a
// pinned goroutine must not). When it fails, Write applies the OnFull
// policy.
//
// It is Write for a producer pinned to P pid already (runtime.procPin): the
// monitor's fine exit pins once for its statistics and the record. The
// fields come in registers and are stored in the queue's slot: a Record
// built by the caller would be stored twice and copied.
func (w *Async) Append(pid int, probe uint32, flags Flags, eoi, ess uint32, trace, gid uint64, tin, tout, size int64) (ok, wake bool) {
	sl, ok := w.Reserve(pid)
	if !ok {
		if sl, wake, ok = w.reserveFromMark(pid); !ok {
			return false, false
		}
	}
	r := sl.R
	r.Probe, r.Flags, r.EOI, r.ESS = probe, flags, eoi, ess
	r.Trace, r.GID, r.TIn, r.TOut, r.Size = trace, gid, tin, tout, size
	sl.Commit()
	return true, wake
}

// reserveFromMark is Reserve where the queue looks filled to its wake mark
// by the tail last seen: it reads the consumer's tail, and refuses the slot
// when the queue is really full (or the writer closed, or the P has no
// queue). wake reports that this record fills the queue exactly to its mark,
// so that one producer wakes the writer once per filling.
func (w *Async) reserveFromMark(pid int) (sl Slot, wake, ok bool) {
	if uint(pid) >= maxShards || w.closed.Load() {
		return Slot{}, false, false
	}
	s := w.shards[pid].Load()
	if s == nil {
		return Slot{}, false, false
	}
	h, seen := s.head.Load(), s.tail.Load()
	setOwn(&s.tailSeen, seen)
	if h-seen > s.mask {
		return Slot{}, false, false
	}
	return Slot{&s.buf[h&s.mask], s, h}, h-seen == s.wakeAt, true
}

// Slot is a record's place in a P's queue, reserved by Reserve: the caller,
// still pinned to that P, sets every field of R and calls Commit once. Only a
// Slot that Reserve returned with ok may be committed.
type Slot struct {
	R *Record
	s *shard
	h uint64
}

// Reserve is Append's common case, small enough to inline into the caller,
// which then stores the record's fields in place (no call, no arguments to
// pass): the slot of the next record in the queue of P pid, when the writer
// is open, the P has a queue and the queue is below its wake mark by the
// tail last seen. Otherwise ok is false and the caller, still pinned, calls
// Append, which reads the real tail and decides the wake and a full queue
// (reserveFromMark).
func (w *Async) Reserve(pid int) (Slot, bool) {
	if uint(pid) < maxShards {
		if s := w.shards[pid].Load(); s != nil && !w.closed.Load() {
			if h := s.head.Load(); h-s.tailSeen.Load() < s.wakeAt {
				return Slot{&s.buf[h&s.mask], s, h}, true
			}
		}
	}
	return Slot{}, false
}

// Commit hands the record in the slot to the writer.
func (sl Slot) Commit() { publish(&sl.s.head, sl.h+1) }

// Wake makes sure the writer goroutine drains the queues (Append asked for it).
func (w *Async) Wake() {
	w.signal()
	w.wakes.Add(1)
}

// writeSlow handles a closed writer, a P without a queue yet, and a full queue.
func (w *Async) writeSlow(r *Record, pid int) {
	for {
		if w.closed.Load() || uint(pid) >= maxShards {
			w.lateDrops.Add(1)
			return
		}
		s := w.shards[pid].Load()
		switch {
		case s == nil:
			w.grow(pid)
		case w.block:
			w.assist(s)
		default:
			s.mu.Lock()
			s.lost.add(r.TOut)
			s.dropped.Add(1)
			s.mu.Unlock()
			return // no signal: the writer was woken when the queue reached its mark
		}
		var ok bool
		if pid, ok = w.push(r); ok { // on whatever P we are on now
			return
		}
	}
}

// assistRecords is how many records an assist drains: room for the
// producer to go on, not the whole ring. The writer goroutine, once it has a
// CPU, drains the rest in parallel with the producer, where a whole-ring
// assist (32,768 records, about 0.8 ms of the producer's time here) left it
// nothing to do; and the call that happens to find the ring full is delayed
// by about 25 µs rather than a millisecond.
const assistRecords = 1024

// assist drains part of s (assistRecords) on the calling producer's time:
// the queue is full and the writer goroutine has not run since it was woken
// (on a busy machine its thread may wait milliseconds for a CPU). It waits
// only for the lock, which is held by a consumer that is making progress. A
// panic inside (a bug in tigris) stops the writer as in the writer
// goroutine, never the program.
func (w *Async) assist(s *shard) {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer func() {
		if v := recover(); v != nil {
			w.failLocked(v)
		}
	}()
	if w.stopped || s.head.Load()-s.tail.Load() <= s.mask {
		return // stopped, or a consumer made room while we waited
	}
	w.out.clock()
	w.takeDefs()
	n := w.drainShard(s, num.Min(s.head.Load(), s.tail.Load()+assistRecords))
	w.assisted.Add(uint64(n))
	w.pending.Store(w.out.recs)
	w.opt.report(w.out.takeReport())
}

func (w *Async) grow(pid int) {
	w.growMu.Lock()
	defer w.growMu.Unlock()
	if w.shards[pid].Load() != nil {
		return
	}
	s := newShard(w.perP)
	old := *w.list.Load()
	list := append(old[:len(old):len(old)], s)
	w.shards[pid].Store(s)
	w.list.Store(&list)
}

// signal makes sure a writer goroutine drains the rings: it starts one unless
// one runs. The go statement calls a func value made once, so it allocates
// nothing (a goroutine's g comes from the scheduler's free list).
func (w *Async) signal() {
	if !w.active.Load() && !w.closed.Load() && w.active.CompareAndSwap(false, true) {
		go w.serveFn()
	}
}

// service is the writer goroutine: it drains until the rings are below their
// wake marks, then exits. A producer that reaches its mark while the goroutine
// is leaving sees active set and starts nothing, so the goroutine looks again
// after clearing it.
func (w *Async) service() {
	for {
		if stopped, more := w.serve(evWake, nil); !stopped && more {
			continue
		}
		w.active.Store(false)
		if w.closed.Load() || !w.backlog() || !w.active.CompareAndSwap(false, true) {
			return
		}
	}
}

// backlog reports whether a ring holds at least its wake mark.
func (w *Async) backlog() bool {
	for _, s := range *w.list.Load() {
		if s.head.Load()-s.tail.Load() >= s.wakeAt {
			return true
		}
	}
	return false
}

// tick is the periodic flush, on the flush timer's goroutine.
func (w *Async) tick() {
	if stopped, more := w.serve(evTick, nil); !stopped && more {
		w.signal()
	}
}

// Flush waits until every record written before the call is handed to the
// operating system. It does the work on the caller's goroutine.
func (w *Async) Flush() error {
	if w == nil {
		return nil
	}
	if w.closed.Load() {
		return ErrClosed
	}
	var err error
	stopped, more := w.serve(evFlush, &err)
	if stopped {
		return ErrClosed
	}
	if more {
		w.signal()
	}
	return err
}

// Close drains every queue, writes what is left, closes the file and stops the
// flush timer; a writer goroutine still running exits without touching the
// file. Records written after Close are dropped and counted. It is idempotent.
func (w *Async) Close() error {
	if w == nil {
		return nil
	}
	w.closeOnce.Do(func() {
		w.closed.Store(true)
		quiesce() // every Write that saw the writer open has now published its record
		w.serve(evQuit, nil)
		if w.opt.OnClose != nil {
			w.opt.OnClose(w.Stats())
		}
	})
	return w.closeErr
}

// Stats returns a snapshot of the writer's counters.
func (w *Async) Stats() Stats {
	if w == nil {
		return Stats{}
	}
	var st Stats
	for _, s := range *w.list.Load() {
		st.Queued += s.head.Load() - s.tail.Load()
		st.QueueFull += s.dropped.Load()
	}
	st.Queued += w.pending.Load()
	st.Late = w.lateDrops.Load()
	st.Dropped += st.QueueFull + st.Late
	st.Assisted = w.assisted.Load()
	st.Wakes = w.wakes.Load()
	w.out.c.fill(&st)
	return st
}

// The writer's events.
const (
	evWake  = iota // a ring reached its wake mark (the writer goroutine)
	evTick         // the flush timer fired
	evFlush        // Flush, on the caller's goroutine
	evQuit         // Close
)

// serve handles one event under mu and reports whether the writer has stopped
// and whether records are left to drain. flushErr receives an evFlush's
// result. A panic inside (a bug in tigris) stops the writer: see failLocked.
func (w *Async) serve(ev int, flushErr *error) (stopped, more bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer func() {
		if v := recover(); v != nil {
			w.failLocked(v)
			stopped, more = true, false
		}
	}()
	if w.stopped {
		return true, false
	}
	switch ev {
	case evWake:
		more = w.drain()
	case evTick:
		more = w.drain()
		w.out.flush()
		w.ticker.Reset(w.opt.FlushInterval)
	case evFlush:
		more = w.drain()
		*flushErr = w.out.flush()
	case evQuit:
		w.ticker.Stop()
		for w.pass() > 0 {
		}
		w.closeErr = w.out.close()
		w.stopped = true
		w.pending.Store(0)
		w.opt.report(w.out.takeReport())
		return true, false
	}
	w.pending.Store(w.out.recs)
	w.opt.report(w.out.takeReport())
	return false, more
}

// failLocked stops the writer after a panic while draining (a bug in tigris),
// with mu held. The writer closes for producers, so queued and later records
// are dropped and counted instead of piling up, and Flush and Close return
// at once with the error.
func (w *Async) failLocked(v any) {
	w.closed.Store(true)
	w.stopped = true
	w.ticker.Stop()
	quiesce() // every Write that saw the writer open has published its record
	// Every record ever queued (the heads count them) was written, dropped on a
	// write error, or is lost now: in a queue or in the unwritten chunk, which
	// may hold part of a batch still in its queue.
	var queued uint64
	for _, s := range *w.list.Load() {
		h := s.head.Load()
		queued += h
		s.tail.Store(h)
	}
	if done := w.out.c.written.Load() + w.out.c.dropped.Load(); queued > done {
		w.lateDrops.Add(queued - done)
	}
	w.out.abandon()
	w.pending.Store(0)
	w.closeErr = fmt.Errorf("trace writer stopped by an internal error: %v", v)
	w.opt.report(w.closeErr)
}

// drain runs passes while they find records, a few at most, so that ticks,
// flushes and assists get the lock while producers keep the queues busy; it
// reports whether the last pass still found records (more to do).
func (w *Async) drain() (more bool) {
	for i := 0; i < 4; i++ {
		if w.pass() == 0 {
			return false
		}
	}
	return true
}

// pass drains every queue once, up to the heads it saw at the start. Heads are read
// before the new probe definitions are taken, so a record's definition (Define
// returned before the record's Write) is always encoded before the record.
func (w *Async) pass() int {
	w.out.clock()
	list := *w.list.Load()
	if cap(w.heads) < len(list) {
		w.heads = make([]uint64, len(list))
	}
	heads := w.heads[:len(list)]
	for i, s := range list {
		heads[i] = s.head.Load()
	}
	w.takeDefs()
	n := 0
	for i, s := range list {
		n += w.drainShard(s, heads[i])
	}
	return n
}

// takeDefs hands the probe definitions announced so far to out.
func (w *Async) takeDefs() {
	w.defMu.Lock()
	defs := w.newDefs
	w.newDefs = nil
	w.defMu.Unlock()
	for _, d := range defs {
		w.out.define(d)
	}
}

// drainShard encodes s's records up to head h (read before takeDefs) and the
// records dropped from it so far, and returns how many records it encoded.
func (w *Async) drainShard(s *shard, h uint64) int {
	t := s.tail.Load()
	n := int(h - t)
	for t < h {
		lo := t & s.mask
		k := num.Min(h-t, num.Min(s.mask+1-lo, drainBatch))
		w.out.records(s.buf[lo : lo+k])
		t += k
		s.tail.Store(t)
		w.pending.Store(w.out.recs)
	}
	if s.dropped.Load() != s.harvested {
		s.mu.Lock()
		l := s.lost
		s.lost = Loss{}
		s.harvested = s.dropped.Load()
		s.mu.Unlock()
		l.Reason = LossQueueFull
		w.out.loss(l)
	}
	return n
}
