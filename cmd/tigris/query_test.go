package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/internal/admintest"
	"github.com/tigrisgo/tigris/internal/tracegen"
	"github.com/tigrisgo/tigris/tracequery"
)

func TestQueryOverTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.tgr")
	if err := tracegen.Write(path, 20000); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := newRootCmd()
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"query", path, "SELECT name, count(*) AS n, sum(duration) FROM calls WHERE name = 'Handle10' OR error GROUP BY name, error HAVING count(*) > 5 LIMIT 3"})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "NAME") || !strings.HasPrefix(lines[len(lines)-1], "-- end of trace (") {
		t.Fatalf("output:\n%s", out.String())
	}
	// JSON lines, and errors with a caret.
	out.Reset()
	cmd = newRootCmd()
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"query", "--json", path, "SELECT count(*) FROM calls"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var last struct {
		End   string
		Stats map[string]uint64
	}
	ls := strings.Split(strings.TrimSpace(out.String()), "\n")
	if err := json.Unmarshal([]byte(ls[len(ls)-1]), &last); err != nil || last.End != "end of trace" || last.Stats["records"] == 0 || last.Stats["records"] != last.Stats["tuples"] {
		t.Fatalf("last line %s: %v", ls[len(ls)-1], err)
	}
	cmd = newRootCmd()
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"query", path, "SELECT count(*) FROM calls WHERE nme = 1"})
	err := cmd.Execute()
	if err == nil || !strings.Contains(err.Error(), "query:1:34: no column \"nme\"") || !strings.Contains(err.Error(), "\n    SELECT count(*) FROM calls WHERE nme = 1\n                                     ^") {
		t.Fatalf("error: %v", err)
	}
	cmd.SetArgs([]string{"query", path, "SELECT * FROM SAMPLE(cpu, 1s)"})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "a trace file has no cpu readings") {
		t.Fatalf("SAMPLE over a trace: %v", err)
	}
}

// The dashboard's query box runs queries on the program (and over a file)
// and hands their table a line at a time.
func TestDashQueries(t *testing.T) {
	url := admintest.Server(t, "tok")
	admintest.CallEvery(t, 2, 5*time.Millisecond) // calls for the query to see
	var lines []string
	err := dashQueries(url, "tok", tracequery.DefaultMaxCPU).RunQuery(context.Background(), "SELECT name FROM calls WHERE name = 'Ping' LIMIT 3", func(l []byte) error {
		lines = append(lines, string(l))
		return nil
	})
	if err != nil || len(lines) != 5 || !strings.HasPrefix(lines[0], "NAME") || strings.TrimSpace(lines[1]) != "Ping" || !strings.HasPrefix(lines[4], "-- LIMIT 3 reached") {
		t.Fatalf("%v %q", err, lines)
	}
	err = dashQueries(url, "wrong", tracequery.DefaultMaxCPU).RunQuery(context.Background(), "SELECT name FROM calls", func([]byte) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "wrong bearer token") {
		t.Fatalf("a wrong token: %v", err)
	}
	path := filepath.Join(t.TempDir(), "t.tgr")
	tracegen.Write(path, 1000)
	lines = nil
	err = dashQueries(path, "", tracequery.DefaultMaxCPU).RunQuery(context.Background(), "SELECT count(*) FROM calls", func(l []byte) error {
		lines = append(lines, string(l))
		return nil
	})
	if err != nil || len(lines) != 3 || strings.TrimSpace(lines[1]) != "1000" {
		t.Fatalf("over a file: %v %q", err, lines)
	}
}

// TestQueryMaxCPU: a query over a trace stops with an error naming
// --max-cpu once it has taken that much CPU time, in its expressions (a
// 16,000-term product per record, which ran 550 CPU-seconds over a large
// trace before it was stopped by hand) or in the engine's long loops (a
// self join over a day); --max-cpu 0 lifts the bound.
func TestQueryMaxCPU(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.tgr")
	if err := tracegen.Write(path, 20000); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"SELECT count(*) FROM calls WHERE duration" + strings.Repeat(" * 1", 16000) + " > 1ns",
		"SELECT count(*) FROM calls a WINDOW JOIN calls b WINDOW 24h",
	} {
		var out bytes.Buffer
		cmd := newRootCmd()
		cmd.SetOut(&out)
		cmd.SetArgs([]string{"query", "--max-cpu", "300ms", path, q})
		start := time.Now()
		err := cmd.Execute()
		took := time.Since(start)
		if err == nil || !strings.Contains(err.Error(), "of CPU, more than the 300ms that --max-cpu allows (--max-cpu 0 lifts the bound)") {
			t.Fatalf("%.40s: %v\n%s", q, err, out.String())
		}
		if took > 5*time.Second {
			t.Errorf("%.40s: stopped after %v", q, took)
		}
		t.Logf("%.40s: %v after %v", q, err, took)
	}
	var out bytes.Buffer
	cmd := newRootCmd()
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"query", "--max-cpu", "0", path, "SELECT count(*) FROM calls WHERE duration" + strings.Repeat(" * 1", 100) + " > 1ns"})
	if err := cmd.Execute(); err != nil || !strings.Contains(out.String(), "end of trace") {
		t.Fatalf("--max-cpu 0: %v\n%s", err, out.String())
	}
	if f := newQueryCmd().Flags().Lookup("max-cpu"); f == nil || f.DefValue != "1m0s" {
		t.Fatalf("--max-cpu: %+v", f)
	}
}
