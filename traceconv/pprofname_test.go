package traceconv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/tigrisgo/tigris/runtime/writer"
)

func TestGoSymbol(t *testing.T) {
	for sig, want := range map[string]string{
		"example.com/shop.(*Store).FindAll() []string":                             "example.com/shop.(*Store).FindAll",
		"example.com/shop.Store.Name() string":                                     "example.com/shop.Store.Name",
		"example.com/shop.Map[...]([]T, func(T) U) []U":                            "example.com/shop.Map[...]",
		"example.com/shop.(*Stack[...]).Pop() (T, bool)":                           "example.com/shop.(*Stack[...]).Pop",
		"example.com/shop.Handle(context.Context, string) error":                   "example.com/shop.Handle",
		"func (*example.com/shop.Store).Find(int) (example.com/shop.Owner, error)": "example.com/shop.(*Store).Find",
		"func (example.com/shop.Store).Name() string":                              "example.com/shop.Store.Name",
		"gopkg.in/yaml.v3.Marshal(interface{}) ([]byte, error)":                    "gopkg.in/yaml.v3.Marshal",
		"probe#7": "probe#7",
	} {
		if got := goSymbol(sig); got != want {
			t.Errorf("goSymbol(%q) = %q; want %q", sig, got, want)
		}
	}
}

// TestPprofShowsGoNames converts a trace of a pointer method, a generic function
// and a method of a generic type, and reads the profile back with go tool
// pprof as a user would, with its default symbolization: the functions keep
// their Go names, and the signature is the system name.
func TestPprofShowsGoNames(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	defs := []writer.ProbeDef{
		{ID: 1, Signature: "example.com/shop.(*Store).FindAll() []string", Package: "example.com/shop", Recv: "Store", Name: "FindAll", File: "/src/shop/store.go", Line: 10},
		{ID: 2, Signature: "example.com/shop.Map[...]([]T, func(T) U) []U", Package: "example.com/shop", Name: "Map", File: "/src/shop/map.go", Line: 20},
		{ID: 3, Signature: "example.com/shop.(*Stack[...]).Pop() (T, bool)", Package: "example.com/shop", Recv: "Stack", Name: "Pop", File: "/src/shop/stack.go", Line: 30},
	}
	recs := []writer.Record{
		{Probe: 2, EOI: 1, ESS: 1, Trace: 1, GID: 7, TIn: 100, TOut: 300},
		{Probe: 3, EOI: 2, ESS: 1, Trace: 1, GID: 7, TIn: 400, TOut: 500},
		{Probe: 1, EOI: 0, ESS: 0, Trace: 1, GID: 7, TIn: 0, TOut: 1000},
	}
	dir := t.TempDir()
	out, _ := convert(t, Pprof, writeStream(t, dir, 42, defs, recs))
	p, err := profile.ParseData(out)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, f := range p.Function {
		names[f.Name] = f.SystemName
	}
	for _, d := range defs {
		if sys, ok := names[goSymbol(d.Signature)]; !ok || sys != d.Signature {
			t.Errorf("no function %q with system name %q in %v", goSymbol(d.Signature), d.Signature, names)
		}
	}

	path := filepath.Join(dir, "shop.pb.gz")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool, "tool", "pprof", "-top", "-sample_index=calls", path)
	cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	top, err := cmd.Output()
	if err != nil {
		t.Skipf("go tool pprof: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{"example.com/shop.(*Store).FindAll\n", "example.com/shop.Map[...]\n", "example.com/shop.(*Stack[...]).Pop\n"} {
		if !strings.Contains(string(top), " "+want) {
			t.Errorf("go tool pprof -top lacks %q:\n%s", strings.TrimSpace(want), top)
		}
	}
	if strings.Contains(string(top), "shop..") || strings.Contains(string(top), "[]") {
		t.Errorf("go tool pprof -top shows a garbled or signature name:\n%s", top)
	}
}
