package rewriter

import (
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/config"
	"github.com/tigrisgo/tigris/runtime/pointcut"
)

// stdSyntax is what the standard library's packages of a small HTTP client
// declare, as far as these tests need.
var stdSyntax = []*pointcut.Syntax{
	{Path: "strings", Decls: []pointcut.Decl{{Name: "ToUpper"}, {Name: "Split"}, {Recv: "Builder", RecvPtr: true, Name: "String"}},
		Idents: map[string]bool{"ToUpper": true, "Itoa": true}},
	{Path: "net/http", Decls: []pointcut.Decl{{Recv: "Client", RecvPtr: true, Name: "Do"}, {Name: "Get"}}, Idents: map[string]bool{"ToUpper": true}},
	{Path: "internal/bytealg", Decls: []pointcut.Decl{{Name: "IndexByte"}}, Idents: map[string]bool{}},
}

func stdSession(t *testing.T, yaml string) *Session {
	t.Helper()
	cfg, err := config.Parse("tigris.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return &Session{cfg: cfg}
}

// TestStdOnly: include entries whose executions fall in the standard library
// are found, with the packages and a call-site pointcut to write instead;
// call-site entries, entries of the module and monitor.std are left alone.
func TestStdOnly(t *testing.T) {
	s := stdSession(t, `version: 1
pointcuts:
  client: execution(* net/http.(*Client).Do(..))
monitor:
  include:
    - client
    - execution(* strings.*(..)) || execution(* net/http.Get(..))
    - execution(* example.com/m/...*(..))
    - call(* strings.ToUpper(..))
    - execution(* strings.Nothing(..))
    - execution(* internal/bytealg.*(..))
`)
	got := s.StdOnly(s.Include(), stdSyntax, "example.com/m")
	want := []StdOnly{
		{Entry: "client", Packages: []string{"net/http"}, Instead: "call(* net/http.(*Client).Do(..)) && within(example.com/m/...)"},
		{Entry: "execution(* strings.*(..)) || execution(* net/http.Get(..))", Packages: []string{"net/http", "strings"},
			Instead: "(call(* strings.*(..)) || call(* net/http.Get(..))) && within(example.com/m/...)"},
	}
	if len(got) != len(want) {
		t.Fatalf("StdOnly = %+v\nwant %+v", got, want)
	}
	for i := range want {
		if got[i].Entry != want[i].Entry || strings.Join(got[i].Packages, ",") != strings.Join(want[i].Packages, ",") || got[i].Instead != want[i].Instead {
			t.Errorf("StdOnly[%d] = %+v\nwant %+v", i, got[i], want[i])
		}
	}
	// The call-site pointcut selects the calls written in the module only.
	pc, err := s.cfg.Env.Parse(got[0].Instead)
	if err != nil {
		t.Fatal(err)
	}
	callee := &pointcut.Signature{Package: "net/http", Recv: "Client", RecvPtr: true, Name: "Do", Flags: pointcut.Method}
	if !pc.MatchCall(callee, &pointcut.Signature{Package: "example.com/m/api", Name: "Fetch"}) ||
		pc.MatchCall(callee, &pointcut.Signature{Package: "example.com/other", Name: "Fetch"}) {
		t.Errorf("%s: selects the wrong calls", got[0].Instead)
	}
	if got := s.StdOnly(s.Include(), stdSyntax, ""); len(got) != 2 || got[0].Instead != "call(* net/http.(*Client).Do(..))" {
		t.Errorf("without a module: %+v", got)
	}

	std := stdSession(t, "version: 1\nmonitor:\n  std: true\n  include: [\"execution(* strings.*(..))\"]\n")
	if got := std.StdOnly(std.Include(), stdSyntax, "example.com/m"); got != nil {
		t.Errorf("with monitor.std: %+v", got)
	}
}

// TestStdNote: the note says why and what to write, as a YAML list item.
func TestStdNote(t *testing.T) {
	note := StdNote([]StdOnly{{Entry: "execution(* strings.*(..))", Packages: []string{"strings"}, Instead: "call(* strings.*(..)) && within(example.com/m/...)"}})
	want := `monitor.include entry execution(* strings.*(..)) selects functions of the standard library (strings), which tigris compiles unchanged unless monitor.std is true, so it instruments nothing.
To measure the calls your packages make to them, write this entry instead:
    - "call(* strings.*(..)) && within(example.com/m/...)"
or set monitor.std: true to instrument the functions themselves, for every caller (docs/pointcuts.md).
`
	if note != want {
		t.Errorf("note:\n%s\nwant:\n%s", note, want)
	}
	if StdNote(nil) != "" {
		t.Error("a note for no entries")
	}
	many := StdNote([]StdOnly{{Entry: "x", Packages: []string{"a", "b", "c", "d", "e", "f"}}})
	if !strings.Contains(many, "(a, b, c, d and 2 more)") || !strings.Contains(many, "call(...)") {
		t.Errorf("note:\n%s", many)
	}
}
