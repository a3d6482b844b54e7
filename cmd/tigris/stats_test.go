package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestStatsCommand(t *testing.T) {
	path := writeTrace(t, t.TempDir())
	out, _, err := tigris(t, "stats", "--sort", "errors", "--top", "1", path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[1]), " ") != "2 1 0 700ns 350ns 200ns 500ns 500ns 700ns 350ns 200ns 500ns 500ns main.load(string) error" {
		t.Errorf("stats --sort errors --top 1:\n%s", out)
	}
	out, _, err = tigris(t, "stats", "--json", path)
	if err != nil {
		t.Fatal(err)
	}
	var fs []struct {
		Function  string
		Calls     int
		Exclusive struct{ Total int64 }
	}
	if err := json.Unmarshal([]byte(out), &fs); err != nil || len(fs) != 2 || fs[0].Function != "main.load(string) error" || fs[1].Exclusive.Total != 300 {
		t.Errorf("stats --json: %v\n%s", err, out)
	}
	if _, _, err := tigris(t, "stats", "--sort", "speed", path); err == nil || !strings.Contains(err.Error(), "--sort") {
		t.Errorf("stats --sort speed: %v", err)
	}
}

// TestStatsTraceID: --trace-id takes a W3C trace id, and says why a table is
// empty when no trace joined that request trace.
func TestStatsTraceID(t *testing.T) {
	path := writeTrace(t, t.TempDir())
	if _, _, err := tigris(t, "stats", "--trace-id", "4bf92f", path); err == nil || !strings.Contains(err.Error(), `stats: --trace-id: "4bf92f" is not a W3C trace id`) {
		t.Errorf("stats --trace-id 4bf92f: %v", err)
	}
	out, errOut, err := tigris(t, "stats", "--trace-id", "4bf92f3577b34da6a3ce929d0e0e4736", path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(out, "\n") != 1 || !strings.Contains(errOut, "stats: no trace joined the request trace 4bf92f3577b34da6a3ce929d0e0e4736 (") {
		t.Errorf("stats --trace-id of no trace:\n%s\nstderr:\n%s", out, errOut)
	}
}
