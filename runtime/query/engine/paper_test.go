package engine

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/runtime/query"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestPaperExamples runs EndoScope's example queries, with Go names, through
// the language and the planner: each testdata/paper/NAME.sql has
// NAME.golden with its statements in canonical form, their output columns
// and their plans against the shop catalog.
func TestPaperExamples(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "paper", "*.sql"))
	if len(files) < 8 {
		t.Fatalf("%d examples", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			qs, err := query.Compile(string(src), nil)
			if err != nil {
				t.Fatalf("%v\n%s", err, err.(*query.Error).Caret())
			}
			var b strings.Builder
			for _, q := range qs {
				b.WriteString(q.Text + "\n")
				var cols []string
				for _, c := range q.Schema {
					cols = append(cols, c.Name+" "+c.Type.String())
				}
				b.WriteString("  columns: " + strings.Join(cols, ", ") + "\n")
				if q.Kind == query.KindStream {
					continue
				}
				p, err := New(q, shop, Limits{MaxProbes: 100, Budget: 0.05})
				if err != nil {
					t.Fatal(err)
				}
				for _, line := range strings.Split(strings.TrimSuffix(p.Explain(), "\n"), "\n") {
					b.WriteString("  " + line + "\n")
				}
			}
			golden := strings.TrimSuffix(f, ".sql") + ".golden"
			if *update {
				os.WriteFile(golden, []byte(b.String()), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -run TestPaperExamples -update)", err)
			}
			if b.String() != string(want) {
				t.Errorf("%s changed (go test -run TestPaperExamples -update if intended):\n%s", golden, b.String())
			}
		})
	}
}
