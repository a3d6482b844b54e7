//go:build amd64 && !race

package writer

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"unsafe"
)

// TestPublishStaysLast checks in the machine code of Append that the plain
// store that publishes a record (publish, inlined) comes after every store
// of the record's fields: on amd64 that order is all a consumer needs to see
// the whole record once it sees the new head (publish_amd64.go).
func TestPublishStaysLast(t *testing.T) {
	if testing.Short() {
		t.Skip("disassembles the test binary")
	}
	// The package compiled as the go command compiles it for a program (a
	// test binary is linked without a symbol table).
	pkg := t.TempDir() + "/writer.a"
	if out, err := exec.Command("go", "build", "-o", pkg, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "tool", "objdump", "-s", `writer\.\(\*Async\)\.Append$`, pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool objdump: %v\n%s", err, out)
	}
	head := fmt.Sprintf("0x%x(", unsafe.Offsetof(shard{}.head))
	publishAt, fields := -1, 0
	var lastField int
	for i, line := range strings.Split(string(out), "\n") {
		f := strings.Split(strings.TrimSpace(line), "\t")
		if len(f) < 4 {
			continue
		}
		src, inst := f[0], strings.TrimSpace(f[len(f)-1])
		comma := strings.LastIndex(inst, ", ")
		if !strings.HasPrefix(inst, "MOV") || comma < 0 {
			continue
		}
		dst := inst[comma+2:]
		if !strings.Contains(dst, "(") || strings.Contains(dst, "(SP)") {
			continue // a register or the stack
		}
		switch {
		case strings.HasPrefix(src, "publish_amd64.go:") && strings.HasPrefix(dst, head):
			publishAt = i
		case strings.HasPrefix(src, "async.go:"):
			fields++
			lastField = i
		}
	}
	if publishAt < 0 || fields < 9 {
		t.Fatalf("found the publishing store at %d and %d stores of the record's 9 fields: the code of Append changed shape; check the order by hand:\n%s", publishAt, fields, out)
	}
	if lastField > publishAt {
		t.Fatalf("a store of the record comes after the store that publishes it:\n%s", out)
	}
}
