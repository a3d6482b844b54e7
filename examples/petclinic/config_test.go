package petclinic_test

import (
	"testing"

	"github.com/tigrisgo/tigris/config"
)

// TestTigrisConfig checks that tigris.yaml loads and selects the service and
// repository layers only.
func TestTigrisConfig(t *testing.T) {
	cfg, err := config.Load(config.FileName)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Instrument == nil {
		t.Fatal("tigris.yaml instruments nothing")
	}
	const base = "github.com/tigrisgo/tigris/examples/petclinic/"
	for pkg, want := range map[string]bool{
		base + "internal/service":    true,
		base + "internal/repository": true,
		base + "internal/handler":    false,
		base + "internal/app":        false,
		base + "internal/database":   false,
		base + "internal/model":      false,
		base + "cmd/petclinic":       false,
		"database/sql":               false,
		"modernc.org/sqlite":         false,
	} {
		if got := cfg.Instrument.MayMatchPackage(pkg); got != want {
			t.Errorf("MayMatchPackage(%s) = %v, want %v", pkg, got, want)
		}
	}
}
