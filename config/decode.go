package config

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/alecthomas/participle/v2"
	"go.yaml.in/yaml/v3"

	"github.com/tigrisgo/tigris/runtime/pointcut"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// Parse parses and validates the content of a tigris.yaml; filename is only used in
// error positions. Every problem is reported, as an ErrorList, and then the Config
// is nil. An empty document (or one holding only comments) is Default's
// configuration with Path set.
func Parse(filename string, data []byte) (*Config, error) {
	d := &decoder{
		src:   newSource(filename, data),
		where: map[string]place{},
	}
	d.cfg = Default()
	d.cfg.Path = filename

	root, ok := d.parseYAML()
	if ok && root != nil && d.checkAliases(root) {
		d.document(root)
		d.resolve()
		d.validate()
	}
	if !d.adminLinkSet {
		// An endpoint configured in the file is one the user means to use.
		d.cfg.AdminLink = d.cfg.Runtime.Admin.Listen != ""
	}
	if len(d.errs) > 0 {
		d.errs.sort()
		return nil, d.errs
	}
	return d.cfg, nil
}

// place is where a settings field came from, for mapping Validate's errors back.
type place struct {
	key  string // the YAML key path, e.g. "writer.on-full"
	node *yaml.Node
}

// decoder walks the YAML node tree. The first pass (document) checks the shape and
// the scalar values and fills cfg.Runtime; resolve then parses the expressions,
// which need every named pointcut; validate runs settings.Runtime.Validate.
type decoder struct {
	src   *source
	cfg   *Config
	errs  ErrorList
	where map[string]place // settings.FieldError.Field → origin

	named      []namedNode
	include    []exprNode
	exclude    []exprNode
	rules      []exprNode
	criteria   *yaml.Node
	metricKeys []*yaml.Node
	// adminLinkSet reports that admin.link was written.
	adminLinkSet bool
}

// namedNode is where a named pointcut was written.
type namedNode struct {
	name     string
	key, val *yaml.Node
}

// exprNode is a pointcut expression (or name) to parse once all names are known.
type exprNode struct {
	path string // its key path, e.g. "monitor.include[1]"
	val  *yaml.Node
}

// parseYAML parses the text into a node tree; it returns nil for an empty document.
func (d *decoder) parseYAML() (root *yaml.Node, ok bool) {
	defer func() {
		// The YAML parser reports errors by panicking internally and recovering; a
		// panic that escapes anyway must not take the build down with it.
		if r := recover(); r != nil {
			d.errs = append(d.errs, &Error{File: d.src.name, Line: 1, Col: 1, Msg: fmt.Sprintf("yaml: internal parser error: %v", r)})
			root, ok = nil, false
		}
	}()
	dec := yaml.NewDecoder(strings.NewReader(string(d.src.data)))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, true
		}
		d.syntaxError(err)
		return nil, false
	}
	var next yaml.Node
	if err := dec.Decode(&next); err == nil {
		n := &next
		if len(next.Content) > 0 {
			n = next.Content[0]
		}
		d.errorf(n, "", "a config file holds one YAML document, this is a second one")
		return nil, false
	} else if !errors.Is(err, io.EOF) {
		d.syntaxError(err)
		return nil, false
	}
	if len(doc.Content) == 0 {
		return nil, true
	}
	return doc.Content[0], true
}

// syntaxError records a YAML parser error. Those carry a line at most ("yaml: line
// 3: did not find expected key"), sometimes not even that, and no column; the line
// is found by parsing ever longer prefixes of the file until the same error shows.
func (d *decoder) syntaxError(err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, text, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil {
				line, msg = n, text
			}
		}
	}
	// The line YAML names is where the enclosing construct started (a mapping
	// with a bad key several lines down), or missing; the shortest prefix of the
	// file that fails the same way ends at the line with the problem.
	if l := d.src.firstLineFailing(msg); l > 0 {
		line = l
	}
	d.errs = append(d.errs, &Error{File: d.src.name, Line: min(line, len(d.src.lines)), Msg: "yaml: " + msg})
}

// firstLineFailing returns the first line L such that the first L lines of the
// file fail to parse with message msg, 0 if none does. It costs a parse per line,
// so it gives up on files far longer than a config file should be.
func (s *source) firstLineFailing(msg string) int {
	if len(s.lines) > 500 || len(s.data) > 64<<10 {
		return 0
	}
	for l := 1; l <= len(s.lines); l++ {
		end := len(s.data)
		if l < len(s.lines) {
			end = s.lines[l]
		}
		var n yaml.Node
		if err := safeUnmarshal(s.data[:end], &n); err != nil && strings.HasSuffix(err.Error(), msg) {
			return l
		}
	}
	return 0
}

