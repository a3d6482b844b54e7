package main

import (
	"path/filepath"
	"slices"
	"testing"
)

func TestParseToolexecArgs(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }

	opts, tool, help, err := parseToolexecArgs([]string{"--config", "t.yaml", "--keep=out", "-v", "/go/pkg/tool/compile", "-p", "x", "-v"}, getenv)
	if err != nil || help {
		t.Fatalf("err %v, help %v", err, help)
	}
	if opts.ConfigPath != abs("t.yaml") || opts.Keep != abs("out") || !opts.Verbose {
		t.Errorf("opts = %+v", opts)
	}
	if !slices.Equal(tool, []string{"/go/pkg/tool/compile", "-p", "x", "-v"}) {
		t.Errorf("tool args = %q", tool)
	}

	env["TIGRIS_CONFIG"] = "/etc/tigris.yaml"
	env["TIGRIS_KEEP"] = "/tmp/keep"
	env["TIGRIS_LOG"] = "1"
	opts, tool, _, _ = parseToolexecArgs([]string{"/go/pkg/tool/asm", "-V=full"}, getenv)
	if opts.ConfigPath != "/etc/tigris.yaml" || opts.Keep != "/tmp/keep" || !opts.Verbose {
		t.Errorf("opts from env = %+v", opts)
	}
	if !slices.Equal(tool, []string{"/go/pkg/tool/asm", "-V=full"}) {
		t.Errorf("tool args = %q", tool)
	}

	// A tool whose name starts with a dash needs --.
	_, tool, _, _ = parseToolexecArgs([]string{"--", "-odd", "x"}, getenv)
	if !slices.Equal(tool, []string{"-odd", "x"}) {
		t.Errorf("after --: %q", tool)
	}

	for _, args := range [][]string{{}, {"--help"}, {"-v"}} {
		if _, _, help, err := parseToolexecArgs(args, getenv); !help || err != nil {
			t.Errorf("parseToolexecArgs(%q): help %v err %v; want help", args, help, err)
		}
	}
	for _, args := range [][]string{{"--bogus", "compile"}, {"--config"}} {
		if _, _, _, err := parseToolexecArgs(args, getenv); err == nil {
			t.Errorf("parseToolexecArgs(%q): no error", args)
		}
	}
}
