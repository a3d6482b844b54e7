package main

import (
	"bytes"
	"strings"
	"testing"
)

func runTigris(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// TestDashHelpHidesToken: the token from the environment is not a flag
// default, which --help would print.
func TestDashHelpHidesToken(t *testing.T) {
	t.Setenv("TIGRIS_ADMIN_TOKEN", "s3cr3t-from-env")
	out, err := runTigris(t, "dash", "--help")
	if err != nil || !strings.Contains(out, "--token") || strings.Contains(out, "s3cr3t-from-env") {
		t.Errorf("dash --help: %v\n%s", err, out)
	}
}

func TestDashMissingTrace(t *testing.T) {
	if _, err := runTigris(t, "dash", "nope.tgr"); err == nil || !strings.Contains(err.Error(), "nope.tgr: no such trace file") {
		t.Errorf("dash nope.tgr: %v", err)
	}
}