func safeUnmarshal(data []byte, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: internal parser error: %v", r)
		}
	}()
	return yaml.Unmarshal(data, n)
}

// errorf records an error at node n.
func (d *decoder) errorf(n *yaml.Node, key, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.src.name, Line: n.Line, Col: n.Column, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// at notes that settings field came from node n under YAML key.
func (d *decoder) at(field, key string, n *yaml.Node) { d.where[field] = place{key, n} }

// checkAliases refuses a file whose aliases repeat more bytes of values than
// the file holds. Every alias makes the decoder read its anchor's values
// again, and a value can be a pointcut, which costs about 4 kB of allocation
// per byte to parse: a few hundred aliases of one long pointcut (ten bytes
// each) cost as much as megabytes of pointcuts. So the work stays within
// twice the file's. Named pointcuts are the way to share an expression: they
// share its compiled form too.
func (d *decoder) checkAliases(root *yaml.Node) bool {
	sizes := map[*yaml.Node]int{}
	var size func(n *yaml.Node) int // bytes of values below n, aliases expanded
	size = func(n *yaml.Node) int {
		if s, ok := sizes[n]; ok {
			return s
		}
		sizes[n] = 0 // an alias of an enclosing node adds nothing more
		s := len(n.Value)
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			s = size(n.Alias)
		}
		for _, c := range n.Content {
			s += size(c)
		}
		sizes[n] = s
		return s
	}
	limit, repeated := len(d.src.data), 0
	var walk func(n *yaml.Node) bool
	walk = func(n *yaml.Node) bool {
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			if repeated += size(n.Alias); repeated > limit {
				d.errorf(n, "", "aliases repeat more than %d bytes of values, the size of the file (every alias is decoded again; share a pointcut by naming it under pointcuts:)", limit)
				return false
			}
			return true
		}
		for _, c := range n.Content {
			if !walk(c) {
				return false
			}
		}
		return true
	}
	return walk(root)
}

// deref follows aliases.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe names what a node is, for "want X, not Y" messages.
func describe(n *yaml.Node) string {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return strconv.Quote(n.Value)
	}
	return "nothing"
}

// field is one known key of a mapping.
type field struct {
	name string
	set  func(key string, k, v *yaml.Node)
}

// mapping checks that n is a mapping (or null: nothing set) and hands each known
// key to its field, reporting unknown and repeated keys. path is n's key path.
func (d *decoder) mapping(n *yaml.Node, path, want string, fields []field) {
	if isNull(n) {
		return
	}
	m := deref(n)
	if m.Kind != yaml.MappingNode {
		d.errorf(n, path, "want %s, not %s", want, describe(n))
		return
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
	}
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		name, ok := d.key(k, path)
		if !ok {
			continue
		}
		key := join(path, name)
		if first, dup := seen[name]; dup {
			d.errorf(k, key, "set twice (first on line %d)", first.Line)
			continue
		}
		seen[name] = k
		f := -1
		for j := range fields {
			if fields[j].name == name {
				f = j
			}
		}
		if f < 0 {
			d.errorf(k, path, "unknown key %q (%s)", name, suggest(name, names))
			continue
		}
		fields[f].set(key, k, v)
	}
}

// key returns the name of mapping key k, reporting keys that are not plain
// scalars (complex keys, merge keys).
func (d *decoder) key(k *yaml.Node, path string) (string, bool) {
	kk := deref(k)
	switch {
	case kk.Kind != yaml.ScalarNode:
		d.errorf(k, path, "a key must be a name, not %s", describe(k))
		return "", false
	case kk.ShortTag() == "!!merge":
		d.errorf(k, path, "merge keys (<<) are not supported; write the keys out")
		return "", false
	}
	return kk.Value, true
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// suggest returns "did you mean X?" for a near miss, else the list of known names.
func suggest(name string, known []string) string {
	norm := func(s string) string {
		return strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(s))
	}
	// A near miss is at most one edit per three characters away.
	best, bestDist := "", max(1, len([]rune(name))/3)+1
	for _, k := range known {
		if norm(k) == norm(name) {
			return "did you mean " + k + "?"
		}
		if dist := levenshtein(name, k); dist < bestDist {
			best, bestDist = k, dist
		}
	}
	if best != "" {
		return "did you mean " + best + "?"
	}
	return "want " + alternatives(known)
}

