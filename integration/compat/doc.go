// Package compat is tigris's compatibility harness: it runs the own test suites
// of real third-party modules and of standard-library packages twice, plainly
// (`go test`) and instrumented (`tigris go test`, every function of the suite's
// packages probed, fine mode, the asynchronous writer on), and compares the
// verdict of every test. They must be identical.
//
// # How a run is set up
//
// WriteModule creates one throwaway module that requires every module under
// test at its pinned version and tigris (replaced to a local checkout), with
// one tigris.yaml selecting all of them and the standard-library packages. One
// config for everything is deliberate: each distinct config is a distinct
// compiler fingerprint and recompiles the standard library. Runner.Prepare
// fills go.sum through the module proxy (the only step that may touch the
// network or edit go.mod) and checks that the module graph selected exactly the
// pinned versions; every later go command runs with -mod=readonly.
//
// Runner.Run runs one suite in one mode: `go test -json -count=1 PATTERNS`,
// with TIGRIS_MODE=fine, TIGRIS_WRITER=async and TIGRIS_OUT in a directory of
// its own when instrumented. Compare lists the tests whose verdicts differ;
// Probes reads the trace files and counts records per package, so a suite that
// was silently left uninstrumented fails too.
//
// The integration test TestCompat (integration/compat/suites_run_test.go) drives it: the
// suites marked CI by default, all of them with TIGRIS_COMPAT=full;
// integration/compat/run.sh runs the full set and prints the report.
package compat
