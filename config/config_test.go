package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/internal/sorted"
	"github.com/tigrisgo/tigris/runtime/dsl"
	"github.com/tigrisgo/tigris/runtime/pointcut"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// full is the example of docs/config.md with every key set.
const full = `version: 1
pointcuts:                 # named pointcuts, name: expression
  repo: execution(* example.com/shop/repo.*(..))
monitor:
  include: [repo, "execution(* example.com/shop/...*(..))"]
  exclude: ["execution(* *.String())"]
  std: false
  mode: coarse
  rules:
    - fine: execution(* example.com/shop/repo.(*Store).Find*(..))
    - off: repo
  sampling: 10%
  summaries: true
analysis:
  enabled: true
  criteria: "(more frequent ∪ most expensive) ∩ least changeable"
  metrics: {frequent: count, expensive: mean-time, changeable: result-size-sd}
  interval: 2m
  window: 10m
  budget: 2%
writer:
  mode: async
  path: tigris-out/{binary}-{pid}.tgr
  queue: 65536
  on-full: drop
  rotate: 256MiB
  flush: 1s
admin:
  listen: 127.0.0.1:7070
  token: "s3cret"
`

func TestParseFull(t *testing.T) {
	c, err := Parse("tigris.yaml", []byte(full))
	if err != nil {
		t.Fatal(err)
	}
	wantNamed := []pointcut.Named{{Name: "repo", Expr: "execution(* example.com/shop/repo.*(..))"}}
	if !reflect.DeepEqual(c.Named, wantNamed) {
		t.Errorf("Named = %v", c.Named)
	}
	if want := []string{"repo", "execution(* example.com/shop/...*(..))"}; !reflect.DeepEqual(c.Include, want) {
		t.Errorf("Include = %q", c.Include)
	}
	if want := []string{"execution(* *.String())"}; !reflect.DeepEqual(c.Exclude, want) {
		t.Errorf("Exclude = %q", c.Exclude)
	}
	if c.Instrument == nil || c.Env == nil || c.Std || c.Path != "tigris.yaml" {
		t.Errorf("Instrument %v, Env %v, Std %v, Path %q", c.Instrument, c.Env, c.Std, c.Path)
	}
	want := settings.Default()
	want.Pointcuts = []settings.NamedPointcut{{Name: "repo", Expr: "execution(* example.com/shop/repo.*(..))"}}
	want.Rules = []settings.Rule{
		{Pattern: "execution(* example.com/shop/repo.(*Store).Find*(..))", Mode: settings.Fine},
		{Pattern: "repo", Mode: settings.Off},
	}
	want.Sampling = 0.1
	want.Summaries = true
	want.Analysis.Enabled = true
	want.Analysis.Window = settings.Duration(10 * time.Minute)
	want.Analysis.Budget = 0.02
	want.Writer.OnFull = settings.Drop
	want.Writer.Rotate = 256 << 20
	want.Admin = settings.Admin{Listen: "127.0.0.1:7070", Token: "s3cret"}
	if !reflect.DeepEqual(c.Runtime, want) {
		t.Errorf("Runtime:\n got %+v\nwant %+v", c.Runtime, want)
	}
	if _, err := c.Runtime.Encode(); err != nil {
		t.Error(err)
	}
}

func TestParseEmpty(t *testing.T) {
	for _, src := range []string{"", "# nothing yet\n", "~\n", "---\n", "version: 1\nmonitor:\nwriter: ~\nanalysis: {}\n"} {
		c, err := Parse("tigris.yaml", []byte(src))
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if c.Instrument != nil || c.Env == nil || !reflect.DeepEqual(c.Runtime, settings.Default()) {
			t.Errorf("%q: not the default: %+v", src, c)
		}
	}
}

func TestDefault(t *testing.T) {
	c := Default()
	if c.Env == nil || c.Instrument != nil || c.Path != "" || !reflect.DeepEqual(c.Runtime, settings.Default()) {
		t.Errorf("Default() = %+v", c)
	}
}

