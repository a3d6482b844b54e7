package integration

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/integration/internal/itest"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// These tests run without a tigris.yaml: the session is inactive and tigris
// toolexec must be a transparent prefix.

// TestInactiveBuildIsPlain: with nothing to instrument the binary is the plain
// build's, byte for byte (same -V=full lines, so the same cache entries).
func TestInactiveBuildIsPlain(t *testing.T) {
	dir := itest.NewModule(t, itest.HelloFiles)
	itest.Go(t, dir, nil, "build", "-o", "plain"+itest.ExeSuffix(), ".")
	itest.Go(t, dir, nil, "build", itest.ToolexecFlag(), "-o", "wrapped"+itest.ExeSuffix(), ".")
	plain, wrapped := filepath.Join(dir, "plain"+itest.ExeSuffix()), filepath.Join(dir, "wrapped"+itest.ExeSuffix())
	if got, want := itest.RunProgram(t, wrapped), itest.RunProgram(t, plain); got != want || want != "hello, GOPHER\n" {
		t.Errorf("output through tigris %q; plain %q", got, want)
	}
	a, _ := os.ReadFile(plain)
	b, _ := os.ReadFile(wrapped)
	if !bytes.Equal(a, b) {
		t.Errorf("binaries differ (%d and %d bytes): an inactive session changed the build", len(a), len(b))
	}

	// tigris go build is the same build.
	itest.Tigris(t, dir, nil, "go", "build", "-o", "viago"+itest.ExeSuffix(), ".")
	c, _ := os.ReadFile(filepath.Join(dir, "viago"+itest.ExeSuffix()))
	if !bytes.Equal(a, c) {
		t.Error("tigris go build made a different binary than go build")
	}
}

// TestInactiveTest runs go test through the proxy: the package, its internal
// test variant (p [p.test]), its external test package (p_test [p.test]) and the
// generated test main (p.test) all compile, with coverage too.
func TestInactiveTest(t *testing.T) {
	dir := itest.NewModule(t, itest.HelloFiles)
	out := itest.Go(t, dir, nil, "test", itest.ToolexecFlag(), "-count=1", "-cover", "./...")
	if !strings.Contains(out, "ok  \texample.com/itest/greet") || !strings.Contains(out, "coverage:") {
		t.Errorf("go test output:\n%s", out)
	}
	out = itest.Tigris(t, dir, nil, "go", "test", "-count=1", "-run", "External", "-v", "./greet")
	if !strings.Contains(out, "--- PASS: TestHelloExternal") {
		t.Errorf("tigris go test output:\n%s", out)
	}
}

