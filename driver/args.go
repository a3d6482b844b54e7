package driver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tigrisgo/tigris/goflags"
)

// Invocation is one `tigris go ...` command line.
type Invocation struct {
	// Config is --config as an absolute path; "" means TIGRIS_CONFIG, else
	// tigris.yaml found upward from Dir.
	Config string
	// Keep is --keep as an absolute path: rewritten sources are kept there.
	Keep string
	// Verbose is -v: log match decisions.
	Verbose bool
	// Dir is the directory the go command runs in (-C applied).
	Dir string
	// GoArgs is the go command's argument list as the user wrote it, -C
	// included, without the go binary.
	GoArgs []string
	// Command is GoArgs parsed.
	Command goflags.Command
	// goArgsBase is the index in GoArgs of argv[1] in Command's terms.
}

// Subcommands are the go subcommands tigris go runs.
var Subcommands = map[string]bool{"build": true, "install": true, "run": true, "test": true, "vet": true, "list": true}

// Args reads `tigris go` arguments: tigris's flags, then the go command line.
// help reports that the user asked for help (or gave no subcommand).
func Args(args []string, cwd string) (inv *Invocation, help bool, err error) {
	inv = &Invocation{Dir: cwd}
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "h", "help":
			return nil, true, nil
		case "v", "verbose":
			inv.Verbose = !hasValue || truthy(value)
		case "config", "keep", "C":
			if !hasValue {
				if i+1 >= len(args) {
					return nil, false, fmt.Errorf("flag %s needs a value", a)
				}
				i++
				value = args[i]
			}
			switch name {
			case "C":
				inv.GoArgs = append(inv.GoArgs, "-C", value)
				if !filepath.IsAbs(value) {
					value = filepath.Join(inv.Dir, value)
				}
				inv.Dir = value
			case "config":
				abs, err := filepath.Abs(value)
				if err != nil {
					return nil, false, err
				}
				if fi, err := os.Stat(abs); err != nil || fi.IsDir() {
					return nil, false, fmt.Errorf("config %s: not a file", value)
				}
				inv.Config = abs
			case "keep":
				abs, err := filepath.Abs(value)
				if err != nil {
					return nil, false, err
				}
				inv.Keep = abs
			}
		default:
			return nil, false, fmt.Errorf("unknown flag %s before the go subcommand (see tigris go --help)", a)
		}
	}
	if i >= len(args) {
		return nil, true, nil
	}
	if !Subcommands[args[i]] {
		return nil, false, fmt.Errorf("unsupported go subcommand %q: use one of build, install, run, test, vet, list", args[i])
	}
	for _, a := range args[i+1:] {
		if a == "--" || a == "-args" {
			break
		}
		if n := strings.TrimLeft(a, "-"); strings.HasPrefix(a, "-") && (n == "toolexec" || strings.HasPrefix(n, "toolexec=")) {
			return nil, false, errors.New("-toolexec is what tigris go sets; to chain another wrapper run go with -toolexec yourself")
		}
	}
	inv.GoArgs = append(inv.GoArgs, args[i:]...)
	cmd, ok := goflags.Parse(append([]string{"go"}, inv.GoArgs...))
	if !ok {
		return nil, false, fmt.Errorf("cannot read the go command line %q", inv.GoArgs)
	}
	inv.Command = cmd
	return inv, false, nil
}

func truthy(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}
