package live

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/query"
	"github.com/tigrisgo/tigris/runtime/query/engine"
	"github.com/tigrisgo/tigris/runtime/tracecontext"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// Query is one running (or ended) query or trigger of the program.
type Query struct {
	ID       int
	Text     string
	Detached bool
	Started  time.Time
	// plan is nil once the query has ended (forget): sum is what it keeps.
	plan *engine.Plan
	sum  summary
	res  *results
	reg  *Registry

	stopOnce sync.Once
	stopped  chan struct{} // closed to stop the loop
	done     chan struct{} // closed when the loop has released everything
	held     holds         // what it acquired, for a cancel to release (cancel.go)

	mu     sync.Mutex
	state  string // "running", "ended"
	reason string
	ended  time.Time // when it ended: the time its last windows were cut at
	stats  Stats
}

// Stats count a query's work and losses.
type Stats struct {
	engine.Stats
	// Lost are calls its taps dropped because their queues were full.
	Lost uint64 `json:"lost"`
	// Fired counts a trigger's firings, Suppressed those not shown (at most
	// one row a second per trigger) and SnapshotsSkipped snapshots not taken
	// (at most one per SnapshotGap).
	Fired            uint64 `json:"fired"`
	Suppressed       uint64 `json:"suppressed"`
	SnapshotsSkipped uint64 `json:"snapshotsSkipped"`
	// CPU is the CPU time the query used so far, measured, and CPUShare
	// its CPU in the last second, a share of one core (budget.go).
	CPU      time.Duration `json:"cpuNs"`
	CPUShare float64       `json:"cpuShare"`
	// SampleOneIn is set while a query over its budget takes one call in N
	// of its calls sources; Shed counts the calls it left out (sampled, or
	// dropped when a step was cut). JoinWindow is its join window once cut
	// (0: as written). Degraded says why it was last degraded.
	SampleOneIn int           `json:"sampleOneIn,omitempty"`
	Shed        uint64        `json:"shed,omitempty"`
	JoinWindow  time.Duration `json:"joinWindowNs,omitempty"`
	Degraded    string        `json:"degraded,omitempty"`
}

// Info describes a query for listings.
type Info struct {
	ID       int       `json:"id"`
	Kind     string    `json:"kind"`
	Text     string    `json:"text"`
	Detached bool      `json:"detached"`
	Started  time.Time `json:"started"`
	State    string    `json:"state"`
	Reason   string    `json:"reason,omitempty"`
	// Ended is when an ended query ended (its open windows were cut then).
	Ended    *time.Time `json:"ended,omitempty"`
	Probes   int        `json:"probes"`
	Samplers int        `json:"samplers"`
	Stats    Stats      `json:"stats"`
}

// Info describes q now.
func (q *Query) Info() Info {
	q.mu.Lock()
	defer q.mu.Unlock()
	in := Info{ID: q.ID, Kind: kindName(q.sum.kind), Text: q.Text, Detached: q.Detached, Started: q.Started,
		State: q.state, Reason: q.reason, Probes: q.sum.probes, Samplers: q.sum.samplers, Stats: q.stats}
	if q.state == "ended" {
		at := q.ended.UTC()
		in.Ended = &at
	}
	return in
}

func kindName(k query.Kind) string {
	if k == query.KindTrigger {
		return "trigger"
	}
	return "select"
}

// Plan returns the query's plan; nil once it has ended (Explain and
// Columns still say what it was).
func (q *Query) Plan() *engine.Plan {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.plan
}

// Schemas returns the shapes of the query's rows so far.
func (q *Query) Schemas() []query.Schema { return q.res.Schemas() }

// Done is closed when the query has ended and released what it acquired.
func (q *Query) Done() <-chan struct{} { return q.done }

// stop ends the query with reason and waits until it released everything.
func (q *Query) stop(reason string) {
	q.stopOnce.Do(func() {
		q.mu.Lock()
		if q.reason == "" {
			q.reason = reason
		}
		q.mu.Unlock()
		close(q.stopped)
	})
	q.awaitStop()
}

