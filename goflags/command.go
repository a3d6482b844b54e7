package goflags

import "strings"

// buildSubcommands are the go subcommands that build packages with the
// build flags.
var buildSubcommands = setOf("build", "install", "run", "test", "vet", "list", "get", "clean", "generate", "tool")

// replayedFlags are the build flags that change how a package is compiled (or
// which packages and sources are used), and so must be passed to a nested go
// list that builds the same way. Flags that only affect linking, output,
// verbosity or parallelism are not, and neither is -toolexec: what a nested go
// list of tigris compiles (the runtime module and its dependencies) is never
// instrumented.
var replayedFlags = setOf(
	"race", "msan", "asan", "cover", "covermode", "coverpkg", "trimpath", "linkshared",
	"asmflags", "buildmode", "compiler", "gccgoflags", "gcflags", "installsuffix",
	"mod", "modfile", "overlay", "pgo", "pkgdir", "tags",
)

// valueFlags are the go command flags (build, test, vet, list) that take their
// value as the next argument.
var valueFlags = setOf(
	// build flags
	"p", "asmflags", "buildmode", "compiler", "gcflags", "gccgoflags", "mod", "modfile",
	"overlay", "installsuffix", "ldflags", "pgo", "pkgdir", "tags", "toolexec",
	"covermode", "coverpkg", "debug-actiongraph", "debug-runtime-trace", "debug-trace",
	// go run, go test, go vet, go list
	"o", "exec", "vet", "vettool", "outputdir", "f", "reuse",
	"bench", "benchtime", "blockprofile", "blockprofilerate", "count", "coverprofile",
	"cpu", "cpuprofile", "fuzz", "fuzzminimizetime", "fuzztime", "list", "memprofile",
	"memprofilerate", "mutexprofile", "mutexprofilefraction", "parallel", "run",
	"shuffle", "skip", "timeout", "trace",
)

// Command is what Parse found in a go command line.
type Command struct {
	Subcommand string   // "build", "test", ...
	Flags      []string // build flags to replay, each "-name" or "-name=value"
	Packages   []string // package (or .go file) arguments
	Versioned  bool     // a package argument is path@version
	// Insert is the index in argv where flags can be added so that they come
	// after every build flag of the command line (and so win where the last
	// occurrence wins): before the first package for most subcommands, before
	// -args (or at the end) for test, whose flags may follow the packages.
	Insert int
}

// Parse extracts, from a go command line (argv[0] is the go binary),
// the subcommand and the build flags to replay in a nested go list. It reports
// false when argv is not a go command that builds packages. Flags are returned
// normalized to one argument each ("-gcflags=all=-N -l"); test's -coverprofile
// becomes -cover, which it implies.
//
// go test accepts flags after the package list, so for test every argument is
// examined up to -args; for the other subcommands flags end at the first
// non-flag argument (for go run, what follows belongs to the program).
func Parse(argv []string) (cmd Command, ok bool) {
	i := 1
	for i < len(argv) && (argv[i] == "-C" || argv[i] == "--C" || strings.HasPrefix(argv[i], "-C=") || strings.HasPrefix(argv[i], "--C=")) {
		if !strings.Contains(argv[i], "=") {
			i++
		}
		i++
	}
	if i >= len(argv) || !buildSubcommands[argv[i]] {
		return cmd, false
	}
	sub := argv[i]
	cmd.Subcommand = sub
	cmd.Insert = len(argv)
	cover, coverProfile := false, false
	for i++; i < len(argv); i++ {
		a := argv[i]
		if a == "--" || a == "-args" || a == "--args" {
			cmd.Insert = i
			break
		}
		if len(a) < 2 || a[0] != '-' {
			if sub != "test" {
				cmd.Insert = i
			}
			if sub == "test" {
				cmd.Packages = append(cmd.Packages, a)
				continue
			}
			if sub == "run" {
				// go run takes .go files or one package; the program's
				// arguments follow.
				for j, p := range argv[i:] {
					if strings.HasSuffix(p, ".go") || j == 0 {
						cmd.Packages = append(cmd.Packages, p)
					}
					if !strings.HasSuffix(p, ".go") {
						break
					}
				}
				break
			}
			for _, p := range argv[i:] {
				if !strings.HasPrefix(p, "-") {
					cmd.Packages = append(cmd.Packages, p)
				}
			}
			break
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		value, hasValue := "", false
		if eq := strings.IndexByte(name, '='); eq >= 0 {
			name, value, hasValue = name[:eq], name[eq+1:], true
		} else if (valueFlags[name] || sub == "vet" && name == "c") && i+1 < len(argv) {
			// (vet's -c is a number of context lines; test's -c is a boolean.)
			i++
			value, hasValue = argv[i], true
		}
		switch {
		case name == "coverprofile":
			coverProfile = true
			continue
		case !replayedFlags[name]:
			continue
		case name == "cover":
			cover = true
		}
		if hasValue {
			cmd.Flags = append(cmd.Flags, "-"+name+"="+value)
		} else {
			cmd.Flags = append(cmd.Flags, "-"+name)
		}
	}
	if coverProfile && !cover {
		cmd.Flags = append(cmd.Flags, "-cover")
	}
	for _, p := range cmd.Packages {
		cmd.Versioned = cmd.Versioned || strings.Contains(p, "@")
	}
	return cmd, true
}

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
