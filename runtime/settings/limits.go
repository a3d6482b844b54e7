package settings

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// This file is the one set of range rules for the run-time settings. Validate
// applies every Limit; the front ends reach it from their own side: config
// (tigris.yaml) and ApplyEnv (TIGRIS_*) through Validate, the admin API and the
// monitor's setters through the Check functions below, which run the same
// checks on one value. docs/config.md prints Limits (LimitsMarkdown), and a test
// keeps the page in step with the table.

// The bounds of the table.
const (
	// MinRate is the smallest positive sampling rate or overhead budget. The
	// sampler compares against rate·2³², so a positive rate below 2⁻³² (≈2.3e-10),
	// a denormal or an exponent typo, would silently record nothing.
	MinRate = 1e-9
	// MinInterval is the shortest analysis interval: a cycle snapshots and ranks
	// every probe, and an interval of nanoseconds keeps a core busy doing it;
	// ten cycles a second cost little (the quick evaluation plan runs two).
	MinInterval = Duration(100 * time.Millisecond)
	// MinFlush is the shortest writer flush interval: the writer goroutine wakes
	// up that often.
	MinFlush = Duration(10 * time.Millisecond)
	// MaxQueue is the longest async writer queue, in records (64 bytes each):
	// 1 GiB of memory.
	MaxQueue = 1 << 24
	// MinRotate is the smallest rotation size: each file repeats the header and
	// every probe definition twice, and a file per chunk would be mostly that.
	MinRotate = 1 << 20
	// MaxRules is the most mode rules of one list: the configured rules
	// (tigris.yaml, TIGRIS_RULES) and, separately, the manual rules of the
	// admin API. Every rule is matched against every probe when rules change.
	MaxRules = 256
	// MaxQueries is the most queries a program may run at once: each is a
	// goroutine that wakes ten times a second, with its own tap queues.
	MaxQueries = 64
	// MaxQueryProbes bounds queries.max-probes.
	MaxQueryProbes = 1 << 20
)

// A Limit is one range rule of Validate: a setting, what it accepts and why.
type Limit struct {
	Field    string // the setting, as FieldError.Field names it
	Key      string // its tigris.yaml key
	Accepted string // what passes, in words
	Why      string // the reason for the bound, one sentence

	check func(r *Runtime) string // "" or the message, as in FieldError.Msg
	bad   func(r *Runtime)        // sets a value check rejects, for the docs' example
}