// Cancel stops the query and returns once its probes are restored: within
// CancelWait, whatever the query is doing (cancel.go). Its end reason is
// "cancelled".
func (q *Query) Cancel() { q.stop("cancelled") }

// End stops the query like Cancel with the reason its client gives, e.g.
// "ended after 10s (--for)" or "ended by an interrupt": a query its own
// client ends was not cancelled by someone else. An empty reason is
// "cancelled".
func (q *Query) End(reason string) {
	if reason == "" {
		reason = "cancelled"
	}
	q.stop(reason)
}

// SnapshotGap is the shortest time between two snapshots of one trigger;
// SnapshotBytes the most a snapshot copies of the trace file.
const (
	SnapshotGap   = 10 * time.Second
	SnapshotBytes = 4 << 20
)

// firedGap is the shortest time between two rows of one trigger's firings.
const firedGap = time.Second

// start acquires what the plan needs and starts the query's loop.
func start(r *Registry, id int, p *engine.Plan, cat *catalog, detach bool, opts Options) (*Query, error) {
	q := &Query{ID: id, Text: p.Query.Text, Detached: detach, Started: time.Now(), plan: p, sum: summarize(p), reg: r,
		stopped: make(chan struct{}), done: make(chan struct{}), state: "running"}
	q.res = newResults(opts.Rows, query.Schema{Name: "rows", Columns: p.Query.Schema})
	l := &loop{q: q, cat: cat, opts: opts}
	if err := l.acquire(); err != nil {
		l.release()
		return nil, err
	}
	go l.run()
	return q, nil
}

// loop is the state of a running query, owned by its goroutine.
type loop struct {
	q        *Query
	cat      *catalog
	opts     Options
	runner   *engine.Runner
	taps     []*monitor.Tap // per leaf; nil for samplers
	samplers []*sampler     // per leaf; nil for calls sources
	due      []time.Time    // per sampler leaf: next reading
	actions  []*action
	buf      []monitor.CallTuple
	// joined and joinedID are the last W3C trace id a tuple carried and its
	// text: the calls of one trace come together, and share one string.
	joined   [16]byte
	joinedID string
	// lastRunning is when rows of a windowless aggregate were last shown,
	// and tuplesAt the tuple count then.
	lastRunning time.Time
	tuplesAt    uint64
	lastFired   time.Time
	// out counts what the query leaves out, for its readers (dropped.go).
	out leftOut
	// delay is the longest a tuple took from its call's end to this query,
	// decaying by a tenth each tick: under load a producer may be descheduled
	// between the call's end and handing over the tuple, and the watermark
	// waits twice that long (at most maxLateness) so its window is not
	// closed without it.
	delay time.Duration
	// halt says whether to drop the work in hand: the query is stopping,
	// its last step is out of time, or its step is over its budget.
	halt func() bool
	// m measures what the query costs and holds it to its share.
	m meter
}

// maxLateness bounds how long a window waits for late tuples.
const maxLateness = 10 * time.Second

// action is the state of one trigger action.
type action struct {
	spec     *query.ActionSpec
	probes   []*engine.Probe
	hold     *monitor.Tap // FINE: the fine floor while it holds
	until    time.Time
	sampler  *sampler
	schema   int
	due      time.Time
	lastSnap time.Time
}

