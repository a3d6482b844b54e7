package monitor

import (
	"fmt"
	"math"
	"sort"
	"sync/atomic"
	"unsafe"

	"github.com/tigrisgo/tigris/runtime/settings"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// The query layer: what a declarative query (package query, through
// query/live) needs of the probes, and nothing more. A query acquires the
// probes it reads: each gets a floor on its mode (coarse to see durations,
// errors and goroutines; fine for the trace id and depth) and a tap that hands
// the probe's completed calls to the query, filtered at the exit by the
// predicates the query pushed down (a duration range, error and panic
// facts). Floors are reference counts, so queries share probes; they only
// raise a mode: the mode in force is the highest of what the rules, the
// analyzer and the floors ask. Releasing an acquisition lowers the floors
// again, and every probe's mode is then what the other layers say, exactly
// as before the query unless they changed meanwhile.
//
// The hot path pays for taps only on probes that have one: an exit loads
// Probe.taps (on the probe's cache line, beside the mode) and branches.

// CallTuple is one completed call as a tap delivers it.
type CallTuple struct {
	Probe uint32
	Flags TupleFlags
	// Depth is the call's stack depth in its trace (0 at a root), when Traced.
	Depth uint32
	// GID is the goroutine id, 0 where the goroutine cannot be read cheaply.
	GID uint64
	// Trace is the trace id, when Traced.
	Trace uint64
	// Start and End are wall-clock times in Unix nanoseconds, on the same
	// scale as trace files (writer.ClockBase); End-Start is the duration in
	// the records' nanoseconds.
	Start, End int64
	// Remote is the W3C trace id the call's trace joined (JoinContext,
	// JoinRequest), when Joined.
	Remote [16]byte
}

// TupleFlags say how a tapped call ended and which fields are set.
type TupleFlags uint8

const (
	TupleError  TupleFlags = 1 << iota // returned a non-nil error
	TuplePanic                         // ended by panicking
	TupleTraced                        // Trace and Depth are set (the probe ran fine)
	TupleJoined                        // Remote is set: the call's trace joined a request's trace
)

// TapNeed is what a query needs of one probe.
type TapNeed struct {
	// Fine asks for the trace id and depth: the probe runs fine (which also
	// records sampled traces to the trace file, as fine mode always does).
	// Otherwise coarse is enough.
	Fine bool
	// MinNs and MaxNs bound the durations delivered, inclusive; MaxNs 0 means
	// no upper bound. The bounds are applied in the probe's ticks, loosened
	// by tickSlack so that no call inside them is lost to the clock's
	// calibration: the query still applies its exact predicate.
	MinNs, MaxNs int64
	// Require and Forbid are facts a delivered call must and must not have
	// (TupleError, TuplePanic).
	Require, Forbid TupleFlags
}

// tickSlack widens pushed-down duration bounds, as a fraction: the probes
// compare ticks while the bounds are nanoseconds, and the conversion rate is
// refined as the program runs (writer/clock.go, well under 1e-3 after the
// first milliseconds).
const tickSlack = 0.01

// Tap is a query's view of the probes it acquired: their calls, in a bounded
// queue that the query drains. A full queue drops calls and counts them
// (Lost); nothing on the probe path waits for a query. Methods are safe for
// concurrent use; Drain must be called by one goroutine at a time.
type Tap struct {
	ring  tupleRing
	lost  atomic.Uint64
	needs map[uint32]TapNeed
	// released is set once Release ran.
	released atomic.Bool
}

// probeTap is one tap on one probe, with its bounds in ticks.
type probeTap struct {
	t               *Tap
	minT, maxT      int64
	require, forbid TupleFlags
}

// floor is one probe's query floor: how many acquisitions ask for coarse and
// for fine. Guarded by registry.mu.
type floor struct{ coarse, fine int }

// MaxTapQueue is the largest queue a tap may ask for, in calls (64 bytes
// each).
const MaxTapQueue = 1 << 20

// Acquire raises the floors of the probes in needs and, unless tap is false,
// installs a tap on each that delivers their calls into a queue of queue
// calls (rounded up to a power of two). An unknown probe id changes nothing
// and returns an error. The caller must Release the result. Safe for
// concurrent use.
func Acquire(needs map[uint32]TapNeed, queue int, tap bool) (*Tap, error) {
	if queue < 1 || queue > MaxTapQueue {
		return nil, fmt.Errorf("tap queue of %d calls (want 1 to %d)", queue, MaxTapQueue)
	}
	t := &Tap{needs: make(map[uint32]TapNeed, len(needs))}
	if tap {
		t.ring.init(queue)
	}
	for id, n := range needs {
		t.needs[id] = n
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	byID := probesByIDLocked()
	for id := range needs {
		if byID[id] == nil {
			return nil, fmt.Errorf("no probe %d", id)
		}
	}
	if registry.floors == nil {
		registry.floors = map[uint32]*floor{}
	}
	perTick := 1 / writer.NanosPerTick()
	for id, n := range t.needs {
		fl := registry.floors[id]
		if fl == nil {
			fl = &floor{}
			registry.floors[id] = fl
		}
		if n.Fine {
			fl.fine++
		} else {
			fl.coarse++
		}
		if !tap {
			continue
		}
		pt := probeTap{t: t, require: n.Require, forbid: n.Forbid, maxT: math.MaxInt64}
		if n.MinNs > 0 {
			pt.minT = int64(float64(n.MinNs) * perTick * (1 - tickSlack))
		}
		if n.MaxNs > 0 {
			pt.maxT = int64(math.Ceil(float64(n.MaxNs) * perTick * (1 + tickSlack)))
		}
		p := byID[id]
		var next []probeTap
		if old := p.taps.Load(); old != nil {
			next = append(next, *old...)
		}
		next = append(next, pt)
		p.taps.Store(&next)
	}
	reevaluate()
	return t, nil
}

// Release removes the tap and lowers the floors it raised; the probes' modes
// are then what the other layers say. A second Release does nothing.
func (t *Tap) Release() {
	if t == nil || !t.released.CompareAndSwap(false, true) {
		return
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	byID := probesByIDLocked()
	for id, n := range t.needs {
		if fl := registry.floors[id]; fl != nil {
			if n.Fine {
				fl.fine--
			} else {
				fl.coarse--
			}
			if fl.fine <= 0 && fl.coarse <= 0 {
				delete(registry.floors, id)
			}
		}
		p := byID[id]
		if p == nil {
			continue
		}
		old := p.taps.Load()
		if old == nil {
			continue
		}
		var next []probeTap
		for _, pt := range *old {
			if pt.t != t {
				next = append(next, pt)
			}
		}
		if len(next) == 0 {
			p.taps.Store(nil)
		} else {
			p.taps.Store(&next)
		}
	}
	reevaluate()
}

// Lost is how many calls the tap dropped because its queue was full.
func (t *Tap) Lost() uint64 { return t.lost.Load() }

// Drain appends the calls waiting in the queue to dst, at most max of them
// (max ≤ 0: all), with their times converted to wall-clock nanoseconds, and
// returns dst.
func (t *Tap) Drain(dst []CallTuple, max int) []CallTuple {
	base, mono := clockBase()
	for max <= 0 || len(dst) < max {
		c, ok := t.ring.pop()
		if !ok {
			break
		}
		c.Start = base + (writer.TicksToNanos(c.Start) - mono)
		c.End = base + (writer.TicksToNanos(c.End) - mono)
		dst = append(dst, c)
	}
	return dst
}

// clockBase is the wall-clock time (Unix ns) at the monotonic reading mono:
// the program's start, as Started reports it.
func clockBase() (wall, mono int64) { return wallBase.UnixNano(), startNanos }

// probesByIDLocked indexes the probes by id. Called with registry.mu held.
func probesByIDLocked() map[uint32]*Probe {
	m := make(map[uint32]*Probe, len(registry.probes))
	for _, p := range registry.probes {
		m[p.id] = p
	}
	return m
}

// floorOf is the mode the query floors ask of probe id. Called with
// registry.mu held.
func floorOf(id uint32) uint32 {
	fl := registry.floors[id]
	switch {
	case fl == nil:
		return modeOff
	case fl.fine > 0:
		return modeFine
	case fl.coarse > 0:
		return modeCoarse
	}
	return modeOff
}

// Floors lists the probes whose mode a query raises, by id, with the mode
// they ask for.
func Floors() map[uint32]Mode {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	out := make(map[uint32]Mode, len(registry.floors))
	for id := range registry.floors {
		if m := floorOf(id); m != modeOff {
			out[id] = modeName(m)
		}
	}
	return out
}

// ProbeMeta is what a query may know of a probe without running it.
type ProbeMeta struct {
	ID        uint32
	Package   string
	Recv      string
	RecvPtr   bool
	Name      string
	Signature string
	File      string
	Line      int
	Mode      Mode
}

// Catalog lists every probe's metadata, by id.
func Catalog() []ProbeMeta {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	out := make([]ProbeMeta, 0, len(registry.probes))
	for _, p := range registry.probes {
		in := p.info()
		out = append(out, ProbeMeta{
			ID: p.id, Package: in.Package, Recv: in.Recv, RecvPtr: in.RecvPtr, Name: in.Name,
			Signature: in.Signature(), File: in.File, Line: in.Line, Mode: modeName(p.mode.Load()),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// tap hands one call of p to its taps. It is on the exit path of tapped
// probes only; gp is the running g, ctx the trace context of a fine call (nil
// for a coarse one).
//
//go:noinline
//go:norace
func (p *Probe) tap(t0, t1 int64, f callFacts, gp unsafe.Pointer, ctx *traceCtx, depth uint32) {
	taps := p.taps.Load()
	if taps == nil {
		return
	}
	var flags TupleFlags
	if f&callFailed != 0 {
		flags |= TupleError
	}
	if f&callPanicked != 0 {
		flags |= TuplePanic
	}
	d := t1 - t0
	var c CallTuple
	filled := false
	for i := range *taps {
		pt := &(*taps)[i]
		if d < pt.minT || d > pt.maxT || flags&pt.require != pt.require || flags&pt.forbid != 0 {
			continue
		}
		if !filled {
			c = CallTuple{Probe: p.id, Flags: flags, Start: t0, End: t1, GID: goidOf(gp)}
			if ctx != nil {
				c.Flags |= TupleTraced
				c.Trace, c.Depth = ctx.trace, depth
				if id, ok := ctx.remoteTraceID(); ok {
					c.Flags |= TupleJoined
					c.Remote = id
				}
			}
			filled = true
		}
		if !pt.t.ring.push(&c) {
			pt.t.lost.Add(1)
		}
	}
}

// goidOf is the goroutine id of g, read through the calibrated layout; 0
// without it (the portable way parses a stack trace, far too slow for an exit).
func goidOf(gp unsafe.Pointer) uint64 {
	if !glayout.ok {
		return 0
	}
	return *(*uint64)(unsafe.Add(gp, glayout.goid))
}

// tupleRing is a bounded queue of calls with many producers (the exits of
// tapped probes) and one consumer (the query): each slot has a sequence
// number that says whether it is free for the producer at a position or
// filled for the consumer (D. Vyukov's bounded queue). A producer that finds
// the queue full gives up at once.
type tupleRing struct {
	slots []tupleSlot
	mask  uint64
	_     [64]byte
	tail  atomic.Uint64 // next position to fill
	_     [64]byte
	head  uint64 // next position to take; the consumer's alone
}

type tupleSlot struct {
	seq atomic.Uint64
	c   CallTuple
}

func (r *tupleRing) init(n int) {
	size := 1
	for size < n {
		size <<= 1
	}
	r.slots = make([]tupleSlot, size)
	r.mask = uint64(size - 1)
	for i := range r.slots {
		r.slots[i].seq.Store(uint64(i))
	}
}

// push copies c into the queue; false when it is full (or the tap has no
// queue).
func (r *tupleRing) push(c *CallTuple) bool {
	if r.slots == nil {
		return false
	}
	for {
		pos := r.tail.Load()
		s := &r.slots[pos&r.mask]
		switch seq := s.seq.Load(); {
		case seq == pos:
			if r.tail.CompareAndSwap(pos, pos+1) {
				s.c = *c
				s.seq.Store(pos + 1)
				return true
			}
		case int64(seq-pos) < 0:
			return false // the slot still holds a call of the previous lap
		}
	}
}

// pop takes the oldest call; false when there is none.
func (r *tupleRing) pop() (CallTuple, bool) {
	if r.slots == nil {
		return CallTuple{}, false
	}
	s := &r.slots[r.head&r.mask]
	if s.seq.Load() != r.head+1 {
		return CallTuple{}, false
	}
	c := s.c
	s.seq.Store(r.head + r.mask + 1)
	r.head++
	return c, true
}

// QuerySettings returns the queries section of the program's settings, its
// zero fields set to the defaults.
func QuerySettings() settings.Queries {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return registry.cfg.Queries.WithDefaults()
}
