// Package analyzer is the second phase of tigris's two-phase monitoring: every
// interval it groups the coarse statistics of the functions that ran in the
// window, evaluates the TigrisDSL relevance filter, switches the selected
// functions to fine mode and the others back to coarse, and, with an overhead
// budget, sets the sampling rate in force. docs/analysis.md is the user's
// description; this package is the implementation.
//
// # Place
//
// The analyzer is a client of package monitor, as the admin endpoint is: it
// reads statistics ([monitor.ReadCounters]) and changes modes and the sampling
// limit only through the monitor's analyzer layer ([monitor.SetAnalyzerModes]),
// so the probes' hot path, in package monitor, knows nothing about it. Manual
// rules (monitor.AddRule, tigris ctl enable) always win over its choices.
//
// # How it starts
//
// Instrumented binaries link it explicitly: the generated probe tables pass
// [Run] to the monitor as monitor.Links.Analyzer, and the monitor calls it at
// the first probe registration. The schedule runs on a timer: no goroutine of
// the analyzer waits between cycles, and while analysis is disabled there is
// no timer either, so the program's own goroutine-leak checks never see it.
//
// # API
//
//	Analysis() settings.Analysis           // settings in force (bindings complete)
//	SetAnalysis(a settings.Analysis) error // validate, apply, restart the timer
//	AnalyzeNow() (Cycle, error)            // one cycle now, enabled or not
//	History() []Cycle                      // last 100 cycles, oldest first, copies
//	Evaluate(stats, a) (*Evaluation, error) // the same selection, offline
//
// All are safe for concurrent use. None runs on a probe's path: a cycle holds
// the monitor's lock only to switch modes, once, as a rule change does.
//
// # Safety
//
// A panic inside a cycle is recovered and reported on stderr (monitor.Report);
// the schedule goes on and the previous selection stays in force.
package analyzer