// The run-time default bindings must be the dsl's, which settings cannot import.
func TestDefaultBindingMatchesDSL(t *testing.T) {
	got := settings.Default().Analysis.Metrics
	if want := dsl.DefaultBinding(); !maps.Equal(got, want) {
		t.Errorf("settings.Default().Analysis.Metrics = %v\ndsl.DefaultBinding() = %v", got, want)
	}
	d := settings.Default()
	if err := dsl.Binding(d.Analysis.Metrics).Validate(dsl.MustParse(d.Analysis.Criteria)); err != nil {
		t.Error(err)
	}
}

func TestParseForms(t *testing.T) {
	c, err := Parse("tigris.yaml", []byte(`
x-anchors: &repo execution(* shop/repo.*(..))
`))
	if err == nil {
		t.Errorf("unknown top-level key accepted: %+v", c)
	}
	c, err = Parse("tigris.yaml", []byte(`pointcuts:
  repo: &r execution(* shop/repo.*(..))
monitor:
  include: repo            # one entry without a list
  exclude: *r
  std: on
  mode: FINE
  sampling: 0.25
analysis:
  budget: off
  criteria: |
    more frequent
    ∪ most expensive
writer:
  queue: 0x100
  rotate: off
  path: ~                  # null: keep the default
admin:
  listen: "[::1]:7070"
`))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Include, []string{"repo"}) || !reflect.DeepEqual(c.Exclude, []string{"execution(* shop/repo.*(..))"}) {
		t.Errorf("Include %q, Exclude %q", c.Include, c.Exclude)
	}
	r := c.Runtime
	if !c.Std || r.Mode != settings.Fine || r.Sampling != 0.25 || r.Analysis.Budget != 0 || r.Writer.Queue != 256 ||
		r.Writer.Rotate != 0 || r.Writer.Path != settings.Default().Writer.Path || r.Admin.Listen != "[::1]:7070" ||
		r.Analysis.Criteria != "more frequent\n∪ most expensive\n" {
		t.Errorf("got %+v, Std %v", r, c.Std)
	}
}

