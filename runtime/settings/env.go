package settings

import (
	"errors"
	"fmt"
	"strings"
)

// EnvVar describes one TIGRIS_* variable that ApplyEnv reads.
type EnvVar struct {
	// Name is the variable, e.g. "TIGRIS_SAMPLING".
	Name string
	// Field is the JSON path of the Runtime field it sets (see FieldError).
	Field string
	// Syntax shows the accepted values, e.g. "10% or 0.1".
	Syntax string
	// Help is one line for docs and --help output.
	Help string

	set func(r *Runtime, v string) error
}

// EnvVars are the run-time overrides ApplyEnv applies, in the order it applies them.
// An unset or empty variable changes nothing; to turn something off use its "off"
// value (TIGRIS_ADMIN=off, TIGRIS_RULES=none, TIGRIS_ROTATE=off, TIGRIS_BUDGET=off).
var EnvVars = []EnvVar{
	{Name: "TIGRIS_MODE", Field: "mode", Syntax: "off|coarse|fine",
		Help: "default probe mode at start",
		set: func(r *Runtime, v string) (err error) {
			r.Mode, err = ParseMode(v)
			return err
		}},
	{Name: "TIGRIS_RULES", Field: "rules", Syntax: "[+]mode:pattern; mode:pattern ... | none",
		Help: "replace the mode rules (last match wins); a leading + appends to the configured rules",
		set: func(r *Runtime, v string) error {
			add, appendTo := strings.CutPrefix(strings.TrimSpace(v), "+")
			rules, err := ParseRules(add)
			if err != nil {
				return err
			}
			if appendTo {
				rules = append(r.Rules, rules...)
			}
			r.Rules = rules
			return nil
		}},
	{Name: "TIGRIS_SAMPLING", Field: "sampling", Syntax: "10% or 0.1",
		Help: "share of fine-mode calls recorded",
		set: func(r *Runtime, v string) (err error) {
			r.Sampling, err = ParsePercent(v)
			return err
		}},
	{Name: "TIGRIS_COARSE_BUDGET", Field: "coarse-budget", Syntax: "2% or 0.02, 0 for none",
		Help: "share of a function's time its coarse probe may cost before it times one call in N",
		set: func(r *Runtime, v string) (err error) {
			r.CoarseBudget, err = ParsePercent(v)
			return err
		}},
	{Name: "TIGRIS_SUMMARIES", Field: "summaries", Syntax: "on|off",
		Help: "result sizes in fine records",
		set: func(r *Runtime, v string) (err error) {
			r.Summaries, err = ParseBool(v)
			return err
		}},
	{Name: "TIGRIS_FOLLOW_PARENT", Field: "followParent", Syntax: "on|off",
		Help: "a request's remote parent decides whether its trace is recorded (its sampled flag)",
		set: func(r *Runtime, v string) (err error) {
			r.FollowParent, err = ParseBool(v)
			return err
		}},
	{Name: "TIGRIS_ANALYSIS", Field: "analysis.enabled", Syntax: "on|off",
		Help: "run the two-phase analyzer",
		set: func(r *Runtime, v string) (err error) {
			r.Analysis.Enabled, err = ParseBool(v)
			return err
		}},
	{Name: "TIGRIS_CRITERIA", Field: "analysis.criteria", Syntax: "TigrisDSL filter",
		Help: "relevance filter, e.g. '(more frequent ∪ most expensive) ∩ least changeable'",
		set: func(r *Runtime, v string) error {
			r.Analysis.Criteria = strings.TrimSpace(v)
			return nil
		}},
	{Name: "TIGRIS_METRICS", Field: "analysis.metrics", Syntax: "criterion=metric,...",
		Help: "bind criteria to metrics, merged into the configured bindings",
		set: func(r *Runtime, v string) error {
			m, err := parseMetrics(v)
			if err != nil {
				return err
			}
			if r.Analysis.Metrics == nil {
				r.Analysis.Metrics = map[string]string{}
			}
			for k, x := range m {
				r.Analysis.Metrics[k] = x
			}
			return nil
		}},
	{Name: "TIGRIS_INTERVAL", Field: "analysis.interval", Syntax: "duration, e.g. 2m",
		Help: "time between analysis cycles",
		set: func(r *Runtime, v string) (err error) {
			r.Analysis.Interval, err = ParseDuration(v)
			return err
		}},
	{Name: "TIGRIS_WINDOW", Field: "analysis.window", Syntax: "duration, e.g. 10m; 0 = one interval",
		Help: "history the coarse statistics cover",
		set: func(r *Runtime, v string) (err error) {
			r.Analysis.Window, err = ParseDuration(v)
			return err
		}},
	{Name: "TIGRIS_BUDGET", Field: "analysis.budget", Syntax: "2% or 0.02 | off",
		Help: "overhead budget as a share of CPU time",
		set: func(r *Runtime, v string) (err error) {
			r.Analysis.Budget, err = ParseBudget(v)
			return err
		}},
	{Name: "TIGRIS_WRITER", Field: "writer.mode", Syntax: "async|sync|null",
		Help: "how fine records are written",
		set: func(r *Runtime, v string) (err error) {
			r.Writer.Mode, err = ParseWriterMode(v)
			return err
		}},
	{Name: "TIGRIS_OUT", Field: "writer.path", Syntax: "file pattern with {binary}, {pid}, {time}",
		Help: "trace file path",
		set: func(r *Runtime, v string) error {
			r.Writer.Path = v
			return nil
		}},
	{Name: "TIGRIS_QUEUE", Field: "writer.queue", Syntax: fmt.Sprintf("integer, 1 to %d", MaxQueue),
		Help: "async writer queue length in records",
		set: func(r *Runtime, v string) (err error) {
			r.Writer.Queue, err = ParseQueue(v)
			return err
		}},
	{Name: "TIGRIS_ON_FULL", Field: "writer.onFull", Syntax: "drop|block",
		Help: "what the async writer does when its queue is full",
		set: func(r *Runtime, v string) (err error) {
			r.Writer.OnFull, err = ParseOnFull(v)
			return err
		}},
	{Name: "TIGRIS_ROTATE", Field: "writer.rotate", Syntax: "size, e.g. 256MiB or 1GB | off",
		Help: "start a new trace file after this many bytes",
		set: func(r *Runtime, v string) (err error) {
			r.Writer.Rotate, err = ParseRotate(v)
			return err
		}},
	{Name: "TIGRIS_FLUSH", Field: "writer.flush", Syntax: "duration, e.g. 1s",
		Help: "longest time a record waits in a buffer",
		set: func(r *Runtime, v string) (err error) {
			r.Writer.Flush, err = ParseDuration(v)
			return err
		}},
	{Name: "TIGRIS_ADMIN", Field: "admin.listen", Syntax: "host:port | off",
		Help: "admin HTTP listen address",
		set: func(r *Runtime, v string) error {
			r.Admin.Listen = strings.TrimSpace(v)
			if isOff(v) {
				r.Admin.Listen = ""
			}
			return nil
		}},
	{Name: "TIGRIS_ADMIN_TOKEN", Field: "admin.token", Syntax: "string",
		Help: "bearer token the admin endpoint requires",
		set: func(r *Runtime, v string) error {
			r.Admin.Token = v
			return nil
		}},
}