// Limits are the range rules, in the order of docs/config.md.
var Limits = []Limit{
	{Field: "sampling", Key: "monitor.sampling",
		Accepted: "0, or 0.0000001% (1e-9) to 100%; not -0, NaN or infinite",
		Why:      "the sampler's resolution is 2⁻³²: a smaller positive rate would record nothing",
		check:    func(r *Runtime) string { return checkRate(r.Sampling, false) },
		bad:      func(r *Runtime) { r.Sampling = 5e-324 }},
	{Field: "coarse-budget", Key: "monitor.coarse-budget",
		Accepted: "0, or 0.0000001% (1e-9) to 100%; not -0, NaN or infinite",
		Why:      "a share of a function's time; the same rule as sampling's",
		check:    func(r *Runtime) string { return checkRate(r.CoarseBudget, false) },
		bad:      func(r *Runtime) { r.CoarseBudget = 5e-324 }},
	{Field: "rules", Key: "monitor.rules",
		Accepted: fmt.Sprintf("at most %d rules (the admin API's manual rules: %d more)", MaxRules, MaxRules),
		Why:      "every rule is matched against every probe whenever rules change",
		check:    func(r *Runtime) string { return checkRuleCount(len(r.Rules)) },
		bad: func(r *Runtime) {
			r.Rules = make([]Rule, MaxRules+1)
			for i := range r.Rules {
				r.Rules[i] = Rule{Pattern: "within(a)", Mode: Fine}
			}
		}},
	{Field: "analysis.interval", Key: "analysis.interval",
		Accepted: "100ms or more",
		Why:      "each cycle snapshots and ranks every probe; a shorter interval keeps a core busy",
		check:    func(r *Runtime) string { return checkMin(r.Analysis.Interval, MinInterval, "2m") },
		bad:      func(r *Runtime) { r.Analysis.Interval = Duration(time.Nanosecond) }},
	{Field: "analysis.window", Key: "analysis.window",
		Accepted: "0 (one interval) or more",
		Why:      "a history of negative length means nothing",
		check:    func(r *Runtime) string { return checkWindow(r.Analysis.Window) },
		bad:      func(r *Runtime) { r.Analysis.Window = -Duration(time.Minute) }},
	{Field: "analysis.budget", Key: "analysis.budget",
		Accepted: "0 (off), or 0.0000001% (1e-9) to less than 100%; not -0, NaN or infinite",
		Why:      "a share of CPU time; a whole core cannot be spent on monitoring",
		check:    func(r *Runtime) string { return checkRate(r.Analysis.Budget, true) },
		bad:      func(r *Runtime) { r.Analysis.Budget = math.Copysign(0, -1) }},
	{Field: "writer.queue", Key: "writer.queue",
		Accepted: fmt.Sprintf("1 to %d records", MaxQueue),
		Why:      "the queue is allocated up front, 64 bytes a record (1 GiB at the limit)",
		check:    func(r *Runtime) string { return checkQueue(r.Writer.Queue) },
		bad:      func(r *Runtime) { r.Writer.Queue = 1 << 30 }},
	{Field: "writer.rotate", Key: "writer.rotate",
		Accepted: "0 (never), or 1MiB or more",
		Why:      "every file repeats the header and the probe definitions twice",
		check:    func(r *Runtime) string { return checkRotate(r.Writer.Rotate) },
		bad:      func(r *Runtime) { r.Writer.Rotate = 4096 }},
	{Field: "writer.flush", Key: "writer.flush",
		Accepted: "10ms or more",
		Why:      "the writer goroutine wakes up that often",
		check:    func(r *Runtime) string { return checkMin(r.Writer.Flush, MinFlush, "1s") },
		bad:      func(r *Runtime) { r.Writer.Flush = Duration(time.Microsecond) }},
	{Field: "queries.max", Key: "queries.max",
		Accepted: fmt.Sprintf("1 to %d (0: the default, %d)", MaxQueries, DefaultQueries.Max),
		Why:      "each running query is a goroutine that wakes ten times a second, with its own queues",
		check:    func(r *Runtime) string { return checkCount(r.Queries.Max, MaxQueries) },
		bad:      func(r *Runtime) { r.Queries.Max = MaxQueries + 1 }},
	{Field: "queries.maxProbes", Key: "queries.max-probes",
		Accepted: fmt.Sprintf("1 to %d (0: the default, %d)", MaxQueryProbes, DefaultQueries.MaxProbes),
		Why:      "a query switches on every probe it reads",
		check:    func(r *Runtime) string { return checkCount(r.Queries.MaxProbes, MaxQueryProbes) },
		bad:      func(r *Runtime) { r.Queries.MaxProbes = -1 }},
	{Field: "queries.budget", Key: "queries.budget",
		Accepted: "0.0000001% (1e-9) to 100% of one core (0: the default, 5%); not -0, NaN or infinite",
		Why:      "a query's estimated CPU cost is refused above it",
		check:    func(r *Runtime) string { return checkRate(r.Queries.Budget, false) },
		bad:      func(r *Runtime) { r.Queries.Budget = math.Inf(1) }},
}

// checkLimit applies the Limit of field to r.
func checkLimit(r *Runtime, field string, add func(field, format string, args ...any)) {
	for _, l := range Limits {
		if l.Field == field {
			if msg := l.check(r); msg != "" {
				add(l.Field, "%s", msg)
			}
			return
		}
	}
	panic("settings: no limit for " + field) // a bug in this package; tests cover every call
}

// CheckSampling applies the sampling rule of Limits to one rate: nil, or a
// *FieldError for "sampling". The admin API and monitor.SetSampling use it.
func CheckSampling(rate float64) error { return fieldError("sampling", checkRate(rate, false)) }