// TestErrors has one case per class of error, with the exact text of every error.
func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		// Shape: unknown, repeated and mistyped keys.
		{"unknown top key", "version: 1\nmonitr:\n  mode: fine\n",
			[]string{`tigris.yaml:2:1: unknown key "monitr" (did you mean monitor?)`}},
		{"unknown key suggestion", "monitor:\n  sampleing: 10%\n",
			[]string{`tigris.yaml:2:3: monitor: unknown key "sampleing" (did you mean sampling?)`}},
		{"unknown key spelling", "writer:\n  on_full: drop\n",
			[]string{`tigris.yaml:2:3: writer: unknown key "on_full" (did you mean on-full?)`}},
		{"unknown key list", "writer:\n  colour: red\n",
			[]string{`tigris.yaml:2:3: writer: unknown key "colour" (want mode, path, queue, on-full, rotate or flush)`}},
		{"unknown key far from all", "monitor:\n  fine: x\n",
			[]string{`tigris.yaml:2:3: monitor: unknown key "fine" (want include, exclude, std, inlinable, small, panics, floor, mode, rules, sampling, summaries, follow-parent or coarse-budget)`}},
		{"panics policy", "monitor:\n  panics: some\n",
			[]string{`tigris.yaml:2:11: monitor.panics: "some" is not a panics policy (want own-defers or all)`}},
		{"repeated key", "monitor:\n  mode: fine\n  mode: off\n",
			[]string{`tigris.yaml:3:3: monitor.mode: set twice (first on line 2)`}},
		{"merge key", "a: &a {mode: fine}\n",
			[]string{`tigris.yaml:1:1: unknown key "a" (want version, pointcuts, monitor, analysis, writer, admin or queries)`}},
		{"merge key in section", "monitor:\n  <<: {mode: fine}\n",
			[]string{`tigris.yaml:2:3: monitor: merge keys (<<) are not supported; write the keys out`}},
		{"complex key", "monitor:\n  ? [a]\n  : 1\n",
			[]string{`tigris.yaml:2:5: monitor: a key must be a name, not a list`}},
		{"top not mapping", "- a\n",
			[]string{`tigris.yaml:1:1: want a mapping with keys version, pointcuts, monitor, analysis, writer, admin and queries, not a list`}},
		{"section not mapping", "monitor: [a]\n",
			[]string{`tigris.yaml:1:10: monitor: want a mapping of monitor settings, not a list`}},
		{"scalar not mapping", "writer: async\n",
			[]string{`tigris.yaml:1:9: writer: want a mapping of writer settings, not "async"`}},
		{"mapping not scalar", "monitor:\n  mode: {a: 1}\n",
			[]string{`tigris.yaml:2:9: monitor.mode: want a mode, not a mapping`}},
		{"list not scalar", "writer:\n  path: [a, b]\n",
			[]string{`tigris.yaml:2:9: writer.path: want a file path, not a list`}},
		{"version", "version: 2\n",
			[]string{`tigris.yaml:1:10: version: "2" is not a supported version (want 1)`}},

		// Values.
		{"mode", "version: 1\nmonitor:\n  mode: fast\n",
			[]string{`tigris.yaml:3:9: monitor.mode: "fast" is not a mode (want off, coarse or fine)`}},
		{"std", "monitor:\n  std: maybe\n",
			[]string{`tigris.yaml:2:8: monitor.std: "maybe" is not a switch (want on or off, true or false)`}},
		{"sampling syntax", "monitor:\n  sampling: lots\n",
			[]string{`tigris.yaml:2:13: monitor.sampling: "lots" is not a percentage (want e.g. 10% or 0.1)`}},
		{"sampling range", "monitor:\n  sampling: 150%\n",
			[]string{`tigris.yaml:2:13: monitor.sampling: 150% is out of range (want 0% to 100%)`}},
		{"summaries", "monitor:\n  summaries: 2\n",
			[]string{`tigris.yaml:2:14: monitor.summaries: "2" is not a switch (want on or off, true or false)`}},
		{"enabled", "analysis:\n  enabled: sometimes\n",
			[]string{`tigris.yaml:2:12: analysis.enabled: "sometimes" is not a switch (want on or off, true or false)`}},
		{"interval syntax", "analysis:\n  interval: 2 minutes\n",
			[]string{`tigris.yaml:2:13: analysis.interval: "2 minutes" is not a duration (want e.g. 2m, 30s or 1h30m)`}},
		// The limits of settings.Limits, reported where the value is (issue 22).
		{"interval too short", "analysis:\n  interval: 1ns\n",
			[]string{`tigris.yaml:2:13: analysis.interval: 1ns is shorter than the minimum 100ms (want e.g. 2m)`}},
		{"sampling negative zero", "monitor:\n  sampling: -0%\n",
			[]string{`tigris.yaml:2:13: monitor.sampling: -0 is negative zero (write 0; want 0% to 100%)`}},
		{"sampling denormal", "monitor:\n  sampling: 4.9e-324\n",
			[]string{`tigris.yaml:2:13: monitor.sampling: 5e-324 is below the smallest positive share, 0.0000001% (1e-09), which the sampler can tell from 0 (write 0 for none)`}},
		{"budget NaN", "analysis:\n  budget: .nan\n",
			[]string{`tigris.yaml:2:11: analysis.budget: ".nan" is not a percentage (want e.g. 10% or 0.1)`}},
		{"queue too long", "writer:\n  queue: 0x40000000\n",
			[]string{`tigris.yaml:2:10: writer.queue: 1073741824 is not a queue length (want an integer from 1 to 16777216)`}},
		{"rotate too small", "writer:\n  rotate: 64KiB\n",
			[]string{`tigris.yaml:2:11: writer.rotate: 64KiB is smaller than the minimum 1MiB (want a size such as 256MiB, or 0 to never rotate)`}},
		{"flush too short", "writer:\n  flush: 1ms\n",
			[]string{`tigris.yaml:2:10: writer.flush: 1ms is shorter than the minimum 10ms (want e.g. 1s)`}},
		{"interval range", "analysis:\n  interval: -2m\n",
			[]string{`tigris.yaml:2:13: analysis.interval: -2m0s is shorter than the minimum 100ms (want e.g. 2m)`}},
		{"window", "analysis:\n  window: -1s\n",
			[]string{`tigris.yaml:2:11: analysis.window: -1s is negative (want 0 for one interval, or e.g. 10m)`}},
		{"budget", "analysis:\n  budget: 100%\n",
			[]string{`tigris.yaml:2:11: analysis.budget: 100% is out of range (want 0% to less than 100%; 0 disables the budget)`}},
		{"enabled without criteria", "analysis:\n  enabled: true\n  criteria: \"\"\n",
			[]string{`tigris.yaml:3:13: analysis.criteria: empty filter while analysis is enabled (want e.g. (more frequent ∪ most expensive) ∩ least changeable)`}},
		{"writer mode", "writer:\n  mode: kafka\n",
			[]string{`tigris.yaml:2:9: writer.mode: "kafka" is not a writer mode (want async, sync or null)`}},
		{"path empty", "writer:\n  path: \"\"\n",
			[]string{`tigris.yaml:2:9: writer.path: empty path (want a file pattern such as tigris-out/{binary}-{pid}.tgr)`}},
		{"path placeholder", "writer:\n  path: out/{host}.tgr\n",
			[]string{`tigris.yaml:2:9: writer.path: "out/{host}.tgr" has an unknown placeholder {host} (want {binary}, {pid}, {time})`}},
		{"queue syntax", "writer:\n  queue: lots\n",
			[]string{`tigris.yaml:2:10: writer.queue: "lots" is not a queue length (want an integer from 1 to 16777216)`}},
		{"queue range", "writer:\n  queue: 0\n",
			[]string{`tigris.yaml:2:10: writer.queue: 0 is not a queue length (want an integer from 1 to 16777216)`}},
		{"on-full", "writer:\n  on-full: wait\n",
			[]string{`tigris.yaml:2:12: writer.on-full: "wait" is not a queue-full policy (want drop or block)`}},
		{"rotate", "writer:\n  rotate: big\n",
			[]string{`tigris.yaml:2:11: writer.rotate: "big" is not a size (want e.g. 256MiB, 1GB or a number of bytes)`}},
		{"flush", "writer:\n  flush: 0s\n",
			[]string{`tigris.yaml:2:10: writer.flush: 0s is shorter than the minimum 10ms (want e.g. 1s)`}},
		{"listen", "admin:\n  listen: 7070\n",
			[]string{`tigris.yaml:2:11: admin.listen: "7070" has no port (want host:port such as 127.0.0.1:7070 or :7070, or empty for off)`}},

		// Pointcuts, include, exclude, rules.
		{"pointcut name", "pointcuts:\n  my repo: execution(* a.F())\n",
			[]string{`tigris.yaml:2:3: pointcuts.my repo: "my repo" is not a pointcut name (want an identifier: letters, digits and _, not starting with a digit)`}},
		{"pointcut twice", "pointcuts:\n  a: execution(* a.F())\n  a: execution(* a.G())\n",
			[]string{`tigris.yaml:3:3: pointcuts.a: defined twice (first on line 2)`}},
		{"pointcut empty", "pointcuts:\n  repo:\n",
			[]string{`tigris.yaml:2:3: pointcuts.repo: no expression (want e.g. repo: execution(* example.com/shop/repo.*(..)))`}},
		{"include type", "monitor:\n  include: [{a: 1}]\n",
			[]string{`tigris.yaml:2:13: monitor.include[0]: want a pointcut name or expression, not a mapping`}},
		{"include empty", "pointcuts:\n  a: execution(* a.F())\nmonitor:\n  include: [a, \"\"]\n",
			[]string{`tigris.yaml:4:16: monitor.include[1]: empty entry (want a pointcut name or expression)`}},
		{"rules type", "monitor:\n  rules: fine\n",
			[]string{`tigris.yaml:2:10: monitor.rules: want a list of mode: pointcut rules, not "fine"`}},
		{"rule not a pair", "monitor:\n  rules:\n    - execution(* a.*(..))\n",
			[]string{`tigris.yaml:3:7: monitor.rules[0]: "execution(* a.*(..))" is not a rule (want one mode: pointcut pair, e.g. - fine: execution(* example.com/shop/repo.*(..)))`}},
		{"rule two pairs", "monitor:\n  rules:\n    - {fine: a, off: b}\n",
			[]string{`tigris.yaml:3:7: monitor.rules[0]: a mapping is not a rule (want one mode: pointcut pair, e.g. - fine: execution(* example.com/shop/repo.*(..)))`}},
		{"rule mode", "monitor:\n  rules:\n    - fine: execution(* a.F())\n    - fast: b\n",
			[]string{`tigris.yaml:4:7: monitor.rules[1]: "fast" is not a mode (want off, coarse or fine)`}},
		{"rule no pattern", "monitor:\n  rules:\n    - fine:\n",
			[]string{`tigris.yaml:3:7: monitor.rules[0]: no pattern (want one mode: pointcut pair, e.g. - fine: execution(* example.com/shop/repo.*(..)))`}},

		// Pointcut expressions: the column points into the expression.
		{"pointcut plain", "pointcuts:\n  repo: execution(* example.com/shop/repo.*(..)\n",
			[]string{`tigris.yaml:2:48: pointcuts.repo: expected ")" to close "(" at 2:18`}},
		{"pointcut double-quoted in flow list", "pointcuts:\n  repo: execution(* a.F(..))\nmonitor:\n  include: [repo, \"execution(* a.F(..)))\"]\n",
			[]string{`tigris.yaml:4:40: monitor.include[1]: unexpected ")" without a matching opening bracket`}},
		{"pointcut unknown name", "pointcuts:\n  repo: execution(* a.F(..))\nmonitor:\n  include: [rpeo]\n",
			[]string{`tigris.yaml:4:13: monitor.include[0]: unknown pointcut "rpeo"; defined: repo`}},
		{"pointcut unknown name, none defined", "monitor:\n  include: [everything]\n",
			[]string{`tigris.yaml:2:13: monitor.include[0]: unknown pointcut "everything"; no pointcuts are named (the pointcuts section names them), and an expression starts with execution(, call(, within(, args( or a predicate such as exported()`}},
		{"pointcut unknown name in definition", "pointcuts:\n  a: undefined\n  b: a\n",
			[]string{`tigris.yaml:2:6: pointcuts.a: unknown pointcut "undefined"; defined: a, b`}},
		{"pointcut reserved name", "pointcuts:\n  execution: execution(* a.F(..))\n",
			[]string{`tigris.yaml:2:3: pointcuts.execution: name "execution" is reserved`}},
		{"pointcut cycle", "pointcuts:\n  a: b || execution(* a.F(..))\n  b: execution(* a.G(..)) || a\n",
			[]string{`tigris.yaml:3:30: pointcuts.b: pointcut cycle: a -> b -> a`}},
		{"pointcut single-quoted rule", "monitor:\n  rules:\n    - fine: 'executon(* a.F(..))'\n",
			[]string{`tigris.yaml:3:14: monitor.rules[0]: unknown designator executon(; expected execution(...), call(...)...`}},
		{"pointcut literal block", "monitor:\n  exclude: |\n    execution(* a.F(..))\n      && within(\n",
			[]string{`tigris.yaml:4:17: monitor.exclude: expected ")" to close "(" at 4:16`}},
		{"pointcut several", "pointcuts:\n  a: execution(* a.F(..)\n  b: execution(* b.F(..)\n",
			[]string{
				`tigris.yaml:2:25: pointcuts.a: expected ")" to close "(" at 2:15`,
				`tigris.yaml:3:25: pointcuts.b: expected ")" to close "(" at 3:15`,
			}},

		// Analysis metrics and the DSL.
		{"metric criterion", "analysis:\n  metrics:\n    frequnt: count\n",
			[]string{`tigris.yaml:3:5: analysis.metrics: unknown criterion "frequnt" (did you mean frequent?)`}},
		{"metric name", "analysis:\n  metrics:\n    frequent: counts\n",
			[]string{`tigris.yaml:3:15: analysis.metrics.frequent: unknown metric "counts" (did you mean count?)`}},
		{"metrics type", "analysis:\n  metrics: [count]\n",
			[]string{`tigris.yaml:2:12: analysis.metrics: want a mapping of criterion: metric, not a list`}},
		{"dsl plain", "analysis:\n  criteria: more frequnt\n",
			[]string{`tigris.yaml:2:18: analysis.criteria: expected a criterion after "more": "frequnt" is not one; did you mean "frequent"? (valid: ` + strings.Join(dsl.Criteria, ", ") + `)`}},
		{"dsl unknown word", "analysis:\n  criteria: most expensive ∪ frequnt\n",
			[]string{`tigris.yaml:2:30: analysis.criteria: unknown criterion "frequnt"; did you mean "frequent"? (valid: ` + strings.Join(dsl.Criteria, ", ") + `)`}},
		{"dsl double-quoted after non-ASCII", "analysis:\n  criteria: \"(more frequent ∪ most expensiv)\"\n",
			[]string{`tigris.yaml:2:36: analysis.criteria: expected a criterion after "most": "expensiv" is not one; did you mean "expensive"? (valid: ` + strings.Join(dsl.Criteria, ", ") + `)`}},
		{"dsl double-quoted with escape", "analysis:\n  criteria: \"\\u0028most \\\"expensive\"\n",
			[]string{`tigris.yaml:2:25: analysis.criteria: invalid character "\"": a filter has criteria, modifiers, parentheses and the operators ∪ ∩ \ (or | & -, or, and, minus)`}},
		{"dsl single-quoted", "analysis:\n  criteria: 'it''s frequent'\n",
			[]string{`tigris.yaml:2:16: analysis.criteria: invalid character "'": a filter has criteria, modifiers, parentheses and the operators ∪ ∩ \ (or | & -, or, and, minus)`}},
		{"dsl literal block", "analysis:\n  criteria: |\n    more frequent\n      ∪ most expensve\n",
			[]string{`tigris.yaml:4:14: analysis.criteria: expected a criterion after "most": "expensve" is not one; did you mean "expensive"? (valid: ` + strings.Join(dsl.Criteria, ", ") + `)`}},
		{"dsl unbound criterion", "analysis:\n  criteria: frequent ∩ most usage-pattern\n",
			[]string{`tigris.yaml:2:24: analysis.criteria: criterion "usage-pattern" has no metric (bind one in analysis.metrics: ` + strings.Join(sortedMetrics(), ", ") + `)`}},

		// YAML syntax.
		{"yaml indentation", "monitor:\n  mode: fine\n bad: 1\n",
			[]string{`tigris.yaml:3: yaml: did not find expected key`}},
		{"yaml no line", "monitor:\n  mode: a: b\n",
			[]string{`tigris.yaml:2: yaml: mapping values are not allowed in this context`}},
		{"yaml tab", "monitor:\n\tmode: fine\n",
			[]string{`tigris.yaml:2: yaml: found character that cannot start any token`}},
		{"yaml unterminated quote", "monitor:\n  mode: \"fine\nwriter:\n  mode: sync\n",
			[]string{`tigris.yaml:2: yaml: found unexpected end of stream`}},
		{"yaml unknown anchor", "monitor:\n  mode: *nope\n",
			[]string{`tigris.yaml:2: yaml: unknown anchor 'nope' referenced`}},
		{"two documents", "version: 1\n---\nversion: 1\n",
			[]string{`tigris.yaml:3:1: a config file holds one YAML document, this is a second one`}},

		// Several problems: all reported, in file order.
		{"several", "writer:\n  queue: 0\nmonitor:\n  mode: fast\n  sampling: 2\n",
			[]string{
				`tigris.yaml:2:10: writer.queue: 0 is not a queue length (want an integer from 1 to 16777216)`,
				`tigris.yaml:4:9: monitor.mode: "fast" is not a mode (want off, coarse or fine)`,
				`tigris.yaml:5:13: monitor.sampling: 200% is out of range (want 0% to 100%)`,
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("tigris.yaml", []byte(tc.src))
			if c != nil {
				t.Errorf("Parse returned a config with an error")
			}
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("Parse() error = %v (%T), want an ErrorList", err, err)
			}
			var got []string
			for _, e := range list {
				got = append(got, e.Error())
			}
			// A want ending in "..." is a prefix.
			match := len(got) == len(tc.want)
			for i := 0; match && i < len(got); i++ {
				if p, ok := strings.CutSuffix(tc.want[i], "..."); ok {
					match = strings.HasPrefix(got[i], p)
				} else {
					match = got[i] == tc.want[i]
				}
			}
			if !match {
				t.Errorf("errors:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(tc.want, "\n     "))
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error text has more than one line: %q", err)
			}
		})
	}
}

