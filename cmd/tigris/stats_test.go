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
