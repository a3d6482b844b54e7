// Package monitor is the run-time half of tigris, linked into every
// instrumented binary: the probe ABI that generated code calls, the registry
// of probes and their mode rules, coarse statistics, fine records and
// goroutine contexts. Users may call its public API.
//
// # What generated code calls
//
// The probe ABI, with its contract, is abi.go. The rewriter adds one file per
// instrumented package that declares an array of Probe values and registers
// them at init (RegisterTable, with their descriptions in one string constant
// that EncodeTable wrote, naming what the binary links beside the monitor in
// Links), and a prologue on the first line of every matched
// function:
//
//	if __tigris_p[3].On() { __tg := __tigris.Start(&__tigris_p[3]); defer __tg.ExitErr(&err) };
//
// Probe.On inlines to one load and one branch, all the off path costs. When it is on,
// the call is timed; at exit the coarse statistics are updated and, in fine mode and
// when sampled, one writer.Record is handed to the writer.
//
// A go statement of a matched function calls Fork first and, inside a fine
// trace, starts its goroutine through a generated wrapper that calls
// Link.Adopt: the goroutine's first trace is linked to the one that started
// it (link.go).
//
// # Modes
//
// Every probe has a mode: off, coarse or fine. The configuration sets the default
// and an ordered list of rules (pointcut pattern → mode, last match wins); a rule
// change re-evaluates every probe once, never on the hot path. The analyzer
// (package monitor/analyzer, through SetAnalyzerModes) and the admin endpoint
// change modes through the same rules.
//
// # Exit
//
// When the program exits (main returns, os.Exit, through Links.AtExit) or
// calls Shutdown, the writer closes, and every recorded call that has not
// returned by then is written as a record marked writer.FlagUnfinished,
// whose exit time is the close's; the open calls it cannot write (more than
// 16 open calls deep in one goroutine) are counted in a loss record
// (writer.LossUnfinished). Start notes each fine call for it in the
// goroutine's context, with no lock and no atomic instruction on amd64; the
// exits do nothing more (open.go). Coarse statistics count a call when it
// returns, so a call still running at exit is in no statistics snapshot.
//
// # Safety
//
// Nothing here may panic into or allocate on the caller's path, nor block it,
// with one exception the settings choose: under writer.on-full: block (the
// default, so that no record is lost) a fine record that finds its P's ring
// full makes the caller drain that ring, taking the writer's lock and waiting
// for the disk; writer.on-full: drop never makes the caller wait. Internal
// goroutines recover from their own panics and report errors to stderr, rate
// limited. Double exits and unbalanced contexts are harmless.
package monitor
