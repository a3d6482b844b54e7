package compat

// Modules are the third-party modules whose own test suites the harness runs,
// at exact versions fetched through the module proxy. Each covers a style of Go
// code an instrumenter has to keep intact. CI marks the default subset.
var Modules = []Suite{
	{Name: "x/sync", Module: "golang.org/x/sync", Version: "v0.24.0", CI: true,
		Style: "goroutines, defer/recover (errgroup panics), channels, semaphores, singleflight"},
	{Name: "xxhash", Module: "github.com/cespare/xxhash/v2", Version: "v2.3.0", CI: true,
		Style: "assembly-backed (amd64/arm64 .s with Go declarations), unsafe; allocation tests around the " +
			"inlined New().Write, and a test that loads a plugin built by a plain go build"},
	{Name: "x/exp", Module: "golang.org/x/exp", Version: "v0.0.0-20261014143641-f0251eb4aa3e",
		Packages: []string{"golang.org/x/exp/slices", "golang.org/x/exp/maps", "golang.org/x/exp/constraints"},
		Style:    "generic functions over type sets (slices, maps), instantiated for many types"},
	{Name: "lo", Module: "github.com/samber/lo", Version: "v1.53.0",
		Style: "generics everywhere (hundreds of generic functions); the module ships only its examples as tests"},
	{Name: "conc", Module: "github.com/sourcegraph/conc", Version: "v0.3.0",
		Style: "generic goroutine pools, panic catching and re-panicking, recover"},
	{Name: "go-cmp", Module: "github.com/google/go-cmp", Version: "v0.7.0",
		Style: "reflection-heavy, one big package (cmp), unsafe, generated test data"},
	{Name: "json-iterator", Module: "github.com/json-iterator/go", Version: "v1.1.12",
		Style: "reflection and unsafe (reflect2), code paths chosen by type at run time"},
	{Name: "toml", Module: "github.com/BurntSushi/toml", Version: "v1.6.0",
		Style: "parser (lexer state functions), reflection-based decoding"},
	{Name: "expr", Module: "github.com/expr-lang/expr", Version: "v1.17.8",
		Style: "expression parser, type checker, compiler and VM: big packages, big switch statements"},
	{Name: "chi", Module: "github.com/go-chi/chi/v5", Version: "v5.5.0",
		Style: "web framework: net/http handlers, middleware closures, httptest servers"},
	{Name: "protobuf", Module: "google.golang.org/protobuf", Version: "v1.36.12",
		Style: "generated code (.pb.go), unsafe fast paths, reflection, very big module"},
	{Name: "pkg/errors", Module: "github.com/pkg/errors", Version: "v0.9.1", CI: true,
		Style: "no go.mod (language go1.16: vet's printf check at that version), printf-like Wrapf/Errorf, runtime.Callers stacks"},
	{Name: "go-spew", Module: "github.com/davecgh/go-spew", Version: "v1.1.1",
		Style: "no go.mod (go1.16 rules), reflection and unsafe, printf-like Printf/Sprintf/Fprintf wrappers"},
	{Name: "humanize", Module: "github.com/dustin/go-humanize", Version: "v1.1.0",
		Style: "go 1.21 (the first go line that raises a requiring module's), formatting helpers, big.Int and big.Float"},
	{Name: "yaml.v2", Module: "gopkg.in/yaml.v2", Version: "v2.4.0",
		Style: "an old go line (1.15), a hand-written scanner and parser, reflection-based decoding"},
}

// Std are the standard-library suites, run with monitor.std on. Packages the
// monitor runtime itself depends on (strings, sort, encoding/json, net/http, ...)
// cannot carry probes, because a probe imports the monitor: tigris compiles them
// unchanged, and their suites check that it does, and that nothing else breaks.
//
// A test binary of such a package cannot link the monitor at all (its copy of the
// package is the test variant), so no package of the config may end up in one:
// flag, go/token, go/scanner, go/ast, go/parser, text/tabwriter and
// compress/zlib are linked into the test binaries of sort, bytes, encoding/json
// or net/http (through testing and internal/testenv) and are left out here.
var Std = []Suite{
	{Name: "std-small", CI: true,
		Packages: []string{"encoding/csv", "text/template/parse"},
		Style:    "std parsers: a CSV reader and writer, the template lexer and parser"},
	{Name: "std-monitor-deps-small", CI: true,
		Packages:       []string{"sort"},
		Uninstrumented: []string{"sort"},
		Style:          "a package the monitor runtime imports: compiled unchanged, test binary links no monitor"},
	{Name: "std-text",
		Packages: []string{"text/template", "html/template"},
		Style:    "template execution, reflection, contextual escaping"},
	{Name: "std-encoding",
		Packages: []string{"encoding/xml", "encoding/gob", "encoding/base32", "encoding/ascii85"},
		Style:    "reflection-driven encoders and decoders"},
	{Name: "std-go",
		Packages: []string{"go/printer", "go/format", "go/doc"},
		Style:    "the Go printer and doc extraction: AST walks, big switch statements"},
	{Name: "std-misc",
		Packages: []string{"container/heap", "container/ring", "hash/fnv", "archive/tar",
			"archive/zip", "image/png", "index/suffixarray", "net/mail", "log/slog"},
		Style: "containers, hashes, archives, images, a suffix array, slog handlers"},
	{Name: "std-monitor-deps",
		Packages:       []string{"strings", "bytes", "encoding/json", "net/http"},
		Uninstrumented: []string{"strings", "bytes", "encoding/json", "net/http"},
		Style:          "packages the monitor runtime imports: compiled unchanged, test binaries link no monitor"},
}