func (l *loop) acquire() error {
	p := l.q.plan
	l.taps = make([]*monitor.Tap, len(p.Leaves))
	l.samplers = make([]*sampler, len(p.Leaves))
	l.due = make([]time.Time, len(p.Leaves))
	now := time.Now()
	for i, leaf := range p.Leaves {
		if leaf.Every > 0 {
			l.samplers[i] = newSampler(leaf.Stream)
			l.due[i] = now.Add(leaf.Every)
			continue
		}
		if len(leaf.Probes) == 0 {
			continue
		}
		needs := make(map[uint32]monitor.TapNeed, len(leaf.Probes))
		for _, n := range leaf.Probes {
			needs[n.Probe.ID] = monitor.TapNeed{Fine: n.Fine, MinNs: n.MinNs, MaxNs: n.MaxNs,
				Require: tupleFlags(n.Require), Forbid: tupleFlags(n.Forbid)}
		}
		t, err := monitor.Acquire(needs, l.opts.Queue, true)
		if err != nil {
			return fmt.Errorf("acquiring the probes of %s: %w", leaf.Path, err)
		}
		l.taps[i] = t
		l.q.held.add(t)
	}
	for i, a := range p.Query.Actions {
		act := &action{spec: a, probes: p.Actions[i]}
		if a.Sample != nil {
			act.schema = l.q.res.schema(query.Schema{Name: "sample " + a.Sample.Name, Columns: append([]query.Column{{Name: "trigger", Type: query.String}}, a.Sample.Columns...)})
		}
		l.actions = append(l.actions, act)
	}
	if len(l.actions) > 0 {
		l.q.res.schema(actionSchema)
	}
	l.runner = engine.NewRunner(p, l.emit)
	l.m.init(len(p.Leaves), l.opts.Limits.Budget, l.opts.MaxMemory)
	if l.opts.oneIn > 1 {
		l.m.oneIn = l.opts.oneIn
	}
	l.out.init(p.Query, now)
	l.halt = func() bool { return l.q.stopping() || l.over() }
	l.runner.SetStop(l.halt)
	return nil
}

// actionSchema is the shape of the rows that report what a trigger's actions
// did.
var actionSchema = query.Schema{Name: "actions", Columns: []query.Column{
	{Name: "trigger", Type: query.String}, {Name: "action", Type: query.String}, {Name: "result", Type: query.String},
}}

func tupleFlags(f engine.CallFlags) monitor.TupleFlags {
	var t monitor.TupleFlags
	if f&engine.CallError != 0 {
		t |= monitor.TupleError
	}
	if f&engine.CallPanic != 0 {
		t |= monitor.TuplePanic
	}
	return t
}

// release gives back every probe and sampler.
func (l *loop) release() {
	for _, t := range l.taps {
		t.Release()
	}
	for _, a := range l.actions {
		if a.hold != nil {
			a.hold.Release()
			a.hold = nil
		}
	}
}

func (l *loop) run() {
	// The query's work runs on a thread of its own, whose CPU time is the
	// query's (budget.go).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	q := l.q
	reason := ""
	var ended time.Time
	defer func() {
		if v := recover(); v != nil {
			reason = fmt.Sprintf("internal error: %v", v)
			fmt.Fprintf(os.Stderr, "tigris: query %d: internal error: %v\n%s", q.ID, v, debug.Stack())
		}
		l.release()
		q.mu.Lock()
		if q.reason == "" {
			q.reason = reason
		}
		q.state = "ended"
		if ended.IsZero() {
			ended = time.Now()
		}
		q.ended = ended
		final := q.reason
		q.mu.Unlock()
		q.res.end(final)
		q.reg.endQuery(q)
		q.forget()
		close(q.done)
	}()
	l.startMeter()
	tick := time.NewTicker(l.opts.Tick)
	defer tick.Stop()
	for {
		select {
		case <-q.stopped:
			ended = time.Now()
			l.final(ended)
			l.endCounts(ended)
			l.publish()
			return
		case now := <-tick.C:
			l.measuredStep(now)
			if l.runner.Done() {
				reason, ended = fmt.Sprintf("LIMIT %d reached", q.plan.Query.Limit), now
				l.endCounts(now)
				l.publish()
				return
			}
			if why := l.checkBudget(now); why != "" {
				reason, ended = why, now
				l.runner.SetStop(within(finalWork / 2))
				l.runner.Finish(now.UnixNano())
				l.endCounts(now)
				l.publish()
				return
			}
		}
	}
}

