// Package offline runs the analyzer's grouping and selection on recorded data,
// outside the monitored program, and explains the result: what `tigris
// analyze` prints.
//
// The input is a statistics snapshot, the JSON the admin endpoint serves at GET
// /tigris/v1/stats ([DecodeSnapshot]), or a trace file whose fine records are
// aggregated per function as the monitor's coarse statistics would have counted
// them ([AggregateTrace]). [Settings] takes the filter and the bindings from
// tigris.yaml with overrides, [Run] evaluates them with the monitor's own
// analyzer (monitor.Evaluate) and [Explain] writes, for every criterion, which
// partition each function falls in, then the functions selected and why.
// docs/analysis.md lists the metrics; docs/dsl.md explains the grouping.
package offline
