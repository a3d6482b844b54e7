package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/internal/tracegen"
	"github.com/tigrisgo/tigris/runtime/tracecontext"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// writeTrace writes a trace file with the real writer: one trace, main.run
// calling main.load twice, the second call failing.
func writeTrace(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "app-7.tgr")
	w, err := writer.NewSync(writer.Options{Path: path, Host: "h", PID: 7, Binary: "/bin/app", Clock: writer.ClockBase{Wall: 1_700_000_000_000_000_000}})
	if err != nil {
		t.Fatal(err)
	}
	w.Define(writer.ProbeDef{ID: 1, Signature: "main.run()", Package: "main", Name: "run", File: "/src/main.go", Line: 5})
	w.Define(writer.ProbeDef{ID: 2, Signature: "main.load(string) error", Package: "main", Name: "load", File: "/src/load.go", Line: 9})
	for _, r := range []writer.Record{
		{Probe: 2, EOI: 1, ESS: 1, Trace: 1, GID: 1, TIn: 100, TOut: 300},
		{Probe: 2, EOI: 2, ESS: 1, Trace: 1, GID: 1, TIn: 400, TOut: 900, Flags: writer.FlagError},
		{Probe: 1, EOI: 0, ESS: 0, Trace: 1, GID: 1, TIn: 0, TOut: 1000},
	} {
		w.Write(&r)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// tigris runs the command line args through the cobra tree.
func tigris(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := newRootCmd()
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(args)
	err = cmd.Execute()
	return out.String(), errb.String(), err
}

func TestReadCommand(t *testing.T) {
	dir := t.TempDir()
	path := writeTrace(t, dir)
	out, stderr, err := tigris(t, "read", path)
	if err != nil || stderr != "" {
		t.Fatalf("read: %v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := "record  2023-11-14T22:13:20.000000400Z trace=1 eoi=2 ess=1 g=1 500ns main.load(string) error [error]"
	if len(lines) != 6 || !strings.HasPrefix(lines[0], "header  stream=") || lines[4] != want {
		t.Errorf("read output:\n%s\nwant 6 lines, the fifth %q", out, want)
	}

	out, _, err = tigris(t, "read", "--json", path)
	if err != nil {
		t.Fatal(err)
	}
	var records int
	for _, l := range strings.SplitAfter(out, "\n") { // strings.Lines needs go1.24
		if l == "" {
			continue // after the last line break
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if m["kind"] == "record" {
			records++
		}
	}
	if records != 3 {
		t.Errorf("%d JSON records; want 3", records)
	}
}

// A missing file among good ones is a warning; no readable input is an error.
func TestReadCommandBadInput(t *testing.T) {
	dir := t.TempDir()
	path := writeTrace(t, dir)
	missing := filepath.Join(dir, "gone.tgr")
	out, stderr, err := tigris(t, "read", missing, path)
	if err != nil || !strings.Contains(stderr, "read: warning: skipping open "+missing+": no such file") || !strings.Contains(out, "main.run()") {
		t.Errorf("read missing+good: %v\nstderr %s", err, stderr)
	}
	if _, _, err := tigris(t, "read", missing); err == nil || !strings.Contains(err.Error(), "gone.tgr") {
		t.Errorf("read of a missing file: %v; want an error naming it", err)
	}
	junk := filepath.Join(dir, "junk.tgr")
	os.WriteFile(junk, []byte(strings.Repeat("junk", 100)), 0o644)
	if _, _, err := tigris(t, "read", junk); err == nil || !strings.Contains(err.Error(), "nothing readable in "+junk+": no tigris trace data (400 bytes skipped)") {
		t.Errorf("read of junk: %v", err)
	}
	empty := filepath.Join(dir, "empty.tgr")
	os.WriteFile(empty, nil, 0o644)
	if _, _, err := tigris(t, "read", empty); err == nil || !strings.HasSuffix(err.Error(), ": empty") {
		t.Errorf("read of an empty file: %v", err)
	}

	// A torn tail still reads, with a warning.
	data, _ := os.ReadFile(path)
	os.WriteFile(path, append(data, data[len(data)-20:len(data)-5]...), 0o644)
	out, stderr, err = tigris(t, "read", path)
	if err != nil || !strings.Contains(stderr, "skipped 15 unreadable bytes") || !strings.Contains(out, "gap     "+path+" offset") {
		t.Errorf("read of a torn file: %v\nstdout %s\nstderr %s", err, out, stderr)
	}
}

// TestReadNotATrace: a file that is not a trace at all gets the one clear
// message, and no gap line or torn-tail warning before it; beside a trace it
// is one warning. A trace cut short still shows its torn tail.
func TestReadNotATrace(t *testing.T) {
	dir := t.TempDir()
	random := make([]byte, 3000)
	for i := range random {
		random[i] = byte(i*7919 + i>>3)
	}
	files := map[string][]byte{
		"go.mod":     []byte("module example.com/shop\n\ngo 1.26\n\nrequire github.com/tigrisgo/tigris/runtime v0.0.0\n"),
		"random.bin": random,
		"empty":      nil,
	}
	for name, data := range files {
		path := filepath.Join(dir, name)
		os.WriteFile(path, data, 0o644)
		why := "empty"
		if len(data) > 0 {
			why = "no tigris trace data (" + strconv.Itoa(len(data)) + " bytes skipped)"
		}
		for _, cmd := range []string{"read", "stats"} {
			out, stderr, err := tigris(t, cmd, path)
			if want := cmd + ": nothing readable in " + path + ": " + why; err == nil || err.Error() != want {
				t.Errorf("%s %s: %v; want %s", cmd, name, err, want)
			}
			if out != "" || stderr != "" {
				t.Errorf("%s %s: printed before the message:\nstdout %s\nstderr %s", cmd, name, out, stderr)
			}
		}
	}
	trace := writeTrace(t, dir)
	gomod := filepath.Join(dir, "go.mod")
	out, stderr, err := tigris(t, "read", trace, gomod)
	if err != nil || strings.Contains(out, "gap") || stderr != "read: warning: skipped "+gomod+": not a tigris trace file\n" {
		t.Errorf("read of a trace and go.mod: %v\nstdout %s\nstderr %s", err, out, stderr)
	}
	data, _ := os.ReadFile(trace)
	os.WriteFile(trace, data[:len(data)-7], 0o644)
	out, stderr, err = tigris(t, "read", trace)
	if err != nil || !strings.Contains(out, "(torn tail)") || !strings.Contains(stderr, "as a crash leaves it") || strings.Contains(stderr, "not a tigris trace") {
		t.Errorf("read of a truncated trace: %v\nstdout %s\nstderr %s", err, out, stderr)
	}
}

// TestReadTraceID: read and stats --trace-id find every call of the traces
// that joined a request trace, though the writer's rings put some of their
// records before the remote parent (trace 7's after every record), by an id
// in either case; a malformed id is refused.
func TestReadTraceID(t *testing.T) {
	rs := tracegen.Concurrent(600, 100, 4, 5)
	const far = 7
	rs.DelayRemote(far)
	path := filepath.Join(t.TempDir(), "rings.tgr")
	if err := rs.Write(path); err != nil {
		t.Fatal(err)
	}
	id := strings.ToUpper(tracecontext.FormatTraceID(rs.IDs[far]))
	out, _, err := tigris(t, "read", "--trace-id", id, path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "record  "); n != 4 || strings.Count(out, " trace=7 ") != 5 || strings.Count(out, "\n") != 5 {
		t.Errorf("read --trace-id %s: want trace 7's remote parent and 4 records:\n%s", id, out)
	}
	out, _, err = tigris(t, "stats", "--json", "--trace-id", id, path)
	if err != nil {
		t.Fatal(err)
	}
	var fs []struct{ Calls int }
	if err := json.Unmarshal([]byte(out), &fs); err != nil || len(fs) != 2 || fs[0].Calls+fs[1].Calls != 4 {
		t.Errorf("stats --trace-id %s: %v, want trace 7's 4 calls:\n%s", id, err, out)
	}
	_, errOut, err := tigris(t, "read", "--trace-id", "4bf92f3577b34da6a3ce929d0e0e4736", path)
	if err != nil || !strings.Contains(errOut, "read: no trace joined the request trace 4bf92f3577b34da6a3ce929d0e0e4736 (2400 records read;") {
		t.Errorf("read --trace-id of no trace: %v\nstderr:\n%s", err, errOut)
	}
	if _, _, err := tigris(t, "read", "--trace-id", "4bf92f35-77b3", path); err == nil || !strings.Contains(err.Error(), `read: --trace-id: "4bf92f35-77b3" is not a W3C trace id`) {
		t.Errorf("read --trace-id 4bf92f35-77b3: %v", err)
	}
}
