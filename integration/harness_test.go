// Package integration builds real programs with the real toolchain through
// `tigris toolexec` and runs them; the harness is integration/internal/itest.
package integration

import (
	"os"
	"testing"

	"github.com/tigrisgo/tigris/integration/internal/itest"
)

func TestMain(m *testing.M) { os.Exit(itest.Main(m)) }
