package live

import (
	"sync"
	"time"

	"github.com/tigrisgo/tigris/runtime/monitor"
)

// EXPLAIN's estimate, and the budget check, take each probe's rate over the
// recent past, not since the program started: a program whose load changed
// an hour ago is estimated at its load now. As the analyzer does for its
// windows, the registry keeps marks of the probes' cumulative statistics
// (monitor.ReadCounters), one every markEvery on a timer once a registry is
// in use, and a catalog reads the statistics since the newest mark at least
// recentMin old (monitor.Counters.Since): calls over the last 10 to 20 s.
// Until a mark is that old, since the program started.
const (
	markEvery = 10 * time.Second
	recentMin = 10 * time.Second
	// keptMarks are enough for a mark recentMin old to be kept.
	keptMarks = int(recentMin/markEvery) + 2
)

// recentStat is one probe's statistics over the recent past; Rate is its
// calls a second.
type recentStat struct {
	monitor.Stats
	Rate float64
}

type mark struct {
	at time.Time
	c  monitor.Counters
}

var marks struct {
	mu    sync.Mutex
	list  []mark // oldest first
	timer *time.Timer
}

// startMarks starts the timer of the marks once.
func startMarks() {
	marks.mu.Lock()
	defer marks.mu.Unlock()
	if marks.timer == nil {
		marks.timer = time.AfterFunc(markEvery, func() {
			addMark(time.Now(), monitor.ReadCounters())
			marks.mu.Lock()
			marks.timer.Reset(markEvery)
			marks.mu.Unlock()
		})
	}
}

// addMark keeps c, read at at, dropping the marks no longer needed.
func addMark(at time.Time, c monitor.Counters) {
	marks.mu.Lock()
	defer marks.mu.Unlock()
	marks.list = append(marks.list, mark{at, c})
	if n := len(marks.list); n > keptMarks {
		marks.list = append(marks.list[:0], marks.list[n-keptMarks:]...)
	}
}

// recentStats are the probes' statistics since the newest mark at least
// recentMin before now, or since the program started.
func recentStats(now time.Time) []recentStat {
	startMarks()
	from, at := monitor.Counters{}, monitor.Started()
	marks.mu.Lock()
	for i := len(marks.list) - 1; i >= 0; i-- {
		if m := marks.list[i]; now.Sub(m.at) >= recentMin {
			from, at = m.c, m.at
			break
		}
	}
	marks.mu.Unlock()
	span := now.Sub(at)
	st := monitor.ReadCounters().Since(from, span)
	out := make([]recentStat, len(st))
	for i, s := range st {
		out[i] = recentStat{Stats: s, Rate: -1}
		if span > 0 {
			out[i].Rate = float64(s.Count) / span.Seconds()
		}
	}
	return out
}
