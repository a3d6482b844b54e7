package evaluation

import (
	"bytes"
	"strings"
	"testing"
)

// TestDemoEndsWithDash: the demo's last line is the tigris dash command for
// its trace, when the trace is kept.
func TestDemoEndsWithDash(t *testing.T) {
	var out bytes.Buffer
	demoClosing(&out, "/tmp/demo/petclinic.tgr", true)
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if last := lines[len(lines)-1]; last != "   go run ./cmd/tigris dash --open /tmp/demo/petclinic.tgr" {
		t.Errorf("the demo ends with %q:\n%s", last, out.String())
	}
	out.Reset()
	demoClosing(&out, "/tmp/demo/petclinic.tgr", false)
	if strings.Contains(out.String(), "tigris dash") {
		t.Errorf("a dash command for a trace that is removed:\n%s", out.String())
	}
}