// TestVetPassesThrough: vet is a tool tigris does not know; its findings and
// exit status come through unchanged.
func TestVetPassesThrough(t *testing.T) {
	dir := itest.NewModule(t, map[string]string{
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Printf(\"%d\\n\", \"not a number\") }\n",
	})
	plainOut, plainCode := itest.Run(t, dir, nil, itest.GoExe, "vet", ".")
	out, code := itest.Run(t, dir, nil, itest.GoExe, "vet", itest.ToolexecFlag(), ".")
	if plainCode == 0 || code != plainCode {
		t.Errorf("go vet exit status through tigris %d; plain %d", code, plainCode)
	}
	const finding = "fmt.Printf format %d has arg"
	if !strings.Contains(plainOut, finding) || !strings.Contains(out, finding) {
		t.Errorf("vet finding missing:\nplain:\n%s\nthrough tigris:\n%s", plainOut, out)
	}
	if strings.Contains(out, "tigris:") {
		t.Errorf("tigris added output:\n%s", out)
	}
	viaGo, viaGoCode := itest.Run(t, dir, nil, itest.TigrisBin, "go", "vet", ".")
	if viaGoCode != plainCode || !strings.Contains(viaGo, finding) {
		t.Errorf("tigris go vet: exit %d, output:\n%s", viaGoCode, viaGo)
	}
}

// TestCompileErrorPassesThrough: a type error is reported by the compiler, with
// its own message and exit status, for go build and for a direct invocation.
func TestCompileErrorPassesThrough(t *testing.T) {
	const bad = "package main\n\nvar x int = \"s\"\n\nfunc main() {}\n"
	dir := itest.NewModule(t, map[string]string{"main.go": bad})
	plainOut, plainCode := itest.Run(t, dir, nil, itest.GoExe, "build", "-o", os.DevNull, ".")
	out, code := itest.Run(t, dir, nil, itest.GoExe, "build", itest.ToolexecFlag(), "-o", os.DevNull, ".")
	if plainCode == 0 || code != plainCode {
		t.Errorf("go build exit status through tigris %d; plain %d", code, plainCode)
	}
	const msg = `cannot use "s" (untyped string constant) as int value`
	if !strings.Contains(out, msg) || strings.Contains(out, "tigris") {
		t.Errorf("go build through tigris:\n%s\nwant the compiler's message only (plain build said:\n%s)", out, plainOut)
	}

	// The compiler's own exit status (2), stdout and stderr, exactly.
	compile := itest.GoTool(t, "compile")
	args := []string{"-p", "main", "-o", filepath.Join(t.TempDir(), "x.a"), filepath.Join(dir, "main.go")}
	directOut, directCode := itest.Run(t, dir, nil, compile, args...)
	proxOut, proxCode := itest.Run(t, dir, nil, itest.TigrisBin, append([]string{"toolexec", compile}, args...)...)
	if directCode == 0 || proxCode != directCode || proxOut != directOut {
		t.Errorf("compile: direct exit %d %q; through tigris exit %d %q", directCode, directOut, proxCode, proxOut)
	}
}

// TestUnknownToolExitStatus: any program can be the tool; its status is kept.
func TestUnknownToolExitStatus(t *testing.T) {
	itest.RequireGo(t)
	if runtime.GOOS == "windows" {
		t.Skip("uses sh")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	out, code := itest.Run(t, t.TempDir(), []string{"X=from-env"}, itest.TigrisBin, "toolexec", sh, "-c", `echo "$X $0 $1"; exit 7`, "zero", "one")
	if code != 7 || out != "from-env zero one\n" {
		t.Errorf("exit %d, output %q; want 7, %q", code, out, "from-env zero one\n")
	}
}

// TestVersionInactive: -V=full answers are the tools' own without a config.
func TestVersionInactive(t *testing.T) {
	itest.RequireGo(t)
	dir := t.TempDir()
	for _, tool := range []string{"compile", "link", "asm"} {
		path := itest.GoTool(t, tool)
		want, code := itest.Run(t, dir, nil, path, "-V=full")
		if code != 0 {
			t.Fatalf("%s -V=full: exit %d\n%s", tool, code, want)
		}
		got := itest.Tigris(t, dir, nil, "toolexec", path, "-V=full")
		if got != want {
			t.Errorf("tigris toolexec %s -V=full = %q; want %q", tool, got, want)
		}
	}
}

// TestAsmAndCgo builds a package with assembly and one with cgo through the
// proxy; the program behaves and the binary is the plain build's.
func TestAsmAndCgo(t *testing.T) {
	files := map[string]string{
		"main.go": `package main

import (
	"fmt"

	"example.com/itest/asm"
)

func main() { fmt.Println("add", asm.Add(2, 3), "c", cAnswer()) }
`,
		// The body-less declaration is implemented in assembly on amd64 and arm64.
		"asm/add.go": "//go:build amd64 || arm64\n\npackage asm\n\n// Add returns a+b.\nfunc Add(a, b int64) int64\n",
		"asm/add_amd64.s": `#include "textflag.h"

TEXT ·Add(SB), NOSPLIT, $0-24
	MOVQ a+0(FP), AX
	ADDQ b+8(FP), AX
	MOVQ AX, ret+16(FP)
	RET
`,
		"asm/add_arm64.s": `#include "textflag.h"

TEXT ·Add(SB), NOSPLIT, $0-24
	MOVD a+0(FP), R0
	MOVD b+8(FP), R1
	ADD R1, R0
	MOVD R0, ret+16(FP)
	RET
`,
		"asm/add_other.go": "//go:build !amd64 && !arm64\n\npackage asm\n\nfunc Add(a, b int64) int64 { return a + b }\n",
		"cgo.go": `//go:build cgo

package main

// static int answer(void) { return 42; }
import "C"

func cAnswer() int { return int(C.answer()) }
`,
		"nocgo.go": "//go:build !cgo\n\npackage main\n\nfunc cAnswer() int { return 42 }\n",
	}
	dir := itest.NewModule(t, files)
	if out, _ := itest.Run(t, dir, nil, itest.GoExe, "env", "CGO_ENABLED"); strings.TrimSpace(out) != "1" {
		t.Log("cgo is disabled: only the assembly goes through the proxy")
	}
	itest.Go(t, dir, nil, "build", "-o", "plain"+itest.ExeSuffix(), ".")
	itest.Go(t, dir, nil, "build", itest.ToolexecFlag(), "-o", "wrapped"+itest.ExeSuffix(), ".")
	got := itest.RunProgram(t, filepath.Join(dir, "wrapped"+itest.ExeSuffix()))
	if got != "add 5 c 42\n" {
		t.Errorf("output %q; want %q", got, "add 5 c 42\n")
	}
	a, _ := os.ReadFile(filepath.Join(dir, "plain"+itest.ExeSuffix()))
	b, _ := os.ReadFile(filepath.Join(dir, "wrapped"+itest.ExeSuffix()))
	if !bytes.Equal(a, b) {
		t.Error("asm/cgo binary through an inactive tigris differs from the plain build")
	}

	// Instrumented: the Go functions of the cgo file get probes; the body-less
	// assembly declaration is left alone.
	itest.WriteFile(t, filepath.Join(dir, "tigris.yaml"), itest.ShopConfig)
	itest.Tigris(t, dir, nil, "go", "build", "-o", "inst"+itest.ExeSuffix(), ".")
	trace := filepath.Join(t.TempDir(), "trace.tgr")
	if got := itest.RunProgram(t, filepath.Join(dir, "inst"+itest.ExeSuffix()), "TIGRIS_MODE=fine", "TIGRIS_OUT="+trace); got != "add 5 c 42\n" {
		t.Errorf("instrumented output %q", got)
	}
	names := itest.RecordsBy(t, trace, func(d *writer.ProbeDef) string { return d.Name })
	if names["main"] != 1 || names["cAnswer"] != 1 || names["Add"] != 0 {
		t.Errorf("records by function %v; want main and cAnswer once, no Add", names)
	}
}
