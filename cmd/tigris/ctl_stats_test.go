package main

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/internal/admintest"
)

// statsHeader returns the columns of the header line of ctl stats's output.
func statsHeader(t *testing.T, out string) []string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "ID" {
			return f
		}
	}
	t.Fatalf("stats printed no header:\n%s", out)
	return nil
}

// TestCtlStatsSortsByEveryColumn sorts by each column the stats table's
// header names, as printed and in lower case: a header shows what --sort takes.
func TestCtlStatsSortsByEveryColumn(t *testing.T) {
	addr := admintest.Server(t, "")
	header := statsHeader(t, mustCtl(t, "--addr", addr, "stats"))
	for _, col := range header {
		for _, name := range []string{col, strings.ToLower(col)} {
			if out, err := runCtl(t, "--addr", addr, "stats", "--sort", name); err != nil {
				t.Errorf("stats --sort %s: %v\n%s", name, err, out)
			}
		}
	}
	// CALLS sorts by the calls shown, most first.
	out := mustCtl(t, "--addr", addr, "stats", "--sort", "Calls")
	calls := slices.Index(statsHeader(t, out), "CALLS")
	var got []int
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > calls && regexp.MustCompile(`^[0-9]+$`).MatchString(f[0]) {
			n, _ := strconv.Atoi(f[calls])
			got = append(got, n)
		}
	}
	if len(got) != 3 || got[0] < got[1] || got[1] < got[2] {
		t.Errorf("stats --sort Calls: calls %v, want 3 rows, most first:\n%s", got, out)
	}

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
