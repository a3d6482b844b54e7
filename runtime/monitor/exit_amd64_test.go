//go:build amd64 && !race

package monitor

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/runtime/internal/machinecode"
)

// TestExitPublishesLast checks in the machine code of the fine exit, where
// the writer's Reserve and Commit are inlined, that the plain store which
// publishes the record (writer/publish_amd64.go) comes after the stores of
// its nine fields, as TestPublishStaysLast does for Append.
func TestExitPublishesLast(t *testing.T) {
	if testing.Short() {
		t.Skip("disassembles the package")
	}
	src, err := os.ReadFile("abi.go")
	if err != nil {
		t.Fatal(err)
	}
	// The two lines of End that fill the reserved slot.
	var lines []string
	for i, l := range strings.Split(string(src), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "r.Probe, r.Flags, r.EOI, r.ESS = ") || strings.HasPrefix(l, "r.Trace, r.GID, r.TIn, r.TOut, r.Size = ") {
			lines = append(lines, fmt.Sprintf("abi.go:%d", i+1))
		}
	}
	if len(lines) != 2 {
		t.Fatalf("found %d of the 2 lines of exit that fill the slot: %v", len(lines), lines)
	}
	// publish's line: setOwn, in the same file, also stores plainly.
	pub, err := os.ReadFile("../writer/publish_amd64.go")
	if err != nil {
		t.Fatal(err)
	}
	publishLine := ""
	for i, l := range strings.Split(string(pub), "\n") {
		if strings.HasPrefix(l, "func publish(") {
			publishLine = fmt.Sprintf("publish_amd64.go:%d", i+1)
		}
	}
	stores, dis, err := machinecode.Stores(".", t.TempDir(), `monitor\.\(\*Call\)\.End$`)
	if err != nil {
		t.Fatal(err)
	}
	fields, err := machinecode.PublishedLast(stores,
		func(s machinecode.Store) bool { return s.Src == lines[0] || s.Src == lines[1] },
		func(s machinecode.Store) bool { return s.Src == publishLine })
	if err == nil && fields < 9 {
		err = fmt.Errorf("%d stores of the record's 9 fields: the code changed shape; check the order by hand", fields)
	}
	if err != nil {
		t.Fatalf("exit: %v:\n%s", err, dis)
	}
}
