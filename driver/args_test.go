package driver

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestArgs(t *testing.T) {
	cwd := t.TempDir()
	cfg := filepath.Join(cwd, "tigris.yaml")
	writeFile(t, cfg, "version: 1\n")
	inv, help, err := Args([]string{"-v", "--config", cfg, "-C", "sub", "test", "-race", "./...", "-args", "-toolexec=x"}, cwd)
	if err != nil || help {
		t.Fatalf("Args: %v, help %v", err, help)
	}
	if !inv.Verbose || inv.Config != cfg || inv.Dir != filepath.Join(cwd, "sub") {
		t.Errorf("flags: %+v", inv)
	}
	if want := []string{"-C", "sub", "test", "-race", "./...", "-args", "-toolexec=x"}; !slices.Equal(inv.GoArgs, want) {
		t.Errorf("GoArgs = %q; want %q", inv.GoArgs, want)
	}
	if inv.Command.Subcommand != "test" || !slices.Contains(inv.Command.Flags, "-race") {
		t.Errorf("Command = %+v", inv.Command)
	}
	for _, args := range [][]string{nil, {"-h"}, {"-v"}} {
		if _, help, err := Args(args, cwd); !help || err != nil {
			t.Errorf("Args(%q): help %v, %v; want help", args, help, err)
		}
	}
	for args, want := range map[string]string{
		"mod tidy":                   `unsupported go subcommand "mod"`,
		"build -toolexec=x ./...":    "-toolexec is what tigris go sets",
		"--frobnicate build":         "unknown flag --frobnicate before the go subcommand",
		"--config":                   "flag --config needs a value",
		"--config " + cwd + " build": "not a file",
	} {
		if _, _, err := Args(strings.Fields(args), cwd); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Args(%q): %v; want %q", args, err, want)
		}
	}
}

func writeFile(t *testing.T, name, text string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(text), 0o666); err != nil {
		t.Fatal(err)
	}
}