func sortedMetrics() []string { return sorted.Keys(dsl.Metrics) }

func TestErrorListText(t *testing.T) {
	_, err := Parse("t.yaml", []byte("writer:\n  queue: 0\n  flush: 0s\n  mode: x\n"))
	want := `t.yaml:2:10: writer.queue: 0 is not a queue length (want an integer from 1 to 16777216) (and 2 more errors)`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant %s", err, want)
	}
}

func TestHash(t *testing.T) {
	a, err := Parse("a.yaml", []byte(full))
	if err != nil {
		t.Fatal(err)
	}
	// Same content, other layout: comments, key order, quoting, flow vs block style.
	reformatted := strings.NewReplacer(
		"# named pointcuts, name: expression", "",
		`include: [repo, "execution(* example.com/shop/...*(..))"]`, "include:\n    - repo\n    - 'execution(* example.com/shop/...*(..))'",
		"mode: async", "# the default\n  mode: \"async\"",
		"sampling: 10%", "sampling: 0.1",
	).Replace(full)
	b, err := Parse("b.yaml", []byte(reformatted))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Hash(), b.Hash()) {
		t.Errorf("reformatting changed the hash:\n%s", reformatted)
	}
	if len(a.Hash()) != 32 {
		t.Errorf("Hash is %d bytes", len(a.Hash()))
	}
	if !bytes.Equal(a.BuildHash(), b.BuildHash()) {
		t.Errorf("reformatting changed the build hash:\n%s", reformatted)
	}
	for _, change := range []struct {
		from, to string
		build    bool // changes compiler output, not only the linked settings
	}{
		{"std: false", "std: true", true},
		{"std: false", "std: false\n  panics: all", true},
		{"std: false", "std: false\n  small: probe", true},
		{"sampling: 10%", "sampling: 11%", false},
		{"- off: repo", "- coarse: repo", false},
		{"repo: execution(* example.com/shop/repo.*(..))", "repo: execution(* example.com/shop/repos.*(..))", true},
		{`exclude: ["execution(* *.String())"]`, `exclude: []`, true},
		{"listen: 127.0.0.1:7070", "listen: 127.0.0.1:7071", false},
	} {
		c, err := Parse("c.yaml", []byte(strings.Replace(full, change.from, change.to, 1)))
		if err != nil {
			t.Fatalf("%s → %s: %v", change.from, change.to, err)
		}
		if bytes.Equal(a.Hash(), c.Hash()) {
			t.Errorf("%s → %s did not change the hash", change.from, change.to)
		}
		if got := !bytes.Equal(a.BuildHash(), c.BuildHash()); got != change.build {
			t.Errorf("%s → %s: build hash changed = %v; want %v", change.from, change.to, got, change.build)
		}
	}
	if bytes.Equal(Default().Hash(), a.Hash()) {
		t.Error("Default has the hash of a full config")
	}
}

