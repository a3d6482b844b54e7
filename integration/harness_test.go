package integration

import (
	"os"
	"testing"

	"github.com/tigrisgo/tigris/integration/internal/itest"
)

func TestMain(m *testing.M) { os.Exit(itest.Main(m)) }
