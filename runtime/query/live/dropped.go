package live

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/tigrisgo/tigris/runtime/query"
)

// What a query leaves out is said where its rows are, not only in its end
// line: its result stream carries {"dropped":...} lines among the rows.
//
//   - When it starts leaving calls out, and whenever the reason changes, a
//     line with Since and Why: shed (over its budget, or a step cut at its
//     share of a second, or the query ending), lost (its queue was full),
//     and once each, the engine's drops (groups beyond MaxGroups, a full
//     join side, late tuples).
//   - A count of the calls shed and lost in each window of the query (each
//     slide of a sliding window), by the time its calls ended, once the
//     window's rows are out; without WINDOW, of each second, with the rows.
//     A call lost to a full queue counts in the window of the step that
//     found it lost (its time is not known).
//
// Every call counted as shed or lost in the query's stats is in exactly one
// count: the counts sum to the end line's shed and lost.

// Dropped is one {"dropped":...} line: a start (Since and Why) or a count
// (From, To, Shed and Lost).
type Dropped struct {
	Since *time.Time `json:"since,omitempty"`
	Why   string     `json:"why,omitempty"`
	From  *time.Time `json:"from,omitempty"`
	To    *time.Time `json:"to,omitempty"`
	Shed  uint64     `json:"shed,omitempty"`
	Lost  uint64     `json:"lost,omitempty"`
}

// appendDropped appends d's line.
func appendDropped(b []byte, d *Dropped) []byte {
	j, _ := json.Marshal(struct {
		D *Dropped `json:"dropped"`
	}{d})
	return append(append(b, j...), '\n')
}

// The reasons of a start line.
const (
	whyCut    = "a step used the query's share of queries.budget for this second: the rest of its calls are shed"
	whyEnding = "the query is ending: the calls its queues held past its last 200ms are shed"
	whyLost   = "the query's queue was full (%d calls a source): calls are lost"
)

// leftOut keeps the counts of a query's shed and lost calls until their
// window is out. It is owned by the query's goroutine.
type leftOut struct {
	slide   int64                // a window's slide in ns; 0 without WINDOW
	buckets map[int64]*[2]uint64 // per slide: shed, lost
	// pending are the counts without WINDOW since pendingAt.
	pending   [2]uint64
	pendingAt int64
	lostSeen  uint64 // the taps' lost calls counted so far
	why       string // the reason of the step's shedding
	announced string // the shed reason last said
	lostSaid  bool
	engine    [3]bool // droppedGroups, joinDropped, late said
	now       int64   // the step's time
}

func (o *leftOut) init(q *query.Query, now time.Time) {
	if q.Window != nil && q.Kind != query.KindTrigger {
		o.slide = int64(q.Window.Slide)
		o.buckets = map[int64]*[2]uint64{}
	}
	o.pendingAt = now.UnixNano()
}

// add counts n calls shed (k 0) or lost (k 1) at Unix ns t.
func (o *leftOut) add(k int, t int64, n uint64) {
	if n == 0 {
		return
	}
	if o.slide == 0 {
		o.pending[k] += n
		return
	}
	i := floorDiv(t, o.slide)
	b := o.buckets[i]
	if b == nil {
		b = new([2]uint64)
		o.buckets[i] = b
	}
	b[k] += n
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// shed counts one call shed, ended at Unix ns t; the first under a new
// reason is said at once, before the rows that lack it.
func (l *loop) shed(t int64) {
	o := &l.out
	if o.why != o.announced {
		o.announced = o.why
		l.say(time.Unix(0, o.now), o.why)
	}
	o.add(0, t, 1)
}

// countLost counts the calls the taps lost since the last look, at now.
func (l *loop) countLost(now time.Time) {
	var lost uint64
	for _, t := range l.taps {
		if t != nil {
			lost += t.Lost()
		}
	}
	o := &l.out
	if lost > o.lostSeen {
		if !o.lostSaid {
			o.lostSaid = true
			l.say(now, fmt.Sprintf(whyLost, l.opts.Queue))
		}
		o.add(1, now.UnixNano(), lost-o.lostSeen)
		o.lostSeen = lost
	}
}

// say adds a start line.
func (l *loop) say(now time.Time, why string) {
	at := now.UTC()
	l.q.res.note(now.UnixNano(), &Dropped{Since: &at, Why: why})
}

// sayDrops adds the start lines of the engine's first drops of each kind.
func (l *loop) sayDrops(now time.Time) {
	o := &l.out
	st := l.runner.Stats()
	for i, c := range []struct {
		n   uint64
		why string
	}{
		{st.DroppedGroups, "a window has more groups than the engine keeps: tuples of further groups are dropped (droppedGroups)"},
		{st.JoinDropped, "a join side holds all the tuples the engine keeps: the oldest are dropped (joinDropped)"},
		{st.Late, "tuples came after their window was out: they are not counted (late)"},
	} {
		if c.n > 0 && !o.engine[i] {
			o.engine[i] = true
			l.say(now, c.why)
		}
	}
}

// countsOut adds the count lines of the windows out by watermark w (Unix
// ns), or, without WINDOW, of the second before now; all with all.
func (l *loop) countsOut(now time.Time, w int64, all bool) {
	o := &l.out
	if o.slide == 0 {
		if o.pending != ([2]uint64{}) && (all || now.UnixNano()-o.pendingAt >= int64(time.Second)) {
			l.count(o.pendingAt, now.UnixNano(), o.pending)
			o.pending, o.pendingAt = [2]uint64{}, now.UnixNano()
		}
		return
	}
	var out []int64
	for i := range o.buckets {
		if all || (i+1)*o.slide <= w {
			out = append(out, i)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
	for _, i := range out {
		l.count(i*o.slide, (i+1)*o.slide, *o.buckets[i])
		delete(o.buckets, i)
	}
}

func (l *loop) count(from, to int64, n [2]uint64) {
	f, t := time.Unix(0, from).UTC(), time.Unix(0, to).UTC()
	l.q.res.note(to, &Dropped{From: &f, To: &t, Shed: n[0], Lost: n[1]})
}

// endCounts is the last look at the losses as the query ends: every count
// still open goes out, and the stats say what the counts sum to.
func (l *loop) endCounts(now time.Time) {
	l.countLost(now)
	l.sayDrops(now)
	l.countsOut(now, 0, true)
}
