package invisible

import (
	"bufio"
	"go/version"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/integration/internal/itest"
)

// TestRepoGoLinesAreLowest: each module of this repository declares the
// lowest go line its dependencies allow. A module that adds tigris (the tool
// directive) or requires its runtime inherits at least that line, and with
// it a language version; a go line above what the dependencies need raises
// the user's for nothing. The runtime module, which every instrumented build
// requires, also stays below 1.21, the first release whose go line raises a
// requiring module's (docs/compatibility.md).
func TestRepoGoLinesAreLowest(t *testing.T) {
	if itest.GoExe == "" {
		t.Skip("no go command")
	}
	for _, dir := range []string{".", "runtime", "examples/petclinic", "examples/moobench-otel"} {
		t.Run(dir, func(t *testing.T) {
			root := filepath.Join(itest.RepoRoot, dir)
			own := goLine(t, filepath.Join(root, "go.mod"))
			cmd := exec.Command(itest.GoExe, "list", "-m", "-f", "{{if not .Main}}{{.Path}} {{.GoMod}}{{end}}", "all")
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly") // never write the repository's files
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("go list -m all: %v\n%s", err, out)
			}
			need, by := "1.0", "nothing"
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				path, gomod, ok := strings.Cut(l, " ")
				if !ok || gomod == "" {
					continue
				}
				if g := goLine(t, gomod); g != "" && version.Compare("go"+g, "go"+need) > 0 {
					need, by = g, path
				}
			}
			if version.Compare("go"+own, "go"+need) != 0 {
				t.Errorf("%s/go.mod says go %s; its dependencies need go %s (%s): declare that", dir, own, need, by)
			}
			if dir == "." && version.Compare("go"+own, "go"+rootGoCeiling) > 0 {
				t.Errorf("go.mod says go %s (%s needs it): keep each dependency at its newest version whose go line is at most %s (docs/compatibility.md)", own, by, rootGoCeiling)
			}
			if dir == "runtime" && version.Compare("go"+own, "go1.21") >= 0 {
				t.Errorf("runtime/go.mod says go %s: from 1.21 on it would raise every instrumented module's go line", own)
			}
		})
	}
}

// rootGoCeiling is the root module's go line: 1.22.0, the language version
// tigris's code is written for (each loop iteration its own variable; below
// it the same code would share one). Every dependency is at its newest
// version that asks no more: x/tools v0.30.0, protobuf v1.36.7, pprof of
// 2024-02-27, and the OpenTelemetry protocol module
// go.opentelemetry.io/proto/otlp v1.5.0 (its slim twin starts at 1.23.0;
// tigris imports none of its collector packages, which would link gRPC).
// Following a dependency to a version that asks more raises the go line of
// every module that adds tigris as a tool, so it fails here.
const rootGoCeiling = "1.22.0"

// goLine is the go directive of a go.mod file, "" when it has none.
func goLine(t *testing.T, gomod string) string {
	t.Helper()
	f, err := os.Open(gomod)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "go "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// TestToolLinksNoGRPC: the tigris command imports the OTLP protocol module's
// message packages only. Its collector packages import gRPC and the gRPC
// gateway, which would link both into the command and, through the
// collector's newer releases, pull the go line up (rootGoCeiling).
func TestToolLinksNoGRPC(t *testing.T) {
	if itest.GoExe == "" {
		t.Skip("no go command")
	}
	cmd := exec.Command(itest.GoExe, "list", "-deps", "-test", "./cmd/tigris", "./export/...")
	cmd.Dir = itest.RepoRoot
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "google.golang.org/grpc") || strings.Contains(pkg, "grpc-gateway") ||
			strings.HasPrefix(pkg, "go.opentelemetry.io/proto/otlp/collector/") {
			t.Errorf("the tigris command or the export tests import %s", pkg)
		}
	}
}
