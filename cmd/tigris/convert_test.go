package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

func TestConvertCommand(t *testing.T) {
	dir := t.TempDir()
	path := writeTrace(t, dir)
	for _, c := range []struct {
		to, out string
		check   func(data []byte) error
	}{
		{"pprof", "app-7.pb.gz", func(data []byte) error { _, err := profile.ParseData(data); return err }},
		{"chrome", "app-7.chrome.json", func(data []byte) error { var v any; return json.Unmarshal(data, &v) }},
		{"openxtrace", "app-7.xtrace.json", func(data []byte) error { var v []any; return json.Unmarshal(data, &v) }},
		{"kieker", "app-7-kieker/kieker-tigris.dat", func(data []byte) error {
			if n := strings.Count(string(data), "\n$1;"); n != 3 {
				t.Errorf("kieker: %d execution records", n)
			}
			return nil
		}},
	} {
		_, stderr, err := tigris(t, "convert", "--to", c.to, path)
		if err != nil {
			t.Fatalf("convert --to %s: %v", c.to, err)
		}
		out := filepath.Join(dir, c.out)
		if !strings.Contains(stderr, "convert: wrote ") || !strings.Contains(stderr, "3 records") || !strings.Contains(stderr, "0 lost") {
			t.Errorf("convert --to %s said %q", c.to, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatalf("convert --to %s: %v", c.to, err)
		}
		if err := c.check(data); err != nil {
			t.Errorf("convert --to %s: %s: %v", c.to, out, err)
		}
	}
	if m, err := os.ReadFile(filepath.Join(dir, "app-7-kieker", "kieker.map")); err != nil || !strings.Contains(string(m), "$1=kieker.common.record.controlflow.OperationExecutionRecord") {
		t.Errorf("kieker.map: %v %q", err, m)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(tmps) > 0 {
		t.Errorf("temporary files left: %q", tmps)
	}

	out, _, err := tigris(t, "convert", "--to", "pprof", "-o", "-", path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseData([]byte(out))
	if err != nil || len(p.Sample) != 2 {
		t.Errorf("convert -o -: %v, %d samples; want 2 paths", err, len(p.Sample))
	}
}

func TestConvertCommandErrors(t *testing.T) {
	dir := t.TempDir()
	path := writeTrace(t, dir)
	if _, _, err := tigris(t, "convert", path); err == nil || !strings.Contains(err.Error(), `"to" not set`) {
		t.Errorf("convert without --to: %v", err)
	}
	if _, _, err := tigris(t, "convert", "--to", "svg", path); err == nil || !strings.Contains(err.Error(), "openxtrace, chrome, pprof, kieker") {
		t.Errorf("convert --to svg: %v", err)
	}
	// Nothing readable: an error, and no output left behind.
	junk := filepath.Join(dir, "junk.tgr")
	os.WriteFile(junk, []byte("junk"), 0o644)
	if _, _, err := tigris(t, "convert", "--to", "chrome", junk); err == nil || !strings.Contains(err.Error(), "nothing readable") {
		t.Errorf("convert of junk: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "junk.chrome.json")); !os.IsNotExist(err) {
		t.Errorf("output of a failed conversion exists: %v", err)
	}
	if _, _, err := tigris(t, "convert", "--to", "kieker", junk); err == nil {
		t.Error("kieker conversion of junk succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "junk-kieker")); !os.IsNotExist(err) {
		t.Errorf("kieker directory of a failed conversion exists: %v", err)
	}
	// An output directory that cannot be written.
	if runtime.GOOS != "windows" && os.Getuid() != 0 {
		ro := filepath.Join(dir, "ro")
		os.Mkdir(ro, 0o555)
		if _, _, err := tigris(t, "convert", "--to", "pprof", "-o", filepath.Join(ro, "x.pb.gz"), path); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("convert into a read-only directory: %v", err)
		}
	}
}