// parseMetrics parses "frequent=count, expensive=mean-time".
func parseMetrics(s string) (map[string]string, error) {
	m := map[string]string{}
	for _, item := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' }) {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("%q is not a binding (want criterion=metric, e.g. expensive=mean-time)", item)
		}
		m[k] = v
	}
	return m, nil
}

// ApplyEnv applies the TIGRIS_* overrides in EnvVars to r, reading variables with
// getenv (os.Getenv, or a map lookup in tests). On success r has passed Validate. On
// error r is unchanged and the error, one line, names every bad variable, quotes its
// value and says what is allowed:
//
//	TIGRIS_SAMPLING: "lots" is not a percentage (want e.g. 10% or 0.1)
func ApplyEnv(r *Runtime, getenv func(string) string) error {
	c := r.Clone()
	var msgs []string
	set := map[string]string{} // field → variable, for variables that parsed
	for _, v := range EnvVars {
		s := getenv(v.Name)
		if s == "" {
			continue
		}
		next := c.Clone() // a failed set may have written a zero value
		if err := v.set(&next, s); err != nil {
			msgs = append(msgs, v.Name+": "+err.Error())
			continue
		}
		c = next
		set[v.Field] = v.Name
	}
	if err := c.Validate(); err != nil {
		var es Errors
		if !errors.As(err, &es) {
			return err
		}
		for _, fe := range es {
			if name := varFor(set, fe.Field); name != "" {
				msgs = append(msgs, name+": "+fe.Msg)
			} else {
				msgs = append(msgs, fe.Error())
			}
		}
	}
	if len(msgs) > 0 {
		return errors.New(strings.Join(msgs, "; "))
	}
	*r = c
	return nil
}

// varFor returns the variable that set field or a field containing it.
func varFor(set map[string]string, field string) string {
	for f, name := range set {
		if field == f || strings.HasPrefix(field, f+".") || strings.HasPrefix(field, f+"[") {
			return name
		}
	}
	return ""
}