// alternatives formats names as "a, b or c".
func alternatives(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// scalar returns the text of scalar n. A null value (an empty value, ~ or null)
// returns ok false without an error: the setting keeps its default.
func (d *decoder) scalar(n *yaml.Node, key, want string) (string, bool) {
	if isNull(n) {
		return "", false
	}
	s := deref(n)
	if s.Kind != yaml.ScalarNode {
		d.errorf(n, key, "want %s, not %s", want, describe(n))
		return "", false
	}
	return s.Value, true
}

// value parses scalar n with parse, reporting parse errors at n.
func value[T any](d *decoder, n *yaml.Node, key, want string, parse func(string) (T, error)) (T, bool) {
	var zero T
	s, ok := d.scalar(n, key, want)
	if !ok {
		return zero, false
	}
	v, err := parse(s)
	if err != nil {
		d.errorf(n, key, "%s", err.Error())
		return zero, false
	}
	return v, true
}

// set parses scalar n into *dst and notes where settings field came from.
func set[T any](d *decoder, dst *T, field, want string, parse func(string) (T, error)) func(key string, k, v *yaml.Node) {
	return func(key string, _, n *yaml.Node) {
		if x, ok := value(d, n, key, want, parse); ok {
			*dst = x
			if field != "" {
				d.at(field, key, n)
			}
		}
	}
}

func parseString(s string) (string, error) { return s, nil }

func parseInlinable(s string) (string, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case InlinableSkip, InlinableProbe:
		return v, nil
	}
	return "", fmt.Errorf("%q is not an inlinable policy (want skip or probe)", s)
}

func parseSmall(s string) (string, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case SmallSkip, SmallProbe:
		return v, nil
	}
	return "", fmt.Errorf("%q is not a small-function policy (want skip or probe)", s)
}

func parsePanics(s string) (string, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case PanicsOwnDefers, PanicsAll:
		return v, nil
	}
	return "", fmt.Errorf("%q is not a panics policy (want own-defers or all)", s)
}

