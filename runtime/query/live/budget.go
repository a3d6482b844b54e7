package live

import (
	"fmt"
	"strconv"
	"time"
)

// What a query costs is measured while it runs, not only estimated before,
// and held to its share:
//
//   - CPU. The query's goroutine runs locked to its own OS thread, and the
//     budget reads that thread's CPU time (clock_gettime of
//     CLOCK_THREAD_CPUTIME_ID) around each step: draining the taps, the
//     engine's work, windows, rows, samplers and trigger actions. Where the
//     system has no such clock (not Linux), it measures the wall time inside
//     the steps, which is never less than their CPU time. To that it adds the
//     part of the work done on the program's goroutines, which is not timed
//     (timing would cost the probe path more than the work): each call its
//     taps delivered or dropped, counted, at the tap's cost measured at the
//     program's first query. The probes a query switches on from off cost
//     their coarse calls to the program; that cost is in EXPLAIN's estimate,
//     not in the measured figure.
//   - Memory. The engine counts the bytes its join buffers and group tables
//     hold (engine.Stats.Memory).
//
// Every budgetPeriod the query's CPU over that period, a share of one core,
// is compared with its share of queries.budget: the budget less what the
// other running queries used in their last period, and never less than an
// equal share (the budget over the number of running queries), so that
// queries each within their share are within the budget together. One step
// may use at most the query's share of a whole period; beyond it the step's
// remaining work is dropped (counted in shed or engine.Stats.Abandoned).
// A query over its share, or whose step was cut, is degraded by the factor
// it was over (a power of two): its join windows first (engine.ShortenJoins,
// down to engine.MinJoinWindow), then by taking one tuple in N of its calls
// sources (up to MaxSampleOneIn). One already degraded that far and still
// over is stopped, with a reason its clients see. A query that uses less
// than a quarter of its share takes twice as many tuples again.
//
// Memory is checked every tick and inside long steps: a query holding more
// than its share of MaxMemory (the same rule) is stopped: what windows and
// groups hold cannot be given back without wrong answers.
const (
	// MaxSampleOneIn is the sparsest a query over its budget is sampled.
	MaxSampleOneIn = 1024
	// DefaultMaxMemory is what the running queries' join buffers and group
	// tables may hold together.
	DefaultMaxMemory = 128 << 20
	// budgetPeriod is how long the CPU is measured before it is checked.
	budgetPeriod = time.Second
)

// meter measures one query's cost and holds it to its share. It is owned
// by the query's goroutine.
type meter struct {
	thread bool      // the clock is the thread's CPU time
	wall0  time.Time // the wall clock's origin otherwise
	tapNs  float64
	budget float64 // queries.budget in force for the query; 0: none
	memory int64   // MaxMemory in force for the query; 0: none

	cpu       time.Duration // all measured so far
	periodAt  time.Time
	periodCPU time.Duration
	share     float64 // the last period's CPU, a share of one core
	drained   uint64  // calls the taps delivered
	pushed    uint64  // calls the engine was given
	// every is how many calls the engine takes between two looks at the
	// step's CPU: 64, or 1 once a step was cut (its calls are dear).
	every int
	// periodDrained, periodPushed and periodPairs are drained, pushed and
	// the join's pairs at the period's start.
	periodDrained, periodPushed, periodPairs uint64
	taken                                    uint64 // calls delivered or dropped, counted so far

	stepAt    time.Duration // the clock at the step's start
	cpuLimit  float64       // the query's share of the budget; 0: none
	stepLimit time.Duration // the most one step may use; 0: none
	memLimit  int64         // the query's share of memory; 0: none
	cutStep   bool          // this step was cut
	cut       bool          // a step was cut this period
	memOver   bool

	oneIn      int      // one tuple in oneIn is taken (1: all)
	skip       []uint64 // per leaf: calls seen, for sampling
	shed       uint64   // calls left out by sampling or a cut
	joinWindow time.Duration
	degraded   string
}

// start readies the meter as the query's loop starts.
func (l *loop) startMeter() {
	l.m.periodAt = time.Now()
	l.limits()
}

func (m *meter) init(leaves int, budget float64, memory int64) {
	_, m.thread = threadCPU()
	m.wall0 = time.Now()
	m.tapNs = measured().tapNs
	m.budget, m.memory = budget, memory
	m.oneIn, m.every = 1, 64
	m.skip = make([]uint64, leaves)
}

// clock reads the thread's CPU time, or the wall clock.
func (m *meter) clock() time.Duration {
	if m.thread {
		d, _ := threadCPU()
		return d
	}
	return time.Since(m.wall0)
}

// take says whether the query takes the next call of leaf i, and counts
// the calls left out.
func (m *meter) take(i int) bool {
	if m.oneIn <= 1 {
		return true
	}
	m.skip[i]++
	if m.skip[i]%uint64(m.oneIn) == 0 {
		return true
	}
	m.shed++
	return false
}

// over is asked inside a step's long loops: true when the step has used
// its CPU or the query holds more memory than its share.
func (l *loop) over() bool {
	m := &l.m
	if m.cutStep {
		return true
	}
	if m.stepLimit > 0 && m.clock()-m.stepAt > m.stepLimit {
		m.cutStep, m.cut = true, true
		return true
	}
	if m.memLimit > 0 && l.runner.Stats().Memory > m.memLimit {
		m.cutStep, m.memOver = true, true
		return true
	}
	return false
}

