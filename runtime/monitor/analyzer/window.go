package analyzer

import (
	"time"

	"github.com/tigrisgo/tigris/runtime/internal/num"
	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// A cycle at instant T evaluates the statistics of the window [T - window, T]:
// the probes' cumulative counters now minus a mark, the counters taken at the
// window's start. docs/analysis.md (Window) describes the rules for users.

// mark is the cumulative statistics of every probe at one instant.
type mark struct {
	at    int64 // the instant the mark stands for (scheduled)
	taken int64 // when it was taken
	c     monitor.Counters
}

// windowOf is the span of statistics a cycle evaluates: the window, or one
// interval when it is 0.
func windowOf(a settings.Analysis) time.Duration {
	if a.Window > 0 {
		return time.Duration(a.Window)
	}
	return time.Duration(a.Interval)
}

// maxMarks bounds the marks kept whatever the settings did before.
const maxMarks = 40

// addMarkLocked keeps m if it is at least a sixteenth of a window after the newest
// mark, and drops the marks no later cycle can start its window at (window
// starts only move forward). That bounds memory to about 18 marks of one counter
// set per probe, whatever the window/interval ratio, at the price of a window
// start up to a sixteenth of the window early.
func addMarkLocked(m mark) {
	w := int64(windowOf(confLocked().settings))
	if n := len(an.marks); n > 0 && m.at-an.marks[n-1].at < w/16 {
		return
	}
	an.marks = append(an.marks, m)
	keep := 0 // the latest mark at or before m.at-w, where the next window may start
	for j, old := range an.marks {
		if old.at <= m.at-w {
			keep = j
		}
	}
	an.marks = an.marks[num.Max(keep, len(an.marks)-maxMarks):]
}

// windowStartLocked returns the mark a window reaching back to target starts at:
// the latest mark at or before target; while there is none yet (the analysis
// started less than a window ago) the earliest mark, a shorter window rather
// than one reaching back before the analysis; with no mark at all the program's
// start (instant 0, zero counters).
func windowStartLocked(target int64) mark {
	if len(an.marks) == 0 {
		return mark{}
	}
	best := an.marks[0]
	for _, m := range an.marks {
		if m.at <= target {
			best = m
		}
	}
	return best
}