// CheckManualRules applies the rule count of Limits to the manual rules of
// the admin API: nil, or a *FieldError for "rules".
func CheckManualRules(n int) error { return fieldError("rules", checkRuleCount(n)) }

// CheckRule checks one rule as Validate checks each of Runtime.Rules: a
// pattern that is not blank and a mode. prefix starts the field names, e.g.
// "rules[3]." or "". It does not parse the pattern.
func CheckRule(prefix string, rule Rule) error {
	var es Errors
	checkRule(rule, func(field, format string, args ...any) {
		es = append(es, &FieldError{Field: prefix + field, Msg: fmt.Sprintf(format, args...)})
	})
	if len(es) == 0 {
		return nil
	}
	return es
}

func checkRule(rule Rule, add func(field, format string, args ...any)) {
	if strings.TrimSpace(rule.Pattern) == "" {
		add("pattern", "empty pattern (want a pointcut such as execution(* shop/repo.*(..)))")
	}
	if !rule.Mode.Valid() {
		add("mode", "%q is not a mode (want %s)", rule.Mode, alternatives(Modes))
	}
}

func fieldError(field, msg string) error {
	if msg == "" {
		return nil
	}
	return &FieldError{Field: field, Msg: msg}
}

// checkRate checks a share: a sampling rate in [0, 1], or with below1 a budget
// in [0, 1). Zero is +0 only, and a positive share is at least MinRate.
func checkRate(v float64, below1 bool) string {
	want := "want 0% to 100%"
	if below1 {
		want = "want 0% to less than 100%; 0 disables the budget"
	}
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Sprintf("%v is not a number (%s)", v, want)
	case v == 0 && math.Signbit(v):
		return fmt.Sprintf("-0 is negative zero (write 0; %s)", want)
	case v < 0 || v > 1 || below1 && v == 1:
		return fmt.Sprintf("%s is out of range (%s)", FormatPercent(v), want)
	case v > 0 && v < MinRate:
		return fmt.Sprintf("%g is below the smallest positive share, %s (%g), which the sampler can tell from 0 (write 0 for none)", v, FormatPercent(MinRate), MinRate)
	}
	return ""
}

func checkCount(n, most int) string {
	if n < 0 || n > most {
		return fmt.Sprintf("%d is out of range (want 1 to %d, or 0 for the default)", n, most)
	}
	return ""
}

func checkMin(d, least Duration, example string) string {
	if d < least {
		return fmt.Sprintf("%s is shorter than the minimum %s (want e.g. %s)", d, least, example)
	}
	return ""
}

func checkWindow(d Duration) string {
	if d < 0 {
		return fmt.Sprintf("%s is negative (want 0 for one interval, or e.g. 10m)", d)
	}
	return ""
}

func checkQueue(n int) string {
	if n <= 0 || n > MaxQueue {
		return fmt.Sprintf("%d is not a queue length (want an integer from 1 to %d)", n, MaxQueue)
	}
	return ""
}

func checkRotate(n int64) string {
	switch {
	case n < 0:
		return fmt.Sprintf("%d is negative (want a size such as 256MiB, or 0 to never rotate)", n)
	case n > 0 && n < MinRotate:
		return fmt.Sprintf("%s is smaller than the minimum %s (want a size such as 256MiB, or 0 to never rotate)", FormatSize(n), FormatSize(MinRotate))
	}
	return ""
}

func checkRuleCount(n int) string {
	if n > MaxRules {
		return fmt.Sprintf("%d rules are more than the limit of %d", n, MaxRules)
	}
	return ""
}

// LimitsMarkdown renders Limits as the table docs/config.md prints: the key,
// the TIGRIS_* variable that sets it, what is accepted, why, and the message a
// value out of range gets.
func LimitsMarkdown() string {
	var b strings.Builder
	b.WriteString("| setting | variable | accepted | why | a value out of range gets |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, l := range Limits {
		env := "–"
		for _, v := range EnvVars {
			if v.Field == l.Field {
				env = "`" + v.Name + "`"
			}
		}
		r := Default()
		l.bad(&r)
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | `%s` |\n", l.Key, env, l.Accepted, l.Why, l.check(&r))
	}
	return b.String()
}