// measuredStep runs one step and counts what it cost.
func (l *loop) measuredStep(now time.Time) {
	m := &l.m
	m.cutStep = false
	m.stepAt = m.clock()
	if m.cpuLimit > 0 {
		// What is left of the period's share; once it is spent, a step
		// drains its taps and stops at its first call.
		m.stepLimit = time.Duration(m.cpuLimit*float64(budgetPeriod)) - m.periodCPU
		if m.stepLimit <= 0 {
			m.stepLimit = 1
		}
	}
	l.step(now)
	d := m.clock() - m.stepAt
	taken := m.drained
	for _, t := range l.taps {
		if t != nil {
			taken += t.Lost()
		}
	}
	d += time.Duration(float64(taken-m.taken) * m.tapNs)
	m.taken = taken
	m.cpu += d
	m.periodCPU += d
}

// checkBudget holds the query to its shares after a step: "" to go on,
// else why it stops.
func (l *loop) checkBudget(now time.Time) string {
	m := &l.m
	if m.memOver || (m.memLimit > 0 && l.runner.Stats().Memory > m.memLimit) {
		st := l.runner.Stats()
		return fmt.Sprintf("stopped over its memory: its windows, join buffers and group tables held %s, over its share of what the running queries may hold, %s of %s: narrow WHERE, group by fewer values or shorten its windows",
			bytesText(st.MemoryPeak), bytesText(m.memLimit), bytesText(m.memory))
	}
	el := now.Sub(m.periodAt)
	if el < budgetPeriod {
		return ""
	}
	share := float64(m.periodCPU) / float64(el)
	cut := m.cut
	// What the query would have used without cuts: its share times the
	// calls drained over those the engine was given.
	want := share
	if d, p := m.drained-m.periodDrained, m.pushed-m.periodPushed; cut && p > 0 && d > p {
		want *= float64(d) / float64(p)
	}
	pairs := l.runner.Stats().JoinPairs
	// A join's window is cut when its pairs are most of its work, more
	// than the calls it was given.
	joinBound := pairs-m.periodPairs > m.pushed-m.periodPushed
	m.periodAt, m.periodCPU, m.share, m.cut = now, 0, share, false
	m.periodDrained, m.periodPushed, m.periodPairs = m.drained, m.pushed, pairs
	limit := l.limits()
	if limit <= 0 {
		return ""
	}
	if share <= limit && !cut {
		if share < limit/4 && m.oneIn > 1 {
			m.oneIn /= 2
		}
		return ""
	}
	if cut {
		m.every = 1
	}
	factor := 2
	for float64(factor) < want/limit && factor < 1<<30 {
		factor *= 2
	}
	over := fmt.Sprintf("it used %s of one core in the last %s, over its share of queries.budget, %s", percent(share), el.Round(time.Millisecond), percent(limit))
	if cut {
		over += " (a step was cut at its share of a second)"
	}
	if joinBound {
		before := m.joinWindow
		if before == 0 {
			before = l.q.plan.Query.Join.Within
		}
		if w, ok := l.runner.ShortenJoins(int64(factor)); ok {
			m.joinWindow = w
			m.degraded = over + ": its join window cut to " + w.String()
			// What the window's floor left of the factor goes to sampling.
			if factor /= int(before / w); factor < 2 {
				return ""
			}
		}
	}
	if m.oneIn < MaxSampleOneIn {
		m.oneIn *= factor
		if m.oneIn > MaxSampleOneIn {
			m.oneIn = MaxSampleOneIn
		}
		if m.joinWindow > 0 {
			over += ": its join window cut to " + m.joinWindow.String() + " and"
		} else {
			over += ":"
		}
		m.degraded = over + " taking one call in " + strconv.Itoa(m.oneIn)
		return ""
	}
	how := "taking one call in " + strconv.Itoa(m.oneIn)
	if m.joinWindow > 0 {
		how += " and its join window cut to " + m.joinWindow.String()
	}
	return "stopped over budget: " + over + ", while " + how + ": narrow WHERE or push down a duration bound"
}

// limits sets the query's limits from the registry: its share of the CPU
// budget (returned; 0 for none) and of memory.
func (l *loop) limits() float64 {
	m := &l.m
	m.cpuLimit, m.memLimit = l.q.reg.shares(l.q, m.budget, m.memory)
	return m.cpuLimit
}

// shares are query q's shares: of budget (a share of one core; 0 for none)
// and of memory bytes (0 for none). Each is the whole less what the other
// running queries used (CPU in their last period, memory now), and at least
// the whole over the number of running queries.
func (r *Registry) shares(q *Query, budget float64, memory int64) (cpu float64, mem int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.running)
	if r.running[q.ID] != q {
		n++
	}
	var otherCPU float64
	var otherMem int64
	for _, o := range r.running {
		if o == q {
			continue
		}
		o.mu.Lock()
		otherCPU += o.stats.CPUShare
		otherMem += o.stats.Memory
		o.mu.Unlock()
	}
	if budget > 0 {
		cpu = budget / float64(n)
		if rest := budget - otherCPU; rest > cpu {
			cpu = rest
		}
	}
	if memory > 0 {
		mem = memory / int64(n)
		if rest := memory - otherMem; rest > mem {
			mem = rest
		}
	}
	return cpu, mem
}

// Usage is what the running queries use together, measured.
type Usage struct {
	// CPU is their CPU in their last period (a second), a share of one
	// core; Memory the bytes their windows, join buffers and group tables
	// hold now.
	CPU    float64 `json:"cpu"`
	Memory int64   `json:"memory"`
}

// Usage sums what the running queries use.
func (r *Registry) Usage() Usage {
	r.mu.Lock()
	defer r.mu.Unlock()
	var u Usage
	for _, q := range r.running {
		q.mu.Lock()
		u.CPU += q.stats.CPUShare
		u.Memory += q.stats.Memory
		q.mu.Unlock()
	}
	return u
}

// bytesText writes n bytes for people: 70.1 MB.
func bytesText(n int64) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
