package engine

// A Runner's work per call is not bounded by its input's size: a tuple of a
// window join pairs with every buffered tuple of the other side within the
// window, a window's end emits all its groups. So the loops that do that
// work ask, every stopEvery steps, whether to go on (Runner.SetStop): a
// query being cancelled abandons what it is doing within that many steps.

// stopEvery is how many steps of work (pairs tried, windows folded, groups
// emitted, tuples evicted) go between two calls of the stop function.
const stopEvery = 256

// control is what a Runner's pipelines share to stop early.
type control struct {
	stop  func() bool
	steps uint32
	stats *Stats
	// mem is the bytes the runner holds now, peak the most it held
	// (memory.go).
	mem, peak int64
}

// halt counts a step and says whether to abandon the work under way.
func (c *control) halt() bool {
	if c == nil || c.stop == nil {
		return false
	}
	c.steps++
	if c.steps%stopEvery != 0 || !c.stop() {
		return false
	}
	c.steps-- // ask again at the next step
	c.stats.Abandoned++
	return true
}

// SetStop sets the function the runner's long loops ask, every few hundred
// steps of work, whether to go on; when it says true, the call under way
// (Push, Advance, Running, Finish) returns early and its work is lost:
// pairs not made, windows and groups not emitted (Stats.Abandoned counts
// the times). nil: never stop. stop is called on the runner's goroutine.
func (r *Runner) SetStop(stop func() bool) { r.ctl.stop = stop }