// document reads the top-level mapping.
func (d *decoder) document(root *yaml.Node) {
	r := &d.cfg.Runtime
	d.mapping(root, "", "a mapping with keys version, pointcuts, monitor, analysis, writer, admin and queries", []field{
		{"version", func(key string, _, n *yaml.Node) {
			if s, ok := d.scalar(n, key, "1"); ok && s != strconv.Itoa(Version) {
				d.errorf(n, key, "%q is not a supported version (want %d)", s, Version)
			}
		}},
		{"pointcuts", d.pointcuts},
		{"monitor", func(key string, _, n *yaml.Node) {
			d.mapping(n, key, "a mapping of monitor settings", []field{
				{"include", func(key string, _, n *yaml.Node) { d.include = d.exprList(n, key) }},
				{"exclude", func(key string, _, n *yaml.Node) { d.exclude = d.exprList(n, key) }},
				{"std", set(d, &d.cfg.Std, "", "true or false", settings.ParseBool)},
				{"inlinable", set(d, &d.cfg.Inlinable, "", "skip or probe", parseInlinable)},
				{"small", set(d, &d.cfg.Small, "", "skip or probe", parseSmall)},
				{"panics", set(d, &d.cfg.Panics, "", "own-defers or all", parsePanics)},
				{"floor", set(d, &d.cfg.Floor, "", "true or false", settings.ParseBool)},
				{"mode", set(d, &r.Mode, "mode", "a mode", settings.ParseMode)},
				{"rules", d.rulesList},
				{"sampling", set(d, &r.Sampling, "sampling", "a percentage", settings.ParsePercent)},
				{"summaries", set(d, &r.Summaries, "summaries", "true or false", settings.ParseBool)},
				{"follow-parent", set(d, &r.FollowParent, "followParent", "true or false", settings.ParseBool)},
				{"coarse-budget", set(d, &r.CoarseBudget, "coarse-budget", "a percentage", settings.ParsePercent)},
			})
		}},
		{"analysis", func(key string, _, n *yaml.Node) {
			a := &r.Analysis
			d.mapping(n, key, "a mapping of analysis settings", []field{
				{"enabled", set(d, &a.Enabled, "analysis.enabled", "true or false", settings.ParseBool)},
				{"criteria", func(key string, k, n *yaml.Node) {
					if s, ok := d.scalar(n, key, "a TigrisDSL filter"); ok {
						a.Criteria = s
						d.criteria = n
						d.at("analysis.criteria", key, n)
					}
				}},
				{"metrics", d.metrics},
				{"interval", set(d, &a.Interval, "analysis.interval", "a duration", settings.ParseDuration)},
				{"window", set(d, &a.Window, "analysis.window", "a duration", settings.ParseDuration)},
				{"budget", set(d, &a.Budget, "analysis.budget", "a percentage", settings.ParseBudget)},
			})
		}},
		{"writer", func(key string, _, n *yaml.Node) {
			w := &r.Writer
			d.mapping(n, key, "a mapping of writer settings", []field{
				{"mode", set(d, &w.Mode, "writer.mode", "a writer mode", settings.ParseWriterMode)},
				{"path", set(d, &w.Path, "writer.path", "a file path", parseString)},
				{"queue", set(d, &w.Queue, "writer.queue", "an integer", settings.ParseQueue)},
				{"on-full", set(d, &w.OnFull, "writer.onFull", "drop or block", settings.ParseOnFull)},
				{"rotate", set(d, &w.Rotate, "writer.rotate", "a size", settings.ParseRotate)},
				{"flush", set(d, &w.Flush, "writer.flush", "a duration", settings.ParseDuration)},
			})
		}},
		{"admin", func(key string, _, n *yaml.Node) {
			a := &r.Admin
			d.mapping(n, key, "a mapping of admin settings", []field{
				{"listen", set(d, &a.Listen, "admin.listen", "host:port", parseString)},
				{"token", set(d, &a.Token, "admin.token", "a string", parseString)},
				{"link", func(key string, k, n *yaml.Node) {
					d.adminLinkSet = !isNull(n)
					set(d, &d.cfg.AdminLink, "", "true or false", settings.ParseBool)(key, k, n)
				}},
			})
		}},
		{"queries", func(key string, _, n *yaml.Node) {
			q := &r.Queries
			d.mapping(n, key, "a mapping of query limits", []field{
				{"max", set(d, &q.Max, "queries.max", "an integer", settings.ParseCount)},
				{"max-probes", set(d, &q.MaxProbes, "queries.maxProbes", "an integer", settings.ParseCount)},
				{"budget", set(d, &q.Budget, "queries.budget", "a percentage", settings.ParsePercent)},
			})
		}},
	})
}

// pointcuts reads the pointcuts section: name → expression.
func (d *decoder) pointcuts(key string, _, n *yaml.Node) {
	if isNull(n) {
		return
	}
	m := deref(n)
	if m.Kind != yaml.MappingNode {
		d.errorf(n, key, "want a mapping of name: pointcut expression, not %s", describe(n))
		return
	}
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		name, ok := d.key(k, key)
		if !ok {
			continue
		}
		path := join(key, name)
		if first, dup := seen[name]; dup {
			d.errorf(k, path, "defined twice (first on line %d)", first.Line)
			continue
		}
		seen[name] = k
		if !isIdent(name) {
			// pointcut.NewEnv checks this too, and reserved words; this message
			// says what a name may be.
			d.errorf(k, path, "%q is not a pointcut name (want an identifier: letters, digits and _, not starting with a digit)", name)
			continue
		}
		expr, ok := d.scalar(v, path, "a pointcut expression")
		if !ok {
			if isNull(v) {
				d.errorf(k, path, "no expression (want e.g. %s: execution(* example.com/shop/repo.*(..)))", name)
			}
			continue
		}
		d.named = append(d.named, namedNode{name: name, key: k, val: deref(v)})
		i := len(d.cfg.Named)
		d.cfg.Named = append(d.cfg.Named, pointcut.Named{Name: name, Expr: expr})
		d.at(fmt.Sprintf("pointcuts[%d].name", i), path, k)
		d.at(fmt.Sprintf("pointcuts[%d].expr", i), path, v)
	}
}

