package admin

import (
	"encoding/json"
	"fmt"

	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/monitor/analyzer"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// The wire types of the API. Servers encode them and clients (tigris ctl) decode
// them, so both sides agree by construction; docs/admin-api.md shows each one.

// ErrorBody is the body of every response with a status of 400 or more.
type ErrorBody struct {
	// Error is the whole message, one line, e.g.
	// `rule pattern: 1:14: unexpected token "x" (expected "(")`.
	Error string `json:"error"`
	// Field names the request field or query parameter at fault ("pattern",
	// "rules[2].mode", "sampling", "criteria"), when there is one.
	Field string `json:"field,omitempty"`
	// Line and Column locate a syntax error inside the pattern or criteria
	// expression (1-based), when the error has a position.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
	// Plan is a refused query's plan, which says why (422).
	Plan string `json:"plan,omitempty"`
}

// ProbeList answers GET probes.
type ProbeList struct {
	Probes []monitor.ProbeStatus `json:"probes"`
}

// RuleList answers GET rules and PUT rules: the configured rules (tigris.yaml,
// TIGRIS_RULES) and then the manual ones, in evaluation order (the last match
// wins). Manual rules win over the configured ones and the analyzer; their index
// is what DELETE rules/{i} takes.
type RuleList struct {
	Configured []settings.Rule `json:"configured"`
	Manual     []settings.Rule `json:"manual"`
}

// RuleSet is the body of PUT rules: the new manual rules ([] clears them).
type RuleSet struct {
	Rules *[]settings.Rule `json:"rules"`
}

// RuleChange answers POST rules (the rule added) and DELETE rules/{i} (the rule
// removed), with its index among the manual rules.
type RuleChange struct {
	Index int           `json:"index"`
	Rule  settings.Rule `json:"rule"`
}

// SamplingState answers GET and PUT sampling.
type SamplingState struct {
	// Sampling is the configured share of fine-mode traces recorded, in [0,1]:
	// what PUT sets, and the ceiling of the rate in force.
	Sampling float64 `json:"sampling"`
	// Percent is Sampling written as a percentage, e.g. "10%".
	Percent string `json:"percent"`
	// Effective is the share recorded now: Sampling, or lower while the
	// overhead budget (analysis.budget) limits it. EffectivePercent is it as a
	// percentage.
	Effective        float64 `json:"effective"`
	EffectivePercent string  `json:"effectivePercent"`
	// Reason is the budget's last decision in one line, e.g. "overhead budget
	// 2% of CPU: 120k fine calls/s allow 5.4% (lowered)"; absent without a
	// budget.
	Reason string `json:"reason,omitempty"`
}

// SamplingRequest is the body of PUT sampling.
type SamplingRequest struct {
	Sampling *Rate `json:"sampling"`
}

// Rate is a share in a request: a JSON number (0.1) or a string with a
// percentage or a fraction ("10%", "0.1"). Its range is checked where it is used.
type Rate float64

// UnmarshalJSON accepts a number or a string such as "10%".
func (r *Rate) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err == nil {
		*r = Rate(f)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("%s is not a rate (want a number such as 0.1 or a string such as \"10%%\")", b)
	}
	f, err := settings.ParsePercent(s)
	if err != nil {
		return err
	}
	*r = Rate(f)
	return nil
}

// StatsRow is one probe's coarse statistics since the program started, with the
// total time spent in it.
type StatsRow struct {
	monitor.Stats
	// TotalNs is Count × MeanNs: the time spent in the function, summed over calls.
	TotalNs float64 `json:"totalNs"`
}

// StatsList answers GET stats.
type StatsList struct {
	// Sort is the key the rows are ordered by, Order "asc" or "desc".
	Sort  string `json:"sort"`
	Order string `json:"order"`
	// Matched is how many probes passed the filters, before top cut the list.
	Matched int        `json:"matched"`
	Stats   []StatsRow `json:"stats"`
}

// WriterState answers GET writer.
type WriterState struct {
	// Active is false until a probe first goes fine (the writer opens then) or
	// when the program set no sink; the counters are zero then.
	Active      bool   `json:"active"`
	Queued      uint64 `json:"queued"`
	Written     uint64 `json:"written"`
	Dropped     uint64 `json:"dropped"`
	Bytes       uint64 `json:"bytes"`
	Files       int    `json:"files"`
	CurrentFile string `json:"currentFile"`
	Errors      uint64 `json:"errors"`
}

// Health answers GET health.
type Health struct {
	Status string `json:"status"` // "ok"
	PID    int    `json:"pid"`
	Go     string `json:"go"` // runtime.Version()
	// UptimeSeconds counts from the admin package's initialisation, which is
	// about when the program started.
	UptimeSeconds float64 `json:"uptimeSeconds"`
	Probes        int     `json:"probes"`
	// Modes counts the probes per mode.
	Modes map[settings.Mode]int `json:"modes"`
	// Sampling is the configured sampling rate, EffectiveSampling the rate in
	// force and SamplingReason why they differ, as in SamplingState.
	Sampling          float64 `json:"sampling"`
	EffectiveSampling float64 `json:"effectiveSampling"`
	SamplingReason    string  `json:"samplingReason,omitempty"`
	Writer            bool    `json:"writer"` // a writer is open
	// Binary is the program's executable, as trace files name it; absent when
	// the system does not say.
	Binary string `json:"binary,omitempty"`
}

// HistoryList answers GET analysis/history.
type HistoryList struct {
	// Cycles are the recent analysis cycles, oldest first (at most 100).
	Cycles []analyzer.Cycle `json:"cycles"`
}

// Index answers GET /tigris/v1/: the endpoints, for people exploring with curl.
type Index struct {
	Endpoints []string `json:"endpoints"`
}
