package rewriter

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/tigrisgo/tigris/goflags"
)

// The go command that started a tool invocation (docs/design-notes.md,
// "Resolving the runtime's export data").

// goInvocation is the go command that started this tool, as far as the proxy can
// tell: what it needs to run a nested go command that builds the same way.
type goInvocation struct {
	goExe      string   // the go binary
	dir        string   // its working directory
	subcommand string   // "build", "test", ...; "" when unknown
	flags      []string // build flags to replay, each "-name" or "-name=value"
	packages   []string // its package (or .go file) arguments
	// versioned reports package arguments of the form path@version (go install
	// or go run outside the current module), whose build context a nested go
	// command in the same directory cannot reproduce.
	versioned bool
	source    string // where the flags came from, for messages
	// env is the environment the go command gave the tool, which nested go
	// commands inherit.
	env environ
}

// moduleFlags returns the replayed flags that select the module graph, for
// `go list -m`, with -mod=mod made read-only (see readOnly).
func (inv *goInvocation) moduleFlags() []string {
	var out []string
	for _, f := range inv.readOnly() {
		if strings.HasPrefix(f, "-mod=") || strings.HasPrefix(f, "-modfile=") {
			out = append(out, f)
		}
	}
	return out
}

// readOnly returns the replayed flags for a nested go command that must never
// edit go.mod or go.sum in the middle of the user's build: a -mod=mod (on the
// command line or in GOFLAGS) becomes -mod=readonly, so a module graph that
// lacks what the monitor needs fails with the go command's own explanation
// instead of being changed behind the user's back.
func (inv *goInvocation) readOnly() []string {
	out := make([]string, 0, len(inv.flags)+1)
	modMod := slices.Contains(strings.Fields(inv.env.goFlags), "-mod=mod")
	for _, f := range inv.flags {
		switch f {
		case "-mod=mod":
			modMod = true
			continue
		case "-mod=readonly", "-mod=vendor":
			modMod = false
		}
		out = append(out, f)
	}
	if modMod {
		out = append(out, "-mod=readonly")
	}
	return out
}

// findGoInvocation describes the go command running the tool at toolPath
// with the environment env.
func findGoInvocation(toolPath string, env environ) *goInvocation {
	inv := &goInvocation{goExe: goBinary(toolPath), source: "GOFLAGS", env: env}
	if runtime.GOOS == "linux" {
		pid := os.Getppid()
		for depth := 0; depth < 4 && pid > 1; depth++ {
			argv, err := readProcCmdline(pid)
			if err == nil {
				if cmd, ok := goflags.Parse(argv); ok {
					inv.subcommand, inv.flags, inv.packages, inv.versioned = cmd.Subcommand, cmd.Flags, cmd.Packages, cmd.Versioned
					inv.source = fmt.Sprintf("/proc/%d/cmdline", pid)
					if cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid)); err == nil {
						inv.dir = cwd
					}
					break
				}
			}
			if pid, err = procParent(pid); err != nil {
				break
			}
		}
	}
	if inv.dir == "" {
		inv.dir, _ = os.Getwd()
	}
	return inv
}

// goBinary finds the go command of the toolchain a tool belongs to: the tool is
// $GOROOT/pkg/tool/<os_arch>/<name>, so $GOROOT/bin/go, falling back to the
// parent's executable and then to "go" on PATH.
func goBinary(toolPath string) string {
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	if toolPath != "" {
		root := toolGOROOT(toolPath)
		if g := filepath.Join(root, "bin", "go"+exe); fileExists(g) {
			return g
		}
	}
	if runtime.GOOS == "linux" {
		if g, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", os.Getppid())); err == nil && strings.HasPrefix(filepath.Base(g), "go") {
			return g
		}
	}
	if g, err := exec.LookPath("go"); err == nil {
		return g
	}
	return "go"
}

func readProcCmdline(pid int) ([]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil, err
	}
	data = bytes.TrimSuffix(data, []byte{0})
	if len(data) == 0 {
		return nil, errors.New("empty cmdline")
	}
	return strings.Split(string(data), "\x00"), nil
}

// procParent returns the parent pid from /proc/<pid>/stat.
func procParent(pid int) (int, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// pid (comm) state ppid ...; comm may contain spaces and parentheses.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("malformed stat")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, errors.New("malformed stat")
	}
	return strconv.Atoi(f[1])
}
