package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestNoSecretInFlagDefaults: no flag of any command takes its default from
// a variable that may hold a secret, since --help prints defaults. Commands
// read such variables when they run (dash, ctl, export).
func TestNoSecretInFlagDefaults(t *testing.T) {
	secrets := map[string]string{
		"TIGRIS_ADMIN_TOKEN":          "s3cr3t-admin-token",
		"OTEL_EXPORTER_OTLP_HEADERS":  "authorization=s3cr3t-otlp-header",
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://s3cr3t-endpoint:4318",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				n++
				if strings.Contains(f.DefValue, "s3cr3t") {
					t.Errorf("%s --%s: its default %q comes from the environment; --help prints it", c.CommandPath(), f.Name, f.DefValue)
				}
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	if n < 50 {
		t.Fatalf("only %d flags visited", n)
	}
	for _, args := range [][]string{{"export", "--help"}, {"ctl", "--help"}, {"dash", "--help"}} {
		out, err := runTigris(t, args...)
		if err != nil || strings.Contains(out, "s3cr3t") {
			t.Errorf("tigris %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
