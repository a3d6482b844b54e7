// Package buildcost pins what a `tigris go` build compiles (issue 19): counts
// of the go command's compiler invocations, never seconds.
package buildcost

import (
	"os"
	"testing"

	"github.com/tigrisgo/tigris/integration/internal/itest"
)

func TestMain(m *testing.M) { os.Exit(itest.Main(m)) }