// step drains the taps, takes the due readings, runs trigger actions and
// advances the watermark to now minus the lateness.
func (l *loop) step(now time.Time) {
	cut := false
	taken := 0
	l.countLost(now)
	l.out.now = now.UnixNano()
	switch {
	case l.q.stopping():
		l.out.why = whyEnding
	case l.m.degraded != "":
		l.out.why = l.m.degraded
	case l.m.oneIn > 1:
		l.out.why = "taking one call in " + strconv.Itoa(l.m.oneIn)
	default:
		l.out.why = whyCut
	}
	for i, t := range l.taps {
		if t == nil || cut {
			continue
		}
		l.buf = t.Drain(l.buf[:0], 0)
		l.m.drained += uint64(len(l.buf))
		for k, c := range l.buf {
			if d := time.Duration(now.UnixNano() - c.End); d > l.delay {
				l.delay = d
			}
			if !l.m.take(i) {
				l.shed(c.End)
				continue
			}
			// A look at the clock after the first calls of a step, then
			// every l.m.every: a dear call is found out early.
			if taken++; (taken&(taken-1) == 0 || taken%l.m.every == 0) && l.halt() {
				// The rest is dropped: the query is ending, or its step is
				// over its budget.
				l.m.shed += uint64(len(l.buf) - k)
				for _, c := range l.buf[k:] {
					l.shed(c.End)
				}
				cut = true
				break
			}
			l.m.pushed++
			pr := l.cat.byID[c.Probe]
			if pr == nil {
				continue
			}
			tu := engine.Tuple{Time: c.End, Call: engine.Call{Probe: pr, Start: c.Start, End: c.End, GID: c.GID, Trace: c.Trace, Depth: c.Depth}}
			if c.Flags&monitor.TupleError != 0 {
				tu.Call.Flags |= engine.CallError
			}
			if c.Flags&monitor.TuplePanic != 0 {
				tu.Call.Flags |= engine.CallPanic
			}
			if c.Flags&monitor.TupleTraced != 0 {
				tu.Call.Flags |= engine.CallTraced
			}
			if c.Flags&monitor.TupleJoined != 0 {
				if c.Remote != l.joined {
					l.joined, l.joinedID = c.Remote, tracecontext.FormatTraceID(c.Remote)
				}
				tu.Call.TraceID = l.joinedID
			}
			l.runner.Push(i, &tu)
			if l.runner.Done() {
				break
			}
		}
	}
	for i, s := range l.samplers {
		if s == nil || now.Before(l.due[i]) {
			continue
		}
		every := l.q.plan.Leaves[i].Every
		for !l.due[i].After(now) {
			l.due[i] = l.due[i].Add(every)
		}
		vals := s.read(now)
		l.runner.Push(i, &engine.Tuple{Time: now.UnixNano(), Vals: vals})
	}
	l.actionsStep(now)
	l.sayDrops(now)
	if cut {
		// Windows wait for the next step, with its own time: a cut step
		// would abandon them.
		l.publish()
		return
	}
	late := l.opts.Lateness
	if 2*l.delay > late {
		late = 2 * l.delay
	}
	if late > maxLateness {
		late = maxLateness
	}
	l.delay -= l.delay / 10
	l.runner.Advance(now.Add(-late).UnixNano())
	l.countsOut(now, now.Add(-late).UnixNano(), false)
	if st := l.runner.Stats(); st.Tuples != l.tuplesAt && now.Sub(l.lastRunning) >= time.Second {
		l.runner.Running(now.UnixNano())
		l.lastRunning, l.tuplesAt = now, st.Tuples
	}
	l.publish()
}

