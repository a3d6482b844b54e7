package goflags

import (
	"slices"
	"testing"
)

func TestParseGoCommand(t *testing.T) {
	for _, tc := range []struct {
		name      string
		argv      []string
		sub       string
		flags     []string
		ok        bool
		versioned bool
		packages  []string
	}{
		{
			name:     "build",
			argv:     []string{"/usr/local/go/bin/go", "build", "-race", "-o", "app", "-gcflags", "all=-N -l", "-tags=netgo,osusergo", "-trimpath", "-x", "-toolexec", "tigris toolexec", "./cmd/app"},
			sub:      "build",
			flags:    []string{"-race", "-gcflags=all=-N -l", "-tags=netgo,osusergo", "-trimpath"},
			ok:       true,
			packages: []string{"./cmd/app"},
		},
		{
			name:  "double dash flags and -C",
			argv:  []string{"go", "-C", "sub", "install", "--mod=vendor", "--modfile", "alt.mod", "-pgo=off", "-a", "-p", "4", "./..."},
			sub:   "install",
			flags: []string{"-mod=vendor", "-modfile=alt.mod", "-pgo=off"},
			ok:    true,
		},
		{
			name:     "test flags after packages, coverprofile implies cover",
			argv:     []string{"go", "test", "-count=1", "-v", "./...", "-run", "TestX", "-coverprofile", "c.out", "-covermode=atomic", "-asan", "-args", "-race"},
			sub:      "test",
			flags:    []string{"-covermode=atomic", "-asan", "-cover"},
			ok:       true,
			packages: []string{"./..."},
		},
		{
			name:     "run: program arguments are not go flags",
			argv:     []string{"go", "run", "-msan", ".", "-race", "-trimpath"},
			sub:      "run",
			flags:    []string{"-msan"},
			ok:       true,
			packages: []string{"."},
		},
		{
			name:     "run files",
			argv:     []string{"go", "run", "main.go", "util.go", "arg.go.txt", "x.go"},
			sub:      "run",
			ok:       true,
			packages: []string{"main.go", "util.go"},
		},
		{
			name:  "vet -c takes a value",
			argv:  []string{"go", "vet", "-c", "3", "-tags", "x", "./..."},
			sub:   "vet",
			flags: []string{"-tags=x"},
			ok:    true,
		},
		{
			name:  "nested go list",
			argv:  []string{"go", "list", "-deps", "-export", "-json=ImportPath,Export", "-cover", "-coverpkg=./...", "-buildmode=pie", "-toolexec=t toolexec", "github.com/tigrisgo/tigris/runtime/monitor"},
			sub:   "list",
			flags: []string{"-cover", "-coverpkg=./...", "-buildmode=pie"},
			ok:    true,
		},
		{
			name:  "unknown flags are skipped",
			argv:  []string{"go", "build", "-futureflag", "-future=value", "-overlay=o.json", "-ldflags=-s -w", "."},
			sub:   "build",
			flags: []string{"-overlay=o.json"},
			ok:    true,
		},
		{
			name:      "install pkg@version",
			argv:      []string{"go", "install", "-o", "bin@1", "-trimpath", "example.com/tool@v1.2.3"},
			sub:       "install",
			flags:     []string{"-trimpath"},
			ok:        true,
			versioned: true,
		},
		{
			name:  "an @ in a flag value is not a version",
			argv:  []string{"go", "build", "-o", "out@1", "-ldflags", "-X main.mail=a@b", "."},
			sub:   "build",
			flags: nil,
			ok:    true,
		},
		{name: "not a build", argv: []string{"go", "env", "GOOS"}},
		{name: "not go", argv: []string{"/bin/bash", "-c", "go build"}},
		{name: "bare go", argv: []string{"go"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd, ok := Parse(tc.argv)
			if cmd.Subcommand != tc.sub || ok != tc.ok || !slices.Equal(cmd.Flags, tc.flags) || cmd.Versioned != tc.versioned ||
				tc.packages != nil && !slices.Equal(cmd.Packages, tc.packages) {
				t.Errorf("Parse(%q) =\n  %+v, %v\nwant\n  %q, %q, versioned %v, %v", tc.argv, cmd, ok, tc.sub, tc.flags, tc.versioned, tc.ok)
			}
		})
	}
}

func TestInsert(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want int
	}{
		{[]string{"go", "build", "-o", "x", "./..."}, 4},
		{[]string{"go", "build"}, 2},
		{[]string{"go", "run", "-race", ".", "-flag", "arg"}, 3},
		{[]string{"go", "test", "./...", "-run", "X"}, 5},
		{[]string{"go", "test", "./...", "-args", "-v"}, 3},
		{[]string{"go", "-C", "dir", "vet", "-tags", "t", "./..."}, 6},
	} {
		cmd, ok := Parse(tc.argv)
		if !ok || cmd.Insert != tc.want {
			t.Errorf("Parse(%q).Insert = %d (ok %v), want %d", tc.argv, cmd.Insert, ok, tc.want)
		}
	}
}
