package doccheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/adminclient"
)

// TestCtlHeaderDocumented: docs/admin-api.md shows the line with which every
// tigris ctl output names its program as adminclient.Program prints it, the
// name of a program that does not say its binary, and the error for an
// address that is no admin endpoint.
func TestCtlHeaderDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "docs", "admin-api.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	p := adminclient.Program{Addr: "127.0.0.1:7070", Binary: "/srv/petclinic", PID: 22403, Go: "go1.26.8", Uptime: 182 * time.Second}
	old := p
	old.Binary = ""
	notAdmin := &adminclient.NotAdminError{Addr: "127.0.0.1:8080", Why: "404 Not Found"}
	for _, want := range []string{
		"# " + p.String() + "\n",
		fmt.Sprintf("named `%s`", strings.TrimSuffix(old.String(), fmt.Sprintf(", pid %d, go1.26.8, up 3m2s, at 127.0.0.1:7070", p.PID))),
		"tigris: " + notAdmin.Error() + "\n",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("docs/admin-api.md, tigris ctl: no %q", want)
		}
	}
}
