package main

import (
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/internal/admintest"
)

// TestCtlStatsSortsByEveryColumn sorts by each column the stats table's
// header names, as printed and in lower case: a header shows what --sort takes.
func TestCtlStatsSortsByEveryColumn(t *testing.T) {
	addr := admintest.Server(t, "")
	out := mustCtl(t, "--addr", addr, "stats")
	header := strings.Fields(strings.SplitN(out, "\n", 3)[1]) // after the line naming the program
	if len(header) < 2 || header[0] != "ID" {
		t.Fatalf("stats printed no header:\n%s", out)
	}
	for _, col := range header {
		for _, name := range []string{col, strings.ToLower(col)} {
			if out, err := runCtl(t, "--addr", addr, "stats", "--sort", name); err != nil {
				t.Errorf("stats --sort %s: %v\n%s", name, err, out)
			}
		}
	}
	// CALLS sorts by the calls shown: Find's 30 first, most first.
	out = mustCtl(t, "--addr", addr, "stats", "--sort", "calls", "--top", "1")
	wantLines(t, out, `^1 +\w+ +30 `, `^\(1 of 3 probes, by calls desc\)$`)

	_, err := runCtl(t, "--addr", addr, "stats", "--sort", "speed")
	if err == nil {
		t.Fatal("stats --sort speed: no error")
	}
	for _, col := range header {
		if !strings.Contains(err.Error(), strings.ToLower(col)) {
			t.Errorf("stats --sort speed: %q does not list %s", err, strings.ToLower(col))
		}
	}
}
