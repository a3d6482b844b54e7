package integration

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/tigrisgo/tigris/integration/internal/itest"
)

// adminSizeClaim is how the documents give what the admin endpoint adds to a
// binary: "about 6.4 MB (1.0 MB in a program that already uses net/http)".
// Line breaks may fall between its words.
var adminSizeClaim = regexp.MustCompile(`about\s+([0-9]+(?:\.[0-9]+)?)\s+MB\s+\(([0-9]+(?:\.[0-9]+)?)\s+MB\s+in\s+a\s+program\s+that\s+already\s+uses\s+net/http\)`)

// helloMain is a hello world; with web, one that also serves HTTP.
func helloMain(web bool) string {
	if !web {
		return "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/itest/greet\"\n)\n\nfunc main() { fmt.Println(greet.Hello(\"world\")) }\n"
	}
	return "package main\n\nimport (\n\t\"fmt\"\n\t\"net/http\"\n\t\"os\"\n\n\t\"example.com/itest/greet\"\n)\n\n" +
		"func main() {\n\thttp.HandleFunc(\"/\", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, greet.Hello(\"web\")) })\n" +
		"\tif len(os.Args) > 1 {\n\t\thttp.ListenAndServe(os.Args[1], nil)\n\t}\n}\n"
}

// TestAdminEndpointSize builds a hello world through tigris with and without
// the admin endpoint (admin.link: true), and the same for a program that
// serves HTTP itself, and checks every figure the documents give for what the
// endpoint adds (adminSizeClaim) against the growth measured: within 10 % or
// 0.2 MB, so that a small drift passes and a stale figure (5.6 MB for 6.4) does not.
func TestAdminEndpointSize(t *testing.T) {
	const mb = 1e6
	var added [2]float64 // without net/http of its own, with
	for k, web := range []bool{false, true} {
		dir := itest.NewModule(t, map[string]string{
			"tigris.yaml":    "version: 1\nmonitor:\n  include: [\"within(example.com/itest/...)\"]\n",
			"greet/greet.go": "package greet\n\nfunc Hello(name string) string { return \"hello, \" + name }\n",
			"main.go":        helloMain(web),
		})
		plain := filepath.Join(dir, "plain"+itest.ExeSuffix())
		inst := filepath.Join(dir, "inst"+itest.ExeSuffix())
		admin := filepath.Join(dir, "admin"+itest.ExeSuffix())
		itest.Go(t, dir, nil, "build", "-o", plain, ".")
		itest.Tigris(t, dir, nil, "go", "build", "-o", inst, ".")
		itest.WriteFile(t, filepath.Join(dir, "tigris.yaml"), "version: 1\nmonitor:\n  include: [\"within(example.com/itest/...)\"]\nadmin:\n  link: true\n")
		itest.Tigris(t, dir, nil, "go", "build", "-o", admin, ".")
		p, i, a := fileSize(t, plain), fileSize(t, inst), fileSize(t, admin)
		added[k] = float64(a-i) / mb
		t.Logf("net/http in the program %v: plain %.1f MB, instrumented %.1f MB, with the admin endpoint %.1f MB: it adds %.2f MB",
			web, float64(p)/mb, float64(i)/mb, float64(a)/mb, added[k])
	}
	if added[0] <= added[1] || added[1] <= 0 {
		t.Fatalf("the endpoint adds %.2f MB to a hello world and %.2f MB to a program that serves HTTP; want more to the first, and something to both", added[0], added[1])
	}

	docs, err := filepath.Glob(filepath.Join(itest.RepoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	claims := 0
	for _, doc := range append(docs, filepath.Join(itest.RepoRoot, "README.md")) {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range adminSizeClaim.FindAllSubmatchIndex(data, -1) {
			claims++
			line := 1 + bytes.Count(data[:m[0]], []byte("\n"))
			for k, what := range []string{"a program without net/http", "a program that uses net/http"} {
				said, _ := strconv.ParseFloat(string(data[m[2+2*k]:m[3+2*k]]), 64)
				if d := math.Abs(said - added[k]); d > max(0.1*added[k], 0.2) {
					rel, _ := filepath.Rel(itest.RepoRoot, doc)
					t.Errorf("%s:%d: says the admin endpoint adds %s MB to %s; measured %.1f MB", rel, line, strconv.FormatFloat(said, 'f', -1, 64), what, added[k])
				}
			}
		}
	}
	if claims < 3 {
		t.Errorf("found %d figures of the admin endpoint's size in the documents (README.md, docs/config.md, docs/admin-api.md), in the form %q; want at least 3", claims, adminSizeClaim)
	}
}
