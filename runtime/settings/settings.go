package settings

import "time"

// Mode is a probe mode.
type Mode string

const (
	Off    Mode = "off"
	Coarse Mode = "coarse"
	Fine   Mode = "fine"
)

// Runtime is the run-time configuration. The zero value is not useful; start from
// Default.
type Runtime struct {
	// Mode is the default mode of every probe not matched by a rule.
	Mode Mode `json:"mode"`
	// Pointcuts are the named pointcuts of tigris.yaml, in file order, so the monitor
	// can build the pointcut environment that rule patterns (and admin requests) may
	// refer to by name.
	Pointcuts []NamedPointcut `json:"pointcuts,omitempty"`
	// Rules are ordered (pointcut pattern → mode) rules; the last match wins.
	Rules []Rule `json:"rules,omitempty"`
	// Sampling is the share of fine-mode traces recorded, in [0,1]: a trace
	// root decides for its whole trace (docs/analysis.md).
	Sampling float64 `json:"sampling"`
	// Summaries puts the result size (len or integer value of the first
	// non-error result) into fine records. There are no argument summaries.
	Summaries bool `json:"summaries,omitempty"`
	// FollowParent makes a trace root whose request carries a remote parent
	// (a W3C traceparent or an OpenTelemetry span context) take the
	// parent's sampled flag as its decision instead of drawing with
	// Sampling. Off by default: tigris's overhead stays under its own rate
	// and budget.
	FollowParent bool `json:"followParent,omitempty"`
	// CoarseBudget is phase 1's share of a function's time that its coarse
	// probe may cost, in [0,1]: a coarse probe costing more times one call
	// in N, with N the least power of two that keeps it within (up to
	// 1024). 0 times every call.
	CoarseBudget float64  `json:"coarseBudget"`
	Analysis     Analysis `json:"analysis"`
	Writer       Writer   `json:"writer"`
	Admin        Admin    `json:"admin"`
	Queries      Queries  `json:"queries,omitempty"`
}

// Queries bounds the monitoring queries the admin endpoint runs (package
// query/live). A zero field takes its default (DefaultQueries).
type Queries struct {
	// Max is how many queries and triggers may run at once.
	Max int `json:"max,omitempty"`
	// MaxProbes is the most probes one query may acquire.
	MaxProbes int `json:"maxProbes,omitempty"`
	// Budget is the most CPU one query's estimated cost may take, as a
	// share of one core.
	Budget float64 `json:"budget,omitempty"`
}

// DefaultQueries are the values of Queries' zero fields.
var DefaultQueries = Queries{Max: 8, MaxProbes: 1000, Budget: 0.05}

// WithDefaults returns q with its zero fields set to DefaultQueries'.
func (q Queries) WithDefaults() Queries {
	if q.Max == 0 {
		q.Max = DefaultQueries.Max
	}
	if q.MaxProbes == 0 {
		q.MaxProbes = DefaultQueries.MaxProbes
	}
	if q.Budget == 0 {
		q.Budget = DefaultQueries.Budget
	}
	return q
}

// NamedPointcut is one entry of tigris.yaml's pointcuts section.
type NamedPointcut struct {
	Name string `json:"name"`
	Expr string `json:"expr"`
}

// Rule switches every probe matching Pattern (a pointcut expression) to Mode.
type Rule struct {
	Pattern string `json:"pattern"`
	Mode    Mode   `json:"mode"`
}

// Analysis configures the two-phase analyzer.
type Analysis struct {
	Enabled bool `json:"enabled"`
	// Criteria is the TigrisDSL relevance filter.
	Criteria string `json:"criteria,omitempty"`
	// Metrics maps a criterion name (frequent, expensive, ...) to the metric backing it.
	Metrics  map[string]string `json:"metrics,omitempty"`
	Interval Duration          `json:"interval"`
	// Window is how much history the statistics cover; 0 means one interval.
	Window Duration `json:"window,omitempty"`
	// Budget is the overhead budget as a share of CPU time (0.02 = 2 %); 0 disables it.
	Budget float64 `json:"budget,omitempty"`
}

// WriterMode selects where fine records go.
type WriterMode string

const (
	WriterAsync WriterMode = "async"
	WriterSync  WriterMode = "sync"
	WriterNull  WriterMode = "null" // discard (MooBench's collecting run)
)

// OnFull is what an async writer does when its queue is full.
type OnFull string

const (
	Drop  OnFull = "drop"
	Block OnFull = "block"
)

// Writer configures the fine-record writer.
type Writer struct {
	Mode WriterMode `json:"mode"`
	// Path is the output file pattern; {binary}, {pid} and {time} are expanded.
	Path   string   `json:"path"`
	Queue  int      `json:"queue"`
	OnFull OnFull   `json:"onFull"`
	Rotate int64    `json:"rotate,omitempty"` // bytes; 0 = never
	Flush  Duration `json:"flush"`
}

// Admin configures the admin HTTP endpoint; an empty Listen disables it.
type Admin struct {
	Listen string `json:"listen,omitempty"`
	Token  string `json:"token,omitempty"`
}

// Duration is a time.Duration that encodes as a Go duration string in JSON.
type Duration time.Duration

// Default returns the configuration used where tigris.yaml is silent.
func Default() Runtime {
	return Runtime{
		Mode:         Coarse,
		Sampling:     1,
		CoarseBudget: 0.02,
		Analysis: Analysis{
			Enabled:  false,
			Criteria: "(more frequent ∪ most expensive) ∩ least changeable",
			// The same bindings as dsl.DefaultBinding (config's tests keep them equal).
			Metrics: map[string]string{
				"frequent":     "count",
				"maintainable": "cyclomatic",
				"expensive":    "mean-time",
				"changeable":   "result-size-sd",
				"error-prone":  "errors",
				"concurrent":   "concurrency",
				"latent":       "mean-time",
			},
			Interval: Duration(2 * time.Minute),
		},
		Writer: Writer{
			Mode:   WriterAsync,
			Path:   "tigris-out/{binary}-{pid}.tgr",
			Queue:  1 << 16,
			OnFull: Block,
			Flush:  Duration(time.Second),
		},
	}
}
