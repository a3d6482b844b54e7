package evaluation

import (
	"os"
	"path/filepath"
)

// Scope is what one tigris build of the service probes: the tigris.yaml it
// is built with. Every tigris configuration runs one scope's binary.
type Scope struct {
	Name  string `json:"name"`
	Label string `json:"label"`
	// Include are the monitor.include entries; none means the example's own
	// tigris.yaml (examples/petclinic/tigris.yaml).
	Include []string `json:"include,omitempty"`
	// Std allows probes in standard-library packages (monitor.std).
	Std bool `json:"std,omitempty"`
}

// The scopes of the evaluation. ScopeModule is the workload where
// monitoring costs and the scope of the two-phase sweep; ScopeNarrow is the
// example's own selection, ScopeDeps adds the hot packages of the service's
// dependencies.
const (
	ScopeNarrow = "narrow"
	ScopeModule = "module"
	ScopeDeps   = "deps"
)

// moduleInclude selects every function of the example's module, as the
// config `tigris init` writes does.
const moduleInclude = "execution(* github.com/tigrisgo/tigris/examples/petclinic/...*(..))"

// Scopes are the three builds: the example's service and repository layers,
// every function of its module, and the module with the hot packages of its
// dependencies, by execution pointcuts on them: the SQL driver
// (modernc.org/sqlite's driver package, not the transpiled C library under
// it), database/sql, and the router (net/http's ServeMux and its routing
// tree), the last two standard-library packages, so the build sets
// monitor.std.
func Scopes() []Scope {
	return []Scope{
		{Name: ScopeNarrow, Label: "service and repository layers (the example's tigris.yaml)"},
		{Name: ScopeModule, Label: "every function of the service's module", Include: []string{moduleInclude}},
		{Name: ScopeDeps, Label: "the module, the SQL driver, database/sql and the router", Std: true, Include: []string{
			moduleInclude,
			"within(modernc.org/sqlite)",
			"within(database/sql)",
			"execution(* net/http.(*ServeMux).*(..))",
			"execution(* net/http.(*routingNode).*(..))",
			"execution(* net/http.(*pattern).*(..))",
		}},
	}
}

// scopeByName returns the scope named name; ok is false when there is none.
func scopeByName(name string) (Scope, bool) {
	for _, s := range Scopes() {
		if s.Name == name {
			return s, true
		}
	}
	return Scope{}, false
}

// yaml is the tigris.yaml of s: its selection with the run-time settings of
// the example's own file (every run overrides the ones that matter with
// TIGRIS_* variables).
func (s Scope) yaml() string {
	y := "version: 1\nmonitor:\n  include:\n"
	for _, in := range s.Include {
		y += "    - \"" + in + "\"\n"
	}
	if s.Std {
		y += "  std: true\n"
	}
	return y + "  mode: coarse\nwriter:\n  mode: async\n  path: tigris-out/{binary}-{pid}.tgr\nadmin:\n  listen: 127.0.0.1:0\n"
}

// writeConfig writes s's tigris.yaml into dir and returns its path, "" for
// the example's own.
func (s Scope) writeConfig(dir string) (string, error) {
	if len(s.Include) == 0 {
		return "", nil
	}
	path := filepath.Join(dir, "tigris-"+s.Name+".yaml")
	return path, os.WriteFile(path, []byte(s.yaml()), 0o666)
}
