package export

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/integration/internal/itest"
)

// TestProgramLinksNoExportOrDash: the example service built with tigris,
// with its admin endpoint (the heaviest thing tigris links), carries no
// OpenTelemetry or protobuf code, no package of the tigris command (export,
// dash, the CLI), and not a byte of the dashboard's web assets: shipping
// traces and serving the page are the tigris command's work.
func TestProgramLinksNoExportOrDash(t *testing.T) {
	bin := buildPetclinic(t)
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	// Modules, as the go command saw them (tigris adds the runtime's
	// packages at link time, so they are not listed): never the tigris
	// command's module or its dependencies.
	for _, d := range info.Deps {
		for _, banned := range []string{"go.opentelemetry.io/", "google.golang.org/protobuf", "google.golang.org/grpc", "github.com/spf13/", "go.yaml.in/", "github.com/dave/dst", "golang.org/x/tools", "github.com/google/pprof"} {
			if strings.HasPrefix(d.Path, banned) {
				t.Errorf("the instrumented program links module %s", d.Path)
			}
		}
		if d.Path == "github.com/tigrisgo/tigris" {
			t.Errorf("the instrumented program links a package of the tigris command's module (%s)", d.Path)
		}
	}

	// Packages, by symbol: the admin endpoint is there (the check can see
	// what is linked), export and dash are not.
	if runtime.GOOS == "linux" {
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		syms, err := f.Symbols()
		f.Close()
		if err != nil {
			t.Fatalf("symbols of %s: %v", bin, err)
		}
		admin, bad := false, 0
		for _, s := range syms {
			admin = admin || strings.HasPrefix(s.Name, "github.com/tigrisgo/tigris/runtime/monitor/admin.")
			for _, banned := range []string{"go.opentelemetry.io/", "google.golang.org/protobuf/", "google.golang.org/grpc", "github.com/spf13/", "go.yaml.in/",
				"github.com/tigrisgo/tigris/export", "github.com/tigrisgo/tigris/dash", "github.com/tigrisgo/tigris/adminclient", "github.com/tigrisgo/tigris/traceconv", "html/template."} {
				if strings.HasPrefix(s.Name, banned) {
					if bad++; bad <= 10 {
						t.Errorf("the instrumented program has symbol %s", s.Name)
					}
					break
				}
			}
		}
		if !admin {
			t.Fatal("no symbol of the admin endpoint: the check would not see linked packages")
		}
	}

	// The dashboard's assets, byte for byte: in the tigris command (so the
	// search finds them where they are), not in the program.
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := os.ReadFile(itest.TigrisBin)
	if err != nil {
		t.Fatal(err)
	}
	assets, err := filepath.Glob(filepath.Join(itest.RepoRoot, "dash", "assets", "*"))
	if err != nil || len(assets) == 0 {
		t.Fatalf("no dashboard assets found: %v", err)
	}
	for _, a := range assets {
		b, err := os.ReadFile(a)
		if err != nil {
			t.Fatal(err)
		}
		// A distinctive stretch of each asset: its middle 256 bytes.
		mid := b[len(b)/2-min(128, len(b)/2):][:min(256, len(b))]
		if bytes.Contains(data, mid) {
			t.Errorf("the instrumented program contains dashboard asset %s", filepath.Base(a))
		}
		if !bytes.Contains(cli, mid) {
			t.Errorf("the tigris command does not contain dashboard asset %s as it is: the search would not find it", filepath.Base(a))
		}
	}
}
