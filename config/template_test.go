package config

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/runtime/pointcut"
)

func TestTemplateLoads(t *testing.T) {
	for _, mod := range []string{"example.com/shop", "github.com/Some-One/x_y.z/v2", "shop"} {
		src := Template(mod, "")
		c, err := Parse(FileName, src)
		if err != nil {
			t.Fatalf("Template(%q) does not load: %v\n%s", mod, err, src)
		}
		if c.Instrument == nil || len(c.Include) != 1 || c.Named[0].Expr != ModuleExpr(mod) {
			t.Errorf("Template(%q): include %q, named %v", mod, c.Include, c.Named)
		}
	}
}

// The template instruments every function and method of the module's packages
// except String methods, and nothing outside the module.
func TestTemplateSelects(t *testing.T) {
	c, err := Parse(FileName, Template("example.com/shop", "example.com/shop/repo"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sig  pointcut.Signature
		want bool
	}{
		{pointcut.Signature{Package: "example.com/shop", Name: "main"}, true},
		{pointcut.Signature{Package: "example.com/shop/repo", Name: "Find", Params: []string{"context.Context", "int"}, Results: []string{"error"}}, true},
		{pointcut.Signature{Package: "example.com/shop/internal/db", Recv: "Store", RecvPtr: true, Name: "Get", Flags: pointcut.Method}, true},
		{pointcut.Signature{Package: "example.com/shop/repo", Recv: "ID", Name: "String", Results: []string{"string"}, Flags: pointcut.Method}, false},
		{pointcut.Signature{Package: "example.com/shopping", Name: "F"}, false},
		{pointcut.Signature{Package: "net/http", Name: "Get"}, false},
	} {
		if got := c.Instrument.MatchExecution(&tc.sig); got != tc.want {
			t.Errorf("%s.%s.%s: %v, want %v", tc.sig.Package, tc.sig.Recv, tc.sig.Name, got, tc.want)
		}
	}
}

// commentedKey matches a commented-out setting: "# key: ..." or "#   - item".
var commentedKey = regexp.MustCompile(`^(\s*)# ((?:[a-z][a-z-]*:|  +[a-z-]+:|  +- ).*)$`)

// The commented-out settings must be valid too: uncommented, the file must load
// and give the defaults.
func TestTemplateUncommented(t *testing.T) {
	var b strings.Builder
	uncommented := 0
	for _, line := range strings.SplitAfter(string(Template("example.com/shop", "example.com/shop/repo")), "\n") { // strings.Lines needs go1.24
		if line == "" {
			continue // after the last line break
		}
		if m := commentedKey.FindStringSubmatch(strings.TrimSuffix(line, "\n")); m != nil {
			line = m[1] + m[2] + "\n"
			uncommented++
		}
		b.WriteString(line)
	}
	if uncommented < 20 {
		t.Fatalf("only %d commented-out settings found:\n%s", uncommented, b.String())
	}
	c, err := Parse(FileName, []byte(b.String()))
	if err != nil {
		t.Fatalf("uncommented template does not load: %v\n%s", err, b.String())
	}
	d := Default().Runtime
	r := c.Runtime
	if r.Mode != d.Mode || r.Sampling != d.Sampling || r.Summaries || r.Analysis.Enabled ||
		r.Analysis.Criteria != d.Analysis.Criteria || r.Analysis.Interval != d.Analysis.Interval ||
		r.Writer != d.Writer || c.Std || len(r.Rules) != 1 {
		t.Errorf("uncommented template differs from the defaults:\n got %+v\nwant %+v", r, d)
	}
	if r.Admin.Listen != "127.0.0.1:7070" || !c.AdminLink {
		t.Errorf("admin.listen = %q, admin.link %v", r.Admin.Listen, c.AdminLink)
	}
}

// TestTemplateAdmin pins the admin block's comment to what a build does: the
// template as written links no endpoint (so TIGRIS_ADMIN alone only warns, as
// the comment says), and uncommenting admin: and link: true alone links one
// that TIGRIS_ADMIN starts.
func TestTemplateAdmin(t *testing.T) {
	src := string(Template("example.com/shop", "example.com/shop/repo"))
	// The comments' words, their line breaks and markers aside.
	words := strings.Join(strings.Fields(strings.ReplaceAll(src, "#", "")), " ")
	for _, want := range []string{
		"built into the binary only when link is true or listen is set",
		"TIGRIS_ADMIN alone cannot start it in a binary built without link: true or listen",
		"admin: link: true build the endpoint in",
	} {
		if !strings.Contains(words, want) {
			t.Errorf("the template does not say %q:\n%s", want, src)
		}
	}
	if strings.Contains(words, "here or with TIGRIS_ADMIN") {
		t.Error("the template says TIGRIS_ADMIN alone turns the endpoint on")
	}
	c, err := Parse(FileName, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if c.AdminLink || c.Runtime.Admin.Listen != "" {
		t.Errorf("the template as written: admin.link %v, listen %q; want no endpoint built in", c.AdminLink, c.Runtime.Admin.Listen)
	}
	linked := strings.Replace(strings.Replace(src, "\n# admin:\n", "\nadmin:\n", 1), "\n#   link: true", "\n  link: true", 1)
	if c, err = Parse(FileName, []byte(linked)); err != nil {
		t.Fatalf("with admin.link uncommented: %v", err)
	}
	if !c.AdminLink || c.Runtime.Admin.Listen != "" {
		t.Errorf("with admin.link uncommented: link %v, listen %q; want the endpoint built in and started only by TIGRIS_ADMIN", c.AdminLink, c.Runtime.Admin.Listen)
	}
}

func TestWriteTemplate(t *testing.T) {
	dir := t.TempDir()
	path, err := WriteTemplate(dir, "example.com/shop", "", false)
	if err != nil || path != filepath.Join(dir, FileName) {
		t.Fatalf("WriteTemplate = %q, %v", path, err)
	}
	if _, err := Load(path); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, []byte("# mine\n"), 0o666)
	_, err = WriteTemplate(dir, "example.com/shop", "", false)
	if !errors.Is(err, ErrExists) || err.Error() != path+": already exists (use --force to overwrite it)" {
		t.Errorf("WriteTemplate over an existing file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "# mine\n" {
		t.Errorf("existing file changed: %q", b)
	}
	if _, err := WriteTemplate(dir, "example.com/shop", "", true); err != nil {
		t.Fatalf("WriteTemplate(force): %v", err)
	}
	if b, _ := os.ReadFile(path); !strings.HasPrefix(string(b), "# tigris.yaml for example.com/shop") {
		t.Errorf("force did not overwrite: %q", b)
	}
}

func TestModulePath(t *testing.T) {
	for src, want := range map[string]string{
		"module example.com/shop\n\ngo 1.26\n":                   "example.com/shop",
		"// comment\nmodule   example.com/x // trailing\n":       "example.com/x",
		"module \"example.com/quoted\"\n":                        "example.com/quoted",
		"module (\n\texample.com/block\n)\n":                     "example.com/block",
		"go 1.26\nrequire x.y/z v1.0.0\nmodule example.com/late": "example.com/late",
	} {
		got, err := ModulePath([]byte(src))
		if err != nil || got != want {
			t.Errorf("ModulePath(%q) = %q, %v; want %q", src, got, err, want)
		}
	}
	for _, src := range []string{"", "go 1.26\n", "module \"unterminated\n", "module \"\"\n"} {
		if got, err := ModulePath([]byte(src)); err == nil {
			t.Errorf("ModulePath(%q) = %q, want an error", src, got)
		}
	}
}

// TestTemplatePromisesOnlyWhatIsBuilt: the comments describe what the runtime
// does; argument summaries are not implemented, and sampling is per trace.
func TestTemplatePromisesOnlyWhatIsBuilt(t *testing.T) {
	src := string(Template("example.com/shop", "example.com/shop/repo"))
	for _, bad := range []string{"argument", "fine-mode calls recorded"} {
		if strings.Contains(src, bad) {
			t.Errorf("the template mentions %q:\n%s", bad, src)
		}
	}
}

// The template's commented-out include entry for function literals selects,
// uncommented, the literals of the module's packages and nothing else; as
// written, no literal.
func TestTemplateLiteralLine(t *testing.T) {
	src := string(Template("example.com/shop", "example.com/shop/repo"))
	line := "  # - " + yamlScalar(LiteralExpr("example.com/shop"))
	if !strings.Contains(src, line) {
		t.Fatalf("the template has no line %q:\n%s", line, src)
	}
	handler := pointcut.Signature{Package: "example.com/shop/web", Name: "NewHandler", Lit: ".func1", Flags: pointcut.Literal,
		Params: []string{"net/http.ResponseWriter", "*net/http.Request"}}
	other := handler
	other.Package = "net/http"
	for _, tc := range []struct {
		src         string
		shop, other bool
	}{
		{src, false, false},
		{strings.Replace(src, line, "    - "+yamlScalar(LiteralExpr("example.com/shop")), 1), true, false},
	} {
		c, err := Parse(FileName, []byte(tc.src))
		if err != nil {
			t.Fatalf("%v\n%s", err, tc.src)
		}
		if got := c.Instrument.MatchExecution(&handler); got != tc.shop {
			t.Errorf("the module's literal: %v, want %v", got, tc.shop)
		}
		if got := c.Instrument.MatchExecution(&other); got != tc.other {
			t.Errorf("another package's literal: %v, want %v", got, tc.other)
		}
	}
}
