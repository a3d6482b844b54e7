package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestGoCommandLine(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "tigris.yaml")
	os.WriteFile(cfg, []byte("x: 1\n"), 0o666)

	args, env, help, err := goCommandLine("/opt/bin/tigris", []string{"--config", cfg, "-v", "test", "-race", "./...", "-run", "X"})
	if err != nil || help {
		t.Fatalf("err %v help %v", err, help)
	}
	wantArgs := []string{"test", "-toolexec=/opt/bin/tigris toolexec", "-race", "./...", "-run", "X"}
	if !slices.Equal(args, wantArgs) {
		t.Errorf("args = %q; want %q", args, wantArgs)
	}
	if !slices.Equal(env, []string{"TIGRIS_CONFIG=" + cfg, "TIGRIS_LOG=1"}) {
		t.Errorf("env = %q", env)
	}

	// -C goes before the subcommand; a path with a space is quoted for go's splitter.
	args, _, _, err = goCommandLine("/my tools/tigris", []string{"-C", "sub", "build", "-o", "app", "."})
	if err != nil {
		t.Fatal(err)
	}
	wantArgs = []string{"-C", "sub", "build", "-toolexec='/my tools/tigris' toolexec", "-o", "app", "."}
	if !slices.Equal(args, wantArgs) {
		t.Errorf("args = %q; want %q", args, wantArgs)
	}

	for _, bad := range [][]string{
		{"mod", "tidy"},                   // not a build
		{"build", "-toolexec=other", "."}, // would be overridden silently
		{"--config", filepath.Join(dir, "missing.yaml"), "build"},
		{"--nope", "build"},
	} {
		if _, _, _, err := goCommandLine("/t", bad); err == nil {
			t.Errorf("goCommandLine(%q): no error", bad)
		}
	}
	// Program arguments after -args may say anything.
	if _, _, _, err := goCommandLine("/t", []string{"test", ".", "-args", "-toolexec=x"}); err != nil {
		t.Errorf("-toolexec after -args: %v", err)
	}
	if _, _, help, _ := goCommandLine("/t", nil); !help {
		t.Error("no subcommand: want help")
	}
}
