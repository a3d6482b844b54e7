// Package config loads and validates tigris.yaml, the one file that says which
// functions tigris instruments and how their probes behave at run time. docs/config.md is the
// user's reference for every key; this page is the Go API.
//
// # Loading
//
// The rewriter and the CLI locate the file with [Find] (from the package
// directory up to the file-system root), then call [Load]; [Default] stands in
// when there is no file. [Parse] does the work on bytes already read.
//
//	path, err := config.Find(dir)
//	var cfg *config.Config
//	switch {
//	case errors.Is(err, fs.ErrNotExist):
//		cfg = config.Default()
//	case err != nil:
//		return err
//	default:
//		if cfg, err = config.Load(path); err != nil {
//			return err // an ErrorList: tigris.yaml:7:9: monitor.mode: ...
//		}
//	}
//
// # What a Config holds
//
// A Config is complete and validated or not returned at all: named pointcuts and
// their environment, the Instrument pointcut that selects functions at build
// time, the Std switch, and the run-time part as a settings.Runtime that has
// passed its Validate, whose rule patterns parse as pointcuts and whose criteria
// parse as TigrisDSL with every criterion bound to a known metric. [Config.Hash]
// digests all of it for the build fingerprint.
//
// # Errors
//
// Content errors come as an [ErrorList] of [*Error], each one line
// "file:line:col: key: message" naming what is allowed; positions inside pointcut
// and TigrisDSL expressions point into the expression. Parse reports every
// problem it finds, not just the first.
//
// # Writing a file
//
// [Template] returns the commented file tigris init writes for a module, and
// [WriteTemplate] writes it without overwriting an existing one.
package config
