package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"

	"go.yaml.in/yaml/v3"

	"github.com/tigrisgo/tigris/runtime/settings"
)

// ModuleExpr returns the pointcut that selects every function and method of the
// packages of module modulePath, the include Template writes.
func ModuleExpr(modulePath string) string {
	return "execution(* " + modulePath + "/...*(..))"
}

// LiteralExpr is the pointcut of every function literal of the module
// modulePath's packages (which ModuleExpr leaves out: docs/pointcuts.md).
func LiteralExpr(modulePath string) string {
	return "within(" + modulePath + "/...) && literal()"
}

var templateText = template.Must(template.New("tigris.yaml").Parse(`# tigris.yaml for {{.Module}}, written by tigris init.
#
# monitor.include and monitor.exclude choose the functions that get probes compiled
# in; everything else sets how the probes behave when the program runs and can be
# overridden there with TIGRIS_* environment variables (TIGRIS_MODE, TIGRIS_ADMIN,
# TIGRIS_OUT, ...). Commented-out settings show their defaults. Every key is
# described in docs/config.md of github.com/tigrisgo/tigris.
version: 1

# Named pointcuts, usable by name in include, exclude and rules.
# In a signature * matches within one name, .. any number of packages or parameters.
pointcuts:
  module: {{.ModuleExpr}}

monitor:
  include:                # pointcut names or expressions
    - module
  # - {{.LiteralExpr}}  # function literals too: handlers returned by constructors, goroutine bodies, callbacks
  exclude:                # subtracted from include
    - {{.StringExpr}}
  # std: false            # allow instrumenting standard-library packages
  # panics: own-defers    # all: every probe defers its exit, so panics are measured everywhere (costs a defer when off)
  mode: {{.R.Mode}}            # probe mode at start: off, coarse or fine
  # rules:                # run-time mode rules in order, the last match wins
  #   - fine: execution(* {{.Example}}.*(..))
  # sampling: {{.Sampling}}        # share of fine-mode traces recorded (10% or 0.1)
  # summaries: false      # fine records carry the first result's size (len or int value)
  # follow-parent: false  # a request's traceparent or OpenTelemetry sampled flag decides whether its trace is recorded
  # coarse-budget: 2%     # a coarse probe costing more of its function's time times one call in N

# The two-phase analyzer: every interval it groups the coarse statistics and
# turns on fine tracing for the functions the criteria filter selects.
# analysis:
#   enabled: false
#   criteria: {{.Criteria}}
#   metrics:              # criterion: metric (defaults shown in docs/config.md)
#     changeable: {{index .R.Analysis.Metrics "changeable"}}
#   interval: {{.Interval}}
#   window: 0s            # statistics history; 0s = one interval
#   budget: 0%            # overhead budget, share of CPU time; 0% = none

# Where fine records go.
# writer:
#   mode: {{.R.Writer.Mode}}           # async, sync or null
#   path: {{.Path}}
#   queue: {{.R.Writer.Queue}}          # async queue length, in records
#   on-full: {{.R.Writer.OnFull}}         # drop or block when the queue is full
#   rotate: 0             # new file after this size, e.g. 256MiB; 0 = never
#   flush: {{.Flush}}

# The admin HTTP endpoint that tigris ctl and tigris dash talk to. It is built
# into the binary only when link is true or listen is set here (it adds a few MB
# and ms of start-up, so by default it is left out). Then it starts at listen, or
# at TIGRIS_ADMIN=host:port when the program runs. TIGRIS_ADMIN alone cannot
# start it in a binary built without link: true or listen (it only warns): for
# an endpoint started only by TIGRIS_ADMIN, write link: true and rebuild.
# admin:
#   link: true            # build the endpoint in (default: on when listen is set)
#   listen: 127.0.0.1:7070
#   token: ""             # when set, requests need Authorization: Bearer <token>
`))

// Template returns a commented tigris.yaml for the module modulePath: include
// selects every function of the module's packages, String methods are excluded,
// and the other settings are shown commented out with their defaults. The
// example rule names examplePkg, which should be one of the module's packages
// (modulePath when "").
func Template(modulePath, examplePkg string) []byte {
	r := settings.Default()
	var b bytes.Buffer
	err := templateText.Execute(&b, map[string]any{
		"Module":      modulePath,
		"Example":     cmp.Or(examplePkg, modulePath),
		"ModuleExpr":  yamlScalar(ModuleExpr(modulePath)),
		"StringExpr":  yamlScalar("execution(* *.String())"),
		"LiteralExpr": yamlScalar(LiteralExpr(modulePath)),
		"R":           r,
		"Sampling":    settings.FormatPercent(r.Sampling),
		"Criteria":    yamlScalar(r.Analysis.Criteria),
		"Interval":    shortDuration(r.Analysis.Interval),
		"Path":        yamlScalar(r.Writer.Path),
		"Flush":       shortDuration(r.Writer.Flush),
	})
	if err != nil {
		panic("config: template: " + err.Error()) // the template and its data are fixed
	}
	return b.Bytes()
}

// shortDuration formats d without zero trailing units: 2m rather than 2m0s.
func shortDuration(d settings.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// yamlScalar writes s as a YAML scalar, plain when YAML allows it.
func yamlScalar(s string) string {
	out, err := yaml.Marshal(s)
	if err != nil {
		return strconv.Quote(s)
	}
	return strings.TrimSuffix(string(out), "\n")
}

// ModulePath returns the module path declared by the module directive of a go.mod
// file's content.
func ModulePath(gomod []byte) (string, error) {
	inBlock := false
	for _, line := range strings.SplitAfter(string(gomod), "\n") { // strings.Lines needs go1.24
		if line == "" {
			continue // after the last line break
		}
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
			continue
		case inBlock && f[0] == ")":
			inBlock = false
		case inBlock:
			return unquoteModule(f[0])
		case f[0] == "module" && len(f) == 2 && f[1] == "(":
			inBlock = true
		case f[0] == "module" && len(f) == 2:
			return unquoteModule(f[1])
		}
	}
	return "", errors.New("go.mod has no module directive")
}

func unquoteModule(s string) (string, error) {
	if strings.HasPrefix(s, `"`) || strings.HasPrefix(s, "`") {
		u, err := strconv.Unquote(s)
		if err != nil {
			return "", fmt.Errorf("go.mod: bad module path %s", s)
		}
		s = u
	}
	if s == "" {
		return "", errors.New("go.mod: empty module path")
	}
	return s, nil
}

// ErrExists is returned by WriteTemplate when the file exists and force is false.
var ErrExists = errors.New("already exists (use --force to overwrite it)")

// WriteTemplate writes Template(modulePath, examplePkg) to dir/tigris.yaml and
// returns the path written. It refuses to replace an existing file unless force is set; the
// error then wraps ErrExists.
func WriteTemplate(dir, modulePath, examplePkg string, force bool) (string, error) {
	path := filepath.Join(dir, FileName)
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o666)
	if errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("%s: %w", path, ErrExists)
	}
	if err != nil {
		return "", err
	}
	_, err = f.Write(Template(modulePath, examplePkg))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}
