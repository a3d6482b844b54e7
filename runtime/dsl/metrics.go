package dsl

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Criteria lists the relevance criteria of TigrisDSL (paper, Listing 1 and
// Table 4), in the paper's order. Read-only.
var Criteria = []string{
	"frequent",
	"maintainable",
	"expensive",
	"changeable",
	"error-prone",
	"usage-pattern",
	"state-variation",
	"concurrent",
	"latent",
}

// IsCriterion reports whether name is one of Criteria.
func IsCriterion(name string) bool { return slices.Contains(Criteria, name) }

// Direction says how a metric's values map to "more" of a criterion.
type Direction int8

const (
	// HigherIsMore: a higher metric value means more of the criterion
	// (a higher mean time is more expensive).
	HigherIsMore Direction = 1
	// HigherIsLess: a higher metric value means less of the criterion
	// (a higher cyclomatic complexity is less maintainable).
	HigherIsLess Direction = -1
)

// String returns "higher-is-more" or "higher-is-less".
func (d Direction) String() string {
	switch d {
	case HigherIsMore:
		return "higher-is-more"
	case HigherIsLess:
		return "higher-is-less"
	}
	return fmt.Sprintf("Direction(%d)", int8(d))
}

// MarshalText encodes d as its String.
func (d Direction) MarshalText() ([]byte, error) {
	if d != HigherIsMore && d != HigherIsLess {
		return nil, fmt.Errorf("invalid direction %d", int8(d))
	}
	return []byte(d.String()), nil
}

// UnmarshalText decodes a direction as written by MarshalText, so JSON that
// carries groupings (the admin endpoint's analysis history) decodes again.
func (d *Direction) UnmarshalText(b []byte) error {
	switch string(b) {
	case "higher-is-more":
		*d = HigherIsMore
	case "higher-is-less":
		*d = HigherIsLess
	default:
		return fmt.Errorf("unknown direction %q (want higher-is-more or higher-is-less)", b)
	}
	return nil
}

// Metric describes one metric a criterion can be bound to. The dsl package only
// needs its name and direction; the monitor (dynamic metrics) and the rewriter
// (static metrics) compute the values.
type Metric struct {
	// Name is the name used in bindings and as the column name of [Candidates].
	Name string
	// Static metrics come from the source code at build time; the others are
	// estimated at run time from the coarse statistics of each function.
	Static bool
	// For holds the criteria the metric is meant to back, each with its
	// direction. Bound to any other criterion, a higher value means more of it
	// (HigherIsMore).
	For map[string]Direction
	// Doc says what the value is and how it is estimated.
	Doc string
	// Unknown says when a function has no value (NaN), for explanations; ""
	// when the value is always known.
	Unknown string
	// Unit is what a value counts, for people reading it: UnitNs (a duration
	// in nanoseconds), UnitShare (a share in [0,1]) or "" (a plain number: a
	// count, a mean).
	Unit string
}

// Units of [Metric.Unit].
const (
	UnitNs    = "ns"
	UnitShare = "share"
)

// DirectionFor returns the direction of m when it backs criterion.
func (m Metric) DirectionFor(criterion string) Direction {
	if d, ok := m.For[criterion]; ok {
		return d
	}
	return HigherIsMore
}

// Metrics are the metrics tigris knows, by name: the estimates of the paper's
// Table 9 that are cheap to keep per Go function, and static complexity metrics.
// Read-only.
var Metrics = map[string]Metric{
	"count": {
		Name: "count",
		For:  map[string]Direction{"frequent": HigherIsMore},
		Doc:  "number of completed calls (Table 9, invocation frequency: absolute number of calls)",
	},
	"inter-arrival": {
		Name:    "inter-arrival",
		Unknown: "known once a function completed a call",
		For:     map[string]Direction{"frequent": HigherIsLess, "latent": HigherIsMore},
		Doc: "mean time between the starts of successive calls, in nanoseconds (Table 9, inter-arrival time); " +
			"a longer gap is a less frequent function and a more latent one",
		Unit: UnitNs,
	},
	"mean-time": {
		Name:    "mean-time",
		Unknown: "known once a function completed a call",
		For:     map[string]Direction{"expensive": HigherIsMore, "latent": HigherIsMore},
		Doc:     "mean wall-clock time of a call, in nanoseconds (Table 9, execution time)",
		Unit:    UnitNs,
	},
	"errors": {
		Name: "errors",
		For:  map[string]Direction{"error-prone": HigherIsMore},
		Doc:  "number of calls whose last result was a non-nil error (Table 9, error level: absolute number of exceptions)",
	},
	"error-rate": {
		Name:    "error-rate",
		Unknown: "known once a function completed a call",
		For:     map[string]Direction{"error-prone": HigherIsMore},
		Doc:     "errors divided by count, in [0,1]; unlike errors it does not favour frequently called functions",
		Unit:    UnitShare,
	},
	"panics": {
		Name: "panics",
		For:  map[string]Direction{"error-prone": HigherIsMore},
		Doc:  "number of calls that panicked",
	},
	"concurrency": {
		Name:    "concurrency",
		Unknown: "known once a function completed a call",
		For:     map[string]Direction{"concurrent": HigherIsMore},
		Doc:     "mean number of goroutines executing the function while a call runs, the call included (Table 9, concurrency level)",
	},
	"result-size-sd": {
		Name:    "result-size-sd",
		Unknown: "known only for functions whose first non-error result has a size (a string, slice, map or integer), once they returned one; bind changeable to another metric, or leave it out, for programs with few such functions",
		For:     map[string]Direction{"changeable": HigherIsLess},
		Doc: "standard deviation of the size of the returned values (Table 9, computation pattern); " +
			"following the paper's section 4.2 and Table 7, a higher spread is read as less changeable",
	},
	"cyclomatic": {
		Name:    "cyclomatic",
		Unknown: "computed by the build; unknown when the probe table has none",
		Static:  true,
		For:     map[string]Direction{"maintainable": HigherIsLess},
		Doc:     "cyclomatic complexity of the function body (static)",
	},
	"statements": {
		Name:   "statements",
		Static: true,
		For:    map[string]Direction{"maintainable": HigherIsLess},
		Doc:    "number of statements in the function body (static)",
	},
	"params": {
		Name:   "params",
		Static: true,
		For:    map[string]Direction{"maintainable": HigherIsLess},
		Doc:    "number of parameters, receiver included (static)",
	},
}

// Binding maps a criterion to the name of the metric that measures it, like the
// paper's frequencyMetric = INVOCATION_FREQUENCY (Listing 2).
type Binding map[string]string

// DefaultBinding returns the binding used where the configuration is silent: a
// new map the caller may modify. usage-pattern and state-variation have no
// default: Go offers no cheap estimate of user sessions or state changes, so a
// filter using them needs an explicit binding.
func DefaultBinding() Binding {
	return Binding{
		"frequent":     "count",
		"maintainable": "cyclomatic",
		"expensive":    "mean-time",
		"changeable":   "result-size-sd",
		"error-prone":  "errors",
		"concurrent":   "concurrency",
		"latent":       "mean-time",
	}
}

// Errors wrapped by [BindingError].
var (
	ErrUnknownCriterion = errors.New("unknown criterion")
	ErrUnknownMetric    = errors.New("unknown metric")
	ErrUnbound          = errors.New("no metric bound")
)

// BindingError reports a binding entry that names an unknown criterion or
// metric, or a criterion of a filter that has no metric. Err is one of
// ErrUnknownCriterion, ErrUnknownMetric and ErrUnbound.
type BindingError struct {
	Criterion string
	Metric    string // empty for ErrUnbound
	Err       error
}

func (e *BindingError) Error() string {
	switch e.Err {
	case ErrUnknownCriterion:
		return fmt.Sprintf("binding %q: %v (valid: %s)", e.Criterion, e.Err, strings.Join(Criteria, ", "))
	case ErrUnknownMetric:
		return fmt.Sprintf("criterion %q: %v %q (valid: %s)", e.Criterion, e.Err, e.Metric, metricList())
	case ErrUnbound:
		return fmt.Sprintf("criterion %q: %v (bind one of: %s)", e.Criterion, e.Err, metricList())
	}
	return fmt.Sprintf("criterion %q, metric %q: %v", e.Criterion, e.Metric, e.Err)
}

func (e *BindingError) Unwrap() error { return e.Err }

func metricList() string {
	return strings.Join(slices.Sorted(maps.Keys(Metrics)), ", ")
}

// Validate checks every entry of b and, when f is not nil, that every criterion
// f uses is bound. It returns the first problem as a *BindingError, in the order
// of Criteria (then of f), so the result is deterministic.
func (b Binding) Validate(f *Filter) error {
	for _, c := range slices.Sorted(maps.Keys(b)) {
		if !IsCriterion(c) {
			return &BindingError{Criterion: c, Metric: b[c], Err: ErrUnknownCriterion}
		}
	}
	for _, c := range Criteria {
		m, ok := b[c]
		if !ok {
			continue
		}
		if _, ok := Metrics[m]; !ok {
			return &BindingError{Criterion: c, Metric: m, Err: ErrUnknownMetric}
		}
	}
	if f != nil {
		for _, c := range f.Criteria() {
			if _, ok := b[c]; !ok {
				return &BindingError{Criterion: c, Err: ErrUnbound}
			}
		}
	}
	return nil
}
