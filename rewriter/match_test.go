package rewriter

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/config"
)

func TestListMatches(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.24\n")
	writeFile(t, filepath.Join(dir, "a/a.go"), `package a

import _ "unsafe"

func Exported() error { return nil }

func unexported() {}

func (T) Method() {}

type T struct{}

//go:nosplit
func Fast() {}

func init() {}
`)
	writeFile(t, filepath.Join(dir, "a/a_test.go"), "package a\n\nfunc helper() {}\n")
	writeFile(t, filepath.Join(dir, "b/b.go"), "package b\n\nfunc Other() {}\n")
	cfg, err := config.Parse("tigris.yaml", []byte(`version: 1
monitor:
  include: ["within(example.com/m/a)"]
  exclude: ["execution(* *.unexported(..))"]
`))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ListMatches(cfg, MatchOptions{Dir: dir, Patterns: []string{"./..."}, Tests: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range rep.Matches {
		s := m.Signature.Name
		if m.Skipped != "" {
			s += " (" + m.Skipped + ")"
		}
		got = append(got, s)
	}
	want := "Exported Method Fast (marked //go:nosplit) init (init and blank functions are not callable) helper"
	if strings.Join(got, " ") != want {
		t.Errorf("matches %q, want %q", strings.Join(got, " "), want)
	}
	if rep.Matches[0].Pos.Line != 5 || rep.Matches[0].Pos.Column != 6 {
		t.Errorf("Exported at %v, want line 5 column 6", rep.Matches[0].Pos)
	}
}

func TestListMatchesReportsPackageErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.24\n")
	writeFile(t, filepath.Join(dir, "a.go"), "package m\n\nvar x int = \"s\"\n")
	cfg, err := config.Parse("tigris.yaml", []byte("version: 1\nmonitor:\n  include: [\"within(example.com/m)\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = ListMatches(cfg, MatchOptions{Dir: dir, Patterns: []string{"./..."}})
	if err == nil || !strings.Contains(err.Error(), "a.go:3:13") {
		t.Errorf("error %v; want one naming a.go:3:13", err)
	}
}

// TestListMatchesMainPackage: the package pattern main selects a command's
// package, which the go command names by its import path (docs/pointcuts.md).
func TestListMatchesMainPackage(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.24\n")
	writeFile(t, filepath.Join(dir, "cmd/server/main.go"), "package main\n\nfunc main() { run() }\n\nfunc run() {}\n")
	writeFile(t, filepath.Join(dir, "lib/lib.go"), "package lib\n\nfunc Run() {}\n")
	cfg, err := config.Parse("tigris.yaml", []byte("version: 1\nmonitor:\n  include: [\"execution(* main.*(..))\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ListMatches(cfg, MatchOptions{Dir: dir, Patterns: []string{"./..."}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range rep.Matches {
		got = append(got, m.Signature.Package+"."+m.Signature.Name)
	}
	if want := "example.com/m/cmd/server.main example.com/m/cmd/server.run"; strings.Join(got, " ") != want {
		t.Errorf("matches %q, want %q", strings.Join(got, " "), want)
	}
}