func isIdent(s string) bool {
	for i, r := range s {
		if !(r == '_' || unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	return s != ""
}

// exprList reads include or exclude: a list of names or expressions, or one.
func (d *decoder) exprList(n *yaml.Node, key string) []exprNode {
	if isNull(n) {
		return nil
	}
	items, isList := []*yaml.Node{n}, false
	if s := deref(n); s.Kind == yaml.SequenceNode {
		items, isList = s.Content, true
	}
	var out []exprNode
	for i, it := range items {
		path := key
		if isList {
			path = fmt.Sprintf("%s[%d]", key, i)
		}
		s, ok := d.scalar(it, path, "a pointcut name or expression")
		if !ok {
			if isNull(it) {
				d.errorf(it, path, "empty entry (want a pointcut name or expression)")
			}
			continue
		}
		if strings.TrimSpace(s) == "" {
			d.errorf(it, path, "empty entry (want a pointcut name or expression)")
			continue
		}
		out = append(out, exprNode{path: path, val: deref(it)})
	}
	return out
}

// rulesList reads monitor.rules: a list of one-key mappings mode: pattern.
func (d *decoder) rulesList(key string, _, n *yaml.Node) {
	if isNull(n) {
		return
	}
	seq := deref(n)
	if seq.Kind != yaml.SequenceNode {
		d.errorf(n, key, "want a list of mode: pointcut rules, not %s", describe(n))
		return
	}
	const example = "(want one mode: pointcut pair, e.g. - fine: execution(* example.com/shop/repo.*(..)))"
	for i, it := range seq.Content {
		path := fmt.Sprintf("%s[%d]", key, i)
		m := deref(it)
		if m.Kind != yaml.MappingNode || len(m.Content) != 2 {
			d.errorf(it, path, "%s is not a rule %s", describe(it), example)
			continue
		}
		k, v := m.Content[0], m.Content[1]
		name, ok := d.key(k, path)
		if !ok {
			continue
		}
		mode, err := settings.ParseMode(name)
		if err != nil {
			d.errorf(k, path, "%s", err.Error())
			continue
		}
		pat, ok := d.scalar(v, path, "a pointcut name or expression")
		if !ok || strings.TrimSpace(pat) == "" {
			if ok || isNull(v) {
				d.errorf(k, path, "no pattern %s", example)
			}
			continue
		}
		j := len(d.cfg.Runtime.Rules)
		d.cfg.Runtime.Rules = append(d.cfg.Runtime.Rules, settings.Rule{Pattern: pat, Mode: mode})
		d.rules = append(d.rules, exprNode{path: path, val: deref(v)})
		d.at(fmt.Sprintf("rules[%d].mode", j), path, k)
		d.at(fmt.Sprintf("rules[%d].pattern", j), path, v)
	}
}

// metrics reads analysis.metrics: criterion → metric, merged over the defaults.
func (d *decoder) metrics(key string, _, n *yaml.Node) {
	if isNull(n) {
		return
	}
	m := deref(n)
	if m.Kind != yaml.MappingNode {
		d.errorf(n, key, "want a mapping of criterion: metric, not %s", describe(n))
		return
	}
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		name, ok := d.key(k, key)
		if !ok {
			continue
		}
		path := join(key, name)
		if first, dup := seen[name]; dup {
			d.errorf(k, path, "set twice (first on line %d)", first.Line)
			continue
		}
		seen[name] = k
		metric, ok := d.scalar(v, path, "a metric name")
		if !ok {
			if isNull(v) {
				d.errorf(k, path, "no metric (want e.g. %s: count)", name)
			}
			continue
		}
		d.cfg.Runtime.Analysis.Metrics[name] = metric
		d.metricKeys = append(d.metricKeys, k)
		d.at("analysis.metrics."+name, path, v)
	}
}

// resolve parses the expressions: named pointcuts, include, exclude, rules and the
// criteria filter.
func (d *decoder) resolve() {
	d.checkAnalysis()
	c := d.cfg
	env, err := pointcut.NewEnv(c.Named)
	if err != nil {
		d.envError(err)
		return
	}
	c.Env = env
	for _, nm := range c.Named {
		c.Runtime.Pointcuts = append(c.Runtime.Pointcuts, settings.NamedPointcut{Name: nm.Name, Expr: nm.Expr})
	}

	parse := func(e exprNode) *pointcut.Pointcut {
		p, err := env.Parse(e.val.Value)
		if err != nil {
			d.exprError(e.val, e.path, err)
			return nil
		}
		return p
	}
	// Instrument combines every include and exclude entry, each within
	// pointcut.MaxTerms; their sum must be too, or every match would walk more.
	terms, over := 0, false
	parseAll := func(list []exprNode, dst *[]string) ([]*pointcut.Pointcut, bool) {
		var ps []*pointcut.Pointcut
		for _, e := range list {
			*dst = append(*dst, e.val.Value)
			p := parse(e)
			if p == nil {
				continue
			}
			if terms += p.Terms(); terms > pointcut.MaxTerms && !over {
				over = true
				d.errorf(e.val, e.path, "the include and exclude entries up to here expand to more than %d terms together, with named pointcuts expanded (every use of a name counts its whole expression again)", pointcut.MaxTerms)
			}
			ps = append(ps, p)
		}
		return ps, len(ps) == len(list) && !over
	}
	inc, incOK := parseAll(d.include, &c.Include)
	exc, excOK := parseAll(d.exclude, &c.Exclude)
	switch {
	case !incOK || !excOK || len(inc) == 0:
		// Errors reported, or nothing included: Instrument stays nil.
	case len(exc) == 0:
		c.Instrument = pointcut.Or(inc...)
	default:
		c.Instrument = pointcut.And(pointcut.Or(inc...), pointcut.Not(pointcut.Or(exc...)))
	}
	for _, e := range d.rules {
		parse(e)
	}
}

// exprError reports an expression parser error at the position inside the scalar
// that it points to.
//
// Parser messages may mention other positions in the expression ("expected ")" to
// close "(" at 1:10"); those are rewritten to file positions too.
func (d *decoder) exprError(n *yaml.Node, key string, err error) {
	off, msg, _ := exprOffset(n.Value, err)
	// "Unexpected end" points after the last token, not after trailing newlines.
	off = min(off, len(strings.TrimRightFunc(n.Value, unicode.IsSpace)))
	line, col := d.src.exprPos(n, off)
	msg = exprPosInMsg.ReplaceAllStringFunc(msg, func(m string) string {
		sub := exprPosInMsg.FindStringSubmatch(m)
		l, _ := strconv.Atoi(sub[1])
		c, _ := strconv.Atoi(sub[2])
		fl, fc := d.src.exprPos(n, runeOffset(n.Value, l, c))
		return fmt.Sprintf("at %d:%d", fl, fc)
	})
	d.errs = append(d.errs, &Error{File: d.src.name, Line: line, Col: col, Key: key, Msg: msg})
}

// exprPosInMsg matches an expression-relative "at line:col" in a parser message.
var exprPosInMsg = regexp.MustCompile(`\bat (\d{1,6}):(\d{1,6})\b`)

// envError reports the errors of pointcut.NewEnv, each a *DefinitionError, at
// the named pointcut it is about: inside the expression for a parse error, at the
// name otherwise.
func (d *decoder) envError(err error) {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var de *pointcut.DefinitionError
		if !errors.As(e, &de) || de.Index < 0 || de.Index >= len(d.named) {
			d.errs = append(d.errs, &Error{File: d.src.name, Line: 1, Col: 1, Key: "pointcuts", Msg: e.Error()})
			continue
		}
		nm := d.named[de.Index]
		key := "pointcuts." + nm.name
		var perr participle.Error
		if errors.As(de.Err, &perr) {
			d.exprError(nm.val, key, de.Err)
		} else {
			d.errorf(nm.key, key, "%s", de.Err.Error())
		}
	}
}

// validate runs settings.Runtime.Validate and reports its errors where the bad
// values were written.
func (d *decoder) validate() {
	err := d.cfg.Runtime.Validate()
	if err == nil {
		return
	}
	var fes settings.Errors
	if !errors.As(err, &fes) {
		d.errs = append(d.errs, &Error{File: d.src.name, Line: 1, Col: 1, Msg: err.Error()})
		return
	}
	for _, fe := range fes {
		if p, ok := d.where[fe.Field]; ok {
			d.errorf(p.node, p.key, "%s", fe.Msg)
			continue
		}
		// A default that became invalid through another setting, e.g. analysis
		// enabled with an empty filter: report it at the top of the file.
		d.errs = append(d.errs, &Error{File: d.src.name, Line: 1, Col: 1, Key: yamlKey(fe.Field), Msg: fe.Msg})
	}
}

// yamlKey turns a settings field path into the tigris.yaml key that sets it.
func yamlKey(field string) string {
	switch {
	case field == "mode" || field == "sampling" || field == "summaries" || strings.HasPrefix(field, "rules"):
		return "monitor." + field
	case field == "followParent":
		return "monitor.follow-parent"
	case field == "writer.onFull":
		return "writer.on-full"
	}
	return field
}
