package rewriter

import (
	"os"
	"strings"
)

// The environment of one tool invocation, read once.

// nestedEnv marks the environment of tigris's own nested go list.
const nestedEnv = "TIGRIS_NESTED"

// environ is what the go command's environment tells the proxy. RunTool reads
// the process environment once (processEnviron) and passes this value down,
// inside the goInvocation; nothing else in this package reads the environment
// (TestEnvironmentReadOnce), so what a function depends on is in its arguments
// and tests need no t.Setenv. (os.UserCacheDir, behind tigrisCacheDir, still
// reads XDG_CACHE_HOME or HOME itself.)
type environ struct {
	// list is the whole environment, as the tool and nested go commands get it.
	list []string
	// importPath is TOOLEXEC_IMPORTPATH, the package as the go command names it
	// ("p", "p [p.test]", "p.test"); "" outside a go command.
	importPath string
	// nested reports TIGRIS_NESTED: the tool runs under tigris's own nested
	// go list, which compiles only the runtime and its dependencies.
	nested bool
	// goFlags, goWork and goEnv are GOFLAGS, GOWORK and GOENV: flags a nested
	// go command inherits, and the files that select its module graph and
	// settings.
	goFlags, goWork, goEnv string
}

// environOf reads an environment list ("NAME=value" entries; the last entry
// of a name wins, as for os/exec).
func environOf(list []string) environ {
	e := environ{list: list}
	for _, kv := range list {
		name, v, _ := strings.Cut(kv, "=")
		switch name {
		case "TOOLEXEC_IMPORTPATH":
			e.importPath = v
		case nestedEnv:
			e.nested = v != ""
		case "GOFLAGS":
			e.goFlags = v
		case "GOWORK":
			e.goWork = v
		case "GOENV":
			e.goEnv = v
		}
	}
	return e
}

// processEnviron is this process's environment: the one place the package
// reads it.
func processEnviron() environ { return environOf(os.Environ()) }
