package live

import (
	"sync"
	"time"

	"github.com/tigrisgo/tigris/runtime/monitor"
)

// Cancelling a query takes a bounded time whatever it is doing. Its loop
// checks for the stop between tuples, and the engine's long loops (a join's
// pairing, a window's groups) every few hundred steps (engine.SetStop); the
// stopped query then gets finalWork to drain what its taps hold and emit
// its open windows, and what does not fit is dropped. Should the loop still
// be busy CancelWait after the cancel (one step of its work taking that
// long), the cancel restores the query's probes itself and answers; the
// loop ends at its next check.
const (
	CancelWait = time.Second
	finalWork  = 200 * time.Millisecond
)

// holds are the taps a query acquired, for a cancel to release them when
// its loop does not in time. Releasing a tap twice is harmless.
type holds struct {
	mu       sync.Mutex
	taps     []*monitor.Tap
	released bool
}

// add records t; after releaseAll, it releases t at once.
func (h *holds) add(t *monitor.Tap) {
	h.mu.Lock()
	if h.released {
		h.mu.Unlock()
		t.Release()
		return
	}
	h.taps = append(h.taps, t)
	h.mu.Unlock()
}

// drop forgets the taps, which the ended loop has released: an ended query
// keeps none (a tap holds its queue).
func (h *holds) drop() {
	h.mu.Lock()
	h.taps, h.released = nil, true
	h.mu.Unlock()
}

func (h *holds) releaseAll() {
	h.mu.Lock()
	taps := h.taps
	h.taps, h.released = nil, true
	h.mu.Unlock()
	for _, t := range taps {
		t.Release()
	}
}

// stopping reports whether the query has been asked to stop.
func (q *Query) stopping() bool {
	select {
	case <-q.stopped:
		return true
	default:
		return false
	}
}

// awaitStop waits until the loop has released everything, or CancelWait;
// then it releases the probes itself.
func (q *Query) awaitStop() {
	t := time.NewTimer(CancelWait)
	defer t.Stop()
	select {
	case <-q.done:
	case <-t.C:
		q.held.releaseAll()
	}
}

// final is a stopped query's last step, within finalWork: half to drain and
// process what its taps hold, half to emit its open windows.
func (l *loop) final(now time.Time) {
	l.halt = within(finalWork / 2)
	l.runner.SetStop(l.halt)
	l.step(now)
	l.runner.SetStop(within(finalWork / 2))
	l.runner.Finish(now.UnixNano())
}

// within is a stop function that says true once d has passed.
func within(d time.Duration) func() bool {
	deadline := time.Now().Add(d)
	return func() bool { return time.Now().After(deadline) }
}
