// Package settings holds the run-time settings of an instrumented program,
// their one table of limits and the parser of the TIGRIS_* environment: what
// a program needs to know when it starts. It imports only std so the monitor
// that user binaries carry can use it.
//
// # Life of a Runtime
//
// The build-time loader (package config) reads tigris.yaml, validates it and
// fills a Runtime value; the link step of tigris toolexec passes
// [Runtime.Encode]'s string to the linker (-X, into the monitor's
// linkedSettings), so a change of settings relinks but recompiles nothing; at
// start the monitor calls [Decode] on it and then [ApplyEnv] for the TIGRIS_*
// environment overrides (listed in [EnvVars]):
//
//	r, err := settings.Decode(linked)
//	if err == nil {
//		err = settings.ApplyEnv(&r, os.Getenv)
//	}
//
// Both leave a Runtime that passed [Runtime.Validate]. Neither checks the syntax of
// pointcut patterns or of the TigrisDSL criteria (this package cannot import those
// parsers); config does that at build time, the monitor must do it for values that
// came from the environment.
//
// # One set of rules
//
// Validate is the one place values and ranges are checked, whatever the front
// end: config runs it on tigris.yaml (and reports at file:line:col), ApplyEnv on
// the TIGRIS_* overrides (naming the variable), and the admin API and the
// monitor's setters run the same rules on one value ([CheckSampling],
// [CheckRule], [CheckManualRules]). The range rules are the table [Limits]
// (the minimum analysis interval, what a sampling rate may be, the longest
// queue, ...), which docs/config.md prints.
//
// # Value syntax
//
// The parse helpers ([ParsePercent], [ParseSize], [ParseDuration], [ParseBool],
// [ParseMode], [ParseWriterMode], [ParseOnFull], [ParseRules], [ParseQueue],
// [ParseRotate], [ParseBudget]) are shared by the config file and the
// environment, so a value is written the same way in both
// places. Their errors quote the value and say what is allowed, without naming the
// setting: the caller adds the file position or the variable name.
//
// Values of this package are plain data: safe to copy (Rules and Metrics are shared by
// a shallow copy; use [Runtime.Clone] before changing them) and not safe for
// concurrent mutation.
package settings
