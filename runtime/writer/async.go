package writer

import (
	"fmt"
	"github.com/tigrisgo/tigris/runtime/internal/num"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// maxShards bounds the P ids an Async serves from its per-P table; it matches the
// runtime's GOMAXPROCS limit. A P beyond it (not possible today) drops its records.
const maxShards = 1024

// drainBatch is how many records the writer encodes before it frees their slots.
const drainBatch = 512

// shard is one P's single-producer single-consumer ring. The producer is whichever
// goroutine is pinned to the P (procPin makes it the only one); the consumer is the
// writer goroutine.
type shard struct {
	// Read-only after creation.
	mask uint64
	half uint64
	buf  []Record
	_    [24]byte

	head atomic.Uint64 // next slot to fill; stored by the producer
	_    [56]byte
	tail atomic.Uint64 // next slot to drain; stored by the writer
	_    [56]byte

	mu        sync.Mutex // guards lost; taken on the drop path only, never while pinned
	lost      Loss
	dropped   atomic.Uint64 // records dropped here, ever
	harvested uint64        // dropped as of the writer's last look; writer only
}

func newShard(size int) *shard {
	return &shard{mask: uint64(size - 1), half: uint64(size / 2), buf: make([]Record, size)}
}

// Async is the asynchronous writer: producers copy records into a ring owned by their
// P, without locks or allocation, and one writer goroutine encodes them into chunks
// and writes those to the file. See the package documentation for the contract.
type Async struct {
	closed  atomic.Bool
	shards  [maxShards]atomic.Pointer[shard]
	list    atomic.Pointer[[]*shard] // the non-nil shards, for the writer and Stats
	growMu  sync.Mutex
	perP    int
	block   bool
	wake    chan struct{}
	waiters atomic.Int32
	waitMu  sync.Mutex
	waitC   *sync.Cond

	lateDrops atomic.Uint64 // Write after Close
	pending   atomic.Uint64 // records in the chunk under construction

	defMu   sync.Mutex
	newDefs []ProbeDef

	opt      Options
	out      *fileOut // owned by the writer goroutine after NewAsync returns
	flushReq chan chan error
	quit     chan struct{}
	done     chan struct{}
	heads    []uint64 // writer scratch

	closeOnce sync.Once
	closeErr  error
}

// NewAsync creates the file at opt.Path, writes its header and starts the writer
// goroutine. It fails only when the file cannot be created.
func NewAsync(opt Options) (*Async, error) {
	n := runtime.GOMAXPROCS(0)
	w := &Async{
		opt:      opt.withDefaults(),
		perP:     64,
		block:    opt.OnFull == Block,
		wake:     make(chan struct{}, 1),
		flushReq: make(chan chan error),
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	for w.perP*n < w.opt.QueueSize {
		w.perP *= 2
	}
	out, err := newFileOut(&w.opt)
	if err != nil {
		return nil, err
	}
	w.out = out
	w.waitC = sync.NewCond(&w.waitMu)
	list := make([]*shard, 0, n)
	for i := 0; i < n && i < maxShards; i++ {
		s := newShard(w.perP)
		w.shards[i].Store(s)
		list = append(list, s)
	}
	w.list.Store(&list)
	w.opt.report(out.takeReport())
	go w.run()
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

// Write copies *r into the calling P's queue. It never locks, never allocates and,
// under Drop, never waits. It does not retain r.
func (w *Async) Write(r *Record) {
	if w == nil {
		return
	}
	if pid, ok := w.push(r); !ok {
		w.writeSlow(r, pid)
	}
}

// push copies *r into the calling P's queue if the writer is open and the queue has
// room, and wakes the writer goroutine when the queue passes half full.
func (w *Async) push(r *Record) (pid int, ok bool) {
	pid = procPin()
	if uint(pid) < maxShards && !w.closed.Load() {
		if s := w.shards[pid].Load(); s != nil {
			h := s.head.Load()
			if used := h - s.tail.Load(); used <= s.mask {
				s.buf[h&s.mask] = *r
				s.head.Store(h + 1)
				procUnpin()
				if used == s.half {
					w.signal()
				}
				return pid, true
			}
		}
	}
	procUnpin()
	return pid, false
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
			w.waitRoom(s)
		default:
			s.mu.Lock()
			s.lost.add(r.TOut)
			s.dropped.Add(1)
			s.mu.Unlock()
			return // no signal: the writer was woken when the queue passed half full
		}
		var ok bool
		if pid, ok = w.push(r); ok { // on whatever P we are on now
			return
		}
	}
}

// waitRoom blocks until s has room or the writer is closed.
func (w *Async) waitRoom(s *shard) {
	w.waiters.Add(1)
	w.signal()
	w.waitMu.Lock()
	for s.head.Load()-s.tail.Load() > s.mask && !w.closed.Load() {
		w.waitC.Wait()
	}
	w.waitMu.Unlock()
	w.waiters.Add(-1)
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

func (w *Async) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Flush waits until every record written before the call is handed to the operating
// system.
func (w *Async) Flush() error {
	if w == nil {
		return nil
	}
	if w.closed.Load() {
		return ErrClosed
	}
	ack := make(chan error, 1)
	select {
	case w.flushReq <- ack:
	case <-w.done:
		return ErrClosed
	}
	select {
	case err := <-ack:
		return err
	case <-w.done: // the writer stopped while serving the request (fail)
		return ErrClosed
	}
}

// Close drains every queue, writes what is left, closes the file and stops the
// writer goroutine. Producers blocked under Block are released (their records are
// dropped and counted). It is idempotent.
func (w *Async) Close() error {
	if w == nil {
		return nil
	}
	w.closeOnce.Do(func() {
		w.closed.Store(true)
		quiesce() // every Write that saw the writer open has now published its record
		close(w.quit)
		<-w.done
		w.waitMu.Lock()
		w.waitC.Broadcast()
		w.waitMu.Unlock()
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
		st.Dropped += s.dropped.Load()
	}
	st.Queued += w.pending.Load()
	st.Dropped += w.lateDrops.Load()
	w.out.c.fill(&st)
	return st
}

// run is the writer goroutine.
func (w *Async) run() {
	defer close(w.done)
	defer func() {
		if v := recover(); v != nil {
			w.fail(v)
		}
	}()
	tick := time.NewTicker(w.opt.FlushInterval)
	defer tick.Stop()
	for {
		select {
		case <-w.wake:
			w.drain()
		case <-tick.C:
			w.drain()
			w.out.flush()
		case ack := <-w.flushReq:
			w.drain()
			ack <- w.out.flush()
		case <-w.quit:
			for w.pass() > 0 {
			}
			w.closeErr = w.out.close()
			w.pending.Store(0)
			w.opt.report(w.out.takeReport())
			return
		}
		w.pending.Store(w.out.recs)
		w.opt.report(w.out.takeReport())
	}
}

// fail stops the writer after a panic in its goroutine (a bug in tigris). The
// writer closes for producers, so queued and later records are dropped and
// counted instead of blocking a producer under Block or piling up, and Flush
// and Close return at once with the error.
func (w *Async) fail(v any) {
	w.closed.Store(true)
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
	w.waitMu.Lock()
	w.waitC.Broadcast()
	w.waitMu.Unlock()
}

// drain runs passes while they find records, a few at most, so that ticks and flush
// requests are served while producers keep the queues busy.
func (w *Async) drain() {
	for i := 0; i < 4; i++ {
		if w.pass() == 0 {
			return
		}
	}
	w.signal() // more to do: come back after serving the other events
}

// pass drains every queue once, up to the heads it saw at the start. Heads are read
// before the new probe definitions are taken, so a record's definition (Define
// returned before the record's Write) is always encoded before the record.
func (w *Async) pass() int {
	list := *w.list.Load()
	if cap(w.heads) < len(list) {
		w.heads = make([]uint64, len(list))
	}
	heads := w.heads[:len(list)]
	for i, s := range list {
		heads[i] = s.head.Load()
	}
	w.defMu.Lock()
	defs := w.newDefs
	w.newDefs = nil
	w.defMu.Unlock()
	for _, d := range defs {
		w.out.define(d)
	}
	n := 0
	for i, s := range list {
		t, h := s.tail.Load(), heads[i]
		n += int(h - t)
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
	}
	if n > 0 && w.waiters.Load() > 0 {
		w.waitMu.Lock()
		w.waitC.Broadcast()
		w.waitMu.Unlock()
	}
	return n
}