// publish copies the counters for Info.
func (l *loop) publish() {
	m := &l.m
	// Lost is what the counts of the stream say (dropped.go): the calls
	// the taps lost up to the query's last look.
	st := Stats{Stats: l.runner.Stats(), CPU: m.cpu, CPUShare: m.share, Shed: m.shed, JoinWindow: m.joinWindow, Degraded: m.degraded, Lost: l.out.lostSeen}
	if m.oneIn > 1 {
		st.SampleOneIn = m.oneIn
	}
	l.q.mu.Lock()
	st.Fired, st.Suppressed, st.SnapshotsSkipped = l.q.stats.Fired, l.q.stats.Suppressed, l.q.stats.SnapshotsSkipped
	l.q.stats = st
	l.q.mu.Unlock()
}

// emit takes the runner's rows: a query's rows go to its readers; a
// trigger's firing runs its actions.
func (l *loop) emit(r engine.Row) {
	if l.q.plan.Query.Kind != query.KindTrigger {
		l.q.res.add(0, r.Time, r.Vals)
		return
	}
	now := time.Now()
	l.q.mu.Lock()
	l.q.stats.Fired++
	show := now.Sub(l.lastFired) >= firedGap
	if !show {
		l.q.stats.Suppressed++
	}
	l.q.mu.Unlock()
	if show {
		l.lastFired = now
		l.q.res.add(0, r.Time, r.Vals)
	}
	for _, a := range l.actions {
		l.fire(a, now)
	}
}

// fire runs one action of a trigger that fired at now.
func (l *loop) fire(a *action, now time.Time) {
	name := l.q.plan.Query.Name
	report := func(result string) {
		l.q.res.add(l.q.res.schema(actionSchema), now.UnixNano(), []query.Value{
			query.StringValue(name), query.StringValue(a.spec.Text), query.StringValue(result)})
	}
	switch {
	case a.spec.Pointcut != nil:
		extended := a.hold != nil
		a.until = now.Add(a.spec.For)
		if extended {
			return
		}
		needs := map[uint32]monitor.TapNeed{}
		for _, p := range a.probes {
			needs[p.ID] = monitor.TapNeed{Fine: true}
		}
		if len(needs) == 0 {
			report("matches no probe")
			return
		}
		h, err := monitor.Acquire(needs, 1, false)
		if err != nil {
			report("not switched: " + err.Error())
			return
		}
		a.hold = h
		l.q.held.add(h)
		report(fmt.Sprintf("%d probe(s) fine until %s", len(needs), a.until.UTC().Format("15:04:05")))
	case a.spec.Sample != nil:
		if a.sampler == nil {
			a.sampler = newSampler(a.spec.Sample)
			a.due = now.Add(a.spec.Every)
			report(fmt.Sprintf("sampling until %s", now.Add(a.spec.For).UTC().Format("15:04:05")))
		}
		a.until = now.Add(a.spec.For)
	case a.spec.Snapshot:
		if !a.lastSnap.IsZero() && now.Sub(a.lastSnap) < SnapshotGap {
			l.q.mu.Lock()
			l.q.stats.SnapshotsSkipped++
			l.q.mu.Unlock()
			return
		}
		a.lastSnap = now
		path, err := snapshot(name, now)
		if err != nil {
			report("no snapshot: " + err.Error())
			return
		}
		report(path)
	}
}

// actionsStep ends actions whose time is up and takes due readings of
// sampling actions.
func (l *loop) actionsStep(now time.Time) {
	name := l.q.plan.Query.Name
	for _, a := range l.actions {
		switch {
		case a.hold != nil && now.After(a.until):
			a.hold.Release()
			a.hold = nil
			l.q.res.add(l.q.res.schema(actionSchema), now.UnixNano(), []query.Value{
				query.StringValue(name), query.StringValue(a.spec.Text), query.StringValue("ended: probes back to their modes")})
		case a.sampler != nil && now.After(a.until):
			a.sampler = nil
		case a.sampler != nil && !now.Before(a.due):
			for !a.due.After(now) {
				a.due = a.due.Add(a.spec.Every)
			}
			vals := append([]query.Value{query.StringValue(name)}, a.sampler.read(now)...)
			l.q.res.add(a.schema, now.UnixNano(), vals)
		}
	}
}

