// Package realcode measures what probes cost on the own benchmarks of real
// modules: `tigris bench --workload realcode`. MooBench (package bench) times
// one small recursive method; this workload times what a user's code pays.
//
// Each [Module] (a JSON parser, a TOML parser and encoder, a generic B-tree,
// a router, a logger, a compressor, …) is pinned, fetched through the module
// proxy (go mod download) and copied, writable, into a work directory, where
// it is its own main module; `tigris init` writes its tigris.yaml (every
// function of the module) and requires the runtime. From that copy the
// [Driver] builds one test binary per [Build] — plain (go test -c), the
// floor (monitor.floor: true), the config as tigris init writes it, every
// function (monitor.inlinable: probe, monitor.small: probe), and every
// function as the floor — each with `tigris --config FILE go test -c`, and
// runs the [Variants]: plain, floor (off), off, default (coarse, as
// written), floor-all, off-all, coarse-all and fine-all, the mode coming
// from TIGRIS_MODE.
//
// Before the rounds, the plain build's benchmarks run once more with
// -test.cpuprofile, and the profile (decoded here: profile.proto is a small
// protobuf) gives the module's [Shares]: how much of its CPU time, inclusive
// and exclusive, is in the functions the default build probes, as `tigris
// match --json -v` lists them, and how much of it their statistics measure.
//
// A [Plan] ([TinyPlan] for CI, [QuickPlan], [FullPlan]) runs rounds; a round
// runs every variant of every module once, in an order that rotates from
// round to round, each run one test process per benchmark expression with
// -test.run=^$ -test.benchtime=<short> -test.count=1 -test.cpu=1. [Summarize]
// divides, per round and benchmark, a variant's time per operation by the
// plain build's of the same round, takes per module and round the geometric
// mean over the benchmarks, and gives per module and variant the geometric
// mean over the rounds with a 95 % Student's t interval on the rounds' log
// ratios (internal/moments), and the same over all modules. [Report] writes
// results.json, table.txt and table.md, each with the shares and off-all's
// overhead over floor-all's beside the targets.
package realcode