func TestLoadAndFind(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b", "c")
	if err := os.MkdirAll(deep, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(deep); !errors.Is(err, fs.ErrNotExist) {
		// A tigris.yaml above the temporary directory would make this fail; none
		// is expected on a test machine.
		var nf *NotFoundError
		if !errors.As(err, &nf) {
			t.Fatalf("Find with no file: %v", err)
		}
	}
	path := filepath.Join(root, "a", FileName)
	if err := os.WriteFile(path, []byte("monitor:\n  mode: fine\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	got, err := Find(deep)
	if err != nil || got != path {
		t.Fatalf("Find = %q, %v; want %q", got, err, path)
	}
	c, err := Load(got)
	if err != nil || c.Runtime.Mode != settings.Fine || c.Path != path {
		t.Fatalf("Load = %+v, %v", c, err)
	}
	if _, err := Load(filepath.Join(root, "missing.yaml")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(missing) = %v", err)
	}
	bad := filepath.Join(root, "bad.yaml")
	os.WriteFile(bad, []byte("monitor:\n  mode: fast\n"), 0o666)
	if _, err := Load(bad); err == nil || !strings.HasPrefix(err.Error(), bad+":2:9: monitor.mode: ") {
		t.Errorf("Load(bad) = %v", err)
	}
	if err := os.Mkdir(filepath.Join(deep, FileName), 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(deep); err == nil || !strings.Contains(err.Error(), "is not a regular file") {
		t.Errorf("Find with a directory named tigris.yaml: %v", err)
	}
}

func TestNotFoundError(t *testing.T) {
	err := error(&NotFoundError{Dir: "/x"})
	if !errors.Is(err, fs.ErrNotExist) || err.Error() != "no tigris.yaml in /x or any parent directory (tigris init writes one)" {
		t.Errorf("NotFoundError: %v", err)
	}
}

// TestPointcutChainFailsFast: a few hundred bytes of named pointcuts, each
// using the previous one twice, used to expand to 2^30 terms and exhaust memory
// in every build and `tigris match`. The error now names the first pointcut
// above pointcut.MaxTerms, at its place in the file.
func TestPointcutChainFailsFast(t *testing.T) {
	var src strings.Builder
	src.WriteString("pointcuts:\n  a0: execution(* x.F(..))\n")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&src, "  a%d: a%d||!a%d\n", i, i-1, i-1)
	}
	src.WriteString("monitor:\n  include: [a30]\n")
	if src.Len() > 600 {
		t.Fatalf("config of %d bytes; the point is a small one", src.Len())
	}
	_, err := Parse("tigris.yaml", []byte(src.String()))
	want := `tigris.yaml:14:13: pointcuts.a12: expands to more than 10000 terms with named pointcuts expanded (every use of a name counts its whole expression again); refer to fewer names that repeat others`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant %s", err, want)
	}
}

// TestIncludeEntriesTogetherBounded: entries each within pointcut.MaxTerms
// whose sum is not are reported at the entry that crosses the bound.
func TestIncludeEntriesTogetherBounded(t *testing.T) {
	var src strings.Builder
	src.WriteString("pointcuts:\n  a0: execution(* x.F(..))\n")
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&src, "  a%d: a%d||!a%d\n", i, i-1, i-1) // a10: 3070 terms
	}
	src.WriteString("monitor:\n  include: [a10, a10, a10]\n  exclude: [a10]\n")
	_, err := Parse("tigris.yaml", []byte(src.String()))
	want := `tigris.yaml:15:13: monitor.exclude[0]: the include and exclude entries up to here expand to more than 10000 terms together, with named pointcuts expanded (every use of a name counts its whole expression again)`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant %s", err, want)
	}
}

// TestLoadSizeLimit: a file over MaxSize is refused before it is parsed.
func TestLoadSizeLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	big := "version: 1\n# " + strings.Repeat("x", MaxSize) + "\n"
	if err := os.WriteFile(path, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), "larger than 1048576 bytes") {
		t.Fatalf("Load of a %d-byte config: %v; want the size error", len(big), err)
	}
	if err := os.WriteFile(path, []byte("version: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err != nil {
		t.Fatal(err)
	}
}
