//go:build amd64 && !race

package writer

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/tigrisgo/tigris/runtime/internal/machinecode"
)

// TestPublishStaysLast checks in the machine code of Append that the plain
// store that publishes a record (publish, inlined) comes after every store
// of the record's fields: on amd64 that order is all a consumer needs to see
// the whole record once it sees the new head (publish_amd64.go).
func TestPublishStaysLast(t *testing.T) {
	if testing.Short() {
		t.Skip("disassembles the package")
	}
	stores, dis, err := machinecode.Stores(".", t.TempDir(), `writer\.\(\*Async\)\.Append$`)
	if err != nil {
		t.Fatal(err)
	}
	head := fmt.Sprintf("0x%x(", unsafe.Offsetof(shard{}.head))
	fields, err := machinecode.PublishedLast(stores,
		func(s machinecode.Store) bool { return strings.HasPrefix(s.Src, "async.go:") },
		func(s machinecode.Store) bool {
			return strings.HasPrefix(s.Src, "publish_amd64.go:") && strings.HasPrefix(s.Dst, head)
		})
	if err == nil && fields < 9 {
		err = fmt.Errorf("%d stores of the record's 9 fields: the code changed shape; check the order by hand", fields)
	}
	if err != nil {
		t.Fatalf("Append: %v:\n%s", err, dis)
	}
}
