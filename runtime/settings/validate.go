package settings

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// FieldError is one invalid field found by Validate.
type FieldError struct {
	// Field is the JSON path of the field in Runtime's encoding: "sampling",
	// "writer.onFull", "rules[2].mode", "analysis.metrics.frequent". Callers map it
	// back to where the value came from (a tigris.yaml position, a TIGRIS_* variable).
	Field string
	// Msg quotes the bad value and says what is allowed, without naming the field.
	Msg string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Errors is what Validate returns when fields are invalid: every problem, in field
// order. Its Error text is one line.
type Errors []*FieldError

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// Placeholders are the names Writer.Path may contain in braces.
var Placeholders = []string{"binary", "pid", "time"}

// Validate checks every field of r and returns nil or an Errors value listing all
// problems, in field order. It checks values and the ranges of Limits, not the
// syntax of pointcut patterns or of the criteria filter (see the package
// documentation). It is the one place settings are checked: config and ApplyEnv
// call it, the admin API and the monitor's setters call the Check functions,
// which share its rules.
func (r *Runtime) Validate() error {
	var es Errors
	add := func(field, format string, args ...any) {
		es = append(es, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}

	if !r.Mode.Valid() {
		add("mode", "%q is not a mode (want %s)", r.Mode, alternatives(Modes))
	}
	seen := map[string]bool{}
	for i, p := range r.Pointcuts {
		f := fmt.Sprintf("pointcuts[%d]", i)
		switch {
		case p.Name == "":
			add(f+".name", "empty name (want a name such as repo)")
		case seen[p.Name]:
			add(f+".name", "%q is defined twice", p.Name)
		}
		seen[p.Name] = true
		if strings.TrimSpace(p.Expr) == "" {
			add(f+".expr", "empty expression (want a pointcut such as execution(* shop/repo.*(..)))")
		}
	}
	checkLimit(r, "rules", add)
	rules := r.Rules
	if len(rules) > MaxRules {
		rules = rules[:MaxRules] // one error for a list too long, not one per rule
	}
	for i, rule := range rules {
		f := fmt.Sprintf("rules[%d].", i)
		checkRule(rule, func(field, format string, args ...any) { add(f+field, format, args...) })
	}
	checkLimit(r, "sampling", add)
	checkLimit(r, "coarse-budget", add)

	a := &r.Analysis
	if a.Enabled && strings.TrimSpace(a.Criteria) == "" {
		add("analysis.criteria", "empty filter while analysis is enabled (want e.g. (more frequent ∪ most expensive) ∩ least changeable)")
	}
	for _, k := range slices.Sorted(maps.Keys(a.Metrics)) {
		switch {
		case strings.TrimSpace(k) == "":
			add("analysis.metrics", "empty criterion name")
		case strings.TrimSpace(a.Metrics[k]) == "":
			add("analysis.metrics."+k, "empty metric name")
		}
	}
	checkLimit(r, "analysis.interval", add)
	checkLimit(r, "analysis.window", add)
	checkLimit(r, "analysis.budget", add)

	w := &r.Writer
	if !w.Mode.Valid() {
		add("writer.mode", "%q is not a writer mode (want %s)", w.Mode, alternatives(WriterModes))
	}
	if w.Mode != WriterNull {
		if strings.TrimSpace(w.Path) == "" {
			add("writer.path", "empty path (want a file pattern such as tigris-out/{binary}-{pid}.tgr)")
		} else if msg := checkPlaceholders(w.Path); msg != "" {
			add("writer.path", "%s", msg)
		}
	}
	checkLimit(r, "writer.queue", add)
	if !w.OnFull.Valid() {
		add("writer.onFull", "%q is not a queue-full policy (want %s)", w.OnFull, alternatives(OnFulls))
	}
	checkLimit(r, "writer.rotate", add)
	checkLimit(r, "writer.flush", add)
	checkLimit(r, "queries.max", add)
	checkLimit(r, "queries.maxProbes", add)
	checkLimit(r, "queries.budget", add)

	if msg := checkListen(r.Admin.Listen); msg != "" {
		add("admin.listen", "%s", msg)
	}
	if len(es) == 0 {
		return nil
	}
	return es
}

// checkPlaceholders returns a message for a path with unknown or unclosed {name}
// placeholders, "" when it is fine.
func checkPlaceholders(path string) string {
	rest := path
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			return ""
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return fmt.Sprintf("%q has an unclosed { (want placeholders {%s})", path, strings.Join(Placeholders, "}, {"))
		}
		name := rest[i+1 : i+j]
		if !slices.Contains(Placeholders, name) {
			return fmt.Sprintf("%q has an unknown placeholder {%s} (want {%s})", path, name, strings.Join(Placeholders, "}, {"))
		}
		rest = rest[i+j+1:]
	}
}

// checkListen returns a message for an admin address that is not host:port, ""
// when it is fine or empty (off). It does not resolve the host.
func checkListen(addr string) string {
	if addr == "" {
		return ""
	}
	want := "(want host:port such as 127.0.0.1:7070 or :7070, or empty for off)"
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return fmt.Sprintf("%q has no port %s", addr, want)
	}
	host, port := addr[:i], addr[i+1:]
	if strings.Contains(host, ":") && !(strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]")) {
		return fmt.Sprintf("%q: an IPv6 host must be in brackets %s", addr, want)
	}
	if strings.ContainsAny(host, " \t/") {
		return fmt.Sprintf("%q is not a listen address %s", addr, want)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || port == "" || n > math.MaxUint16 {
		return fmt.Sprintf("%q has a bad port %q %s", addr, port, want)
	}
	return ""
}

// Clone returns a deep copy of r: changing the copy's Rules, Pointcuts or Metrics
// leaves r alone.
func (r *Runtime) Clone() Runtime {
	c := *r
	c.Pointcuts = slices.Clone(r.Pointcuts)
	c.Rules = slices.Clone(r.Rules)
	c.Analysis.Metrics = maps.Clone(r.Analysis.Metrics)
	return c
}