// snapshot copies the recent fine records (at most SnapshotBytes of the
// current trace file, after a flush) into a trace file of its own next to
// it, and returns its path.
func snapshot(trigger string, now time.Time) (string, error) {
	if err := monitor.Flush(); err != nil {
		return "", fmt.Errorf("flushing the trace: %v", err)
	}
	st, ok := monitor.WriterStats()
	if !ok || st.CurrentFile == "" {
		return "", fmt.Errorf("no trace file yet (no probe has recorded in fine mode)")
	}
	var buf bytes.Buffer
	if _, err := writer.Tail(&buf, st.CurrentFile, SnapshotBytes); err != nil {
		return "", err
	}
	base := strings.TrimSuffix(st.CurrentFile, filepath.Ext(st.CurrentFile))
	path := fmt.Sprintf("%s-snapshot-%s-%s.tgr", base, trigger, now.UTC().Format("20060102T150405.000Z"))
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return "", err
	}
	return path, nil
}

// WriteStream writes the query's output to w as JSON lines from row Seq
// from on: each schema when first used, the rows, {"skipped":N} when the
// reader fell behind the rows kept, {"stats":...} every heartbeat without
// rows, and a last {"end":...} line when the query ended, with the time it
// ended (the open windows were cut then). It returns when
// the query ended, ctx is done or a write fails (the reader left). flush,
// when not nil, is called after each batch.
func (q *Query) WriteStream(ctx context.Context, w io.Writer, from uint64, heartbeat time.Duration, flush func()) error {
	announced := map[int]bool{}
	var b []byte
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	for {
		rows, skipped, next, ended, reason := q.res.read(from, 512)
		b = b[:0]
		if skipped > 0 {
			b = append(b, fmt.Sprintf("{\"skipped\":%d}\n", skipped)...)
		}
		if len(rows) > 0 {
			schemas := q.res.Schemas()
			for _, r := range rows {
				if r.Note != nil {
					b = appendDropped(b, r.Note)
					continue
				}
				if !announced[r.Schema] && r.Schema < len(schemas) {
					b = query.AppendSchema(b, r.Schema, schemas[r.Schema])
					announced[r.Schema] = true
				}
				b = query.AppendRow(b, r.Schema, r.Vals)
			}
		}
		if ended {
			q.mu.Lock()
			at := q.ended
			q.mu.Unlock()
			b = append(b, fmt.Sprintf("{\"end\":%q,\"ended\":%q,\"stats\":%s}\n", reason, at.UTC().Format(time.RFC3339Nano), q.statsJSON())...)
		}
		if len(b) > 0 {
			if _, err := w.Write(b); err != nil {
				return err
			}
			if flush != nil {
				flush()
			}
		}
		if ended {
			return nil
		}
		from = next
		if len(rows) == 512 {
			continue
		}
		wctx, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-beat.C:
				cancel()
			case <-wctx.Done():
			}
		}()
		q.res.wait(wctx, from)
		beatFired := wctx.Err() != nil && ctx.Err() == nil
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if beatFired {
			if _, err := w.Write([]byte("{\"stats\":" + q.statsJSON() + "}\n")); err != nil {
				return err
			}
			if flush != nil {
				flush()
			}
		}
	}
}

func (q *Query) statsJSON() string {
	in := q.Info()
	s := in.Stats
	return fmt.Sprintf(`{"tuples":%d,"rows":%d,"lost":%d,"late":%d,"droppedGroups":%d,"joinDropped":%d,"fired":%d,"suppressed":%d,"cpuNs":%d,"memory":%d,"shed":%d,"sampleOneIn":%d,"joinWindowNs":%d}`,
		s.Tuples, s.Rows, s.Lost, s.Late, s.DroppedGroups, s.JoinDropped, s.Fired, s.Suppressed, s.CPU, s.Memory, s.Shed, s.SampleOneIn, s.JoinWindow)
}
