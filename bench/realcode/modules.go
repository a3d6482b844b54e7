package realcode

// Module is one real module whose own benchmarks the workload runs: pinned,
// fetched through the module proxy, and the main module of its own copy.
type Module struct {
	Name    string `json:"name"`    // short name in tables and --modules: "fastjson"
	Path    string `json:"path"`    // module path
	Version string `json:"version"` // pinned version
	What    string `json:"what"`    // what kind of code it is, for the table
	// Package is the package whose benchmarks run, relative to the module
	// root ("." for the root).
	Package string `json:"package"`
	// Bench are the -test.bench expressions selecting the benchmarks, one
	// test process each (a benchmark must match every level of an
	// expression, so benchmarks of different depths need one each): a few
	// that exercise the module's own code (none that time another library),
	// so that one run of all of them takes a second or two.
	Bench []string `json:"bench"`
	// Tiny, when set, is the smaller selection of the tiny plan.
	Tiny []string `json:"tiny,omitempty"`
}

// Modules are the modules of the quick and full plans, in table order. Every
// one is served by the module proxy at this version; their benchmarks are
// their authors' (the files ending in _test.go of the module's zip), chosen
// among those that time the module's own code.
var Modules = []Module{
	{
		Name: "fastjson", Path: "github.com/valyala/fastjson", Version: "v1.6.10",
		What: "JSON parser, hot functions of 2–5 ns", Package: ".",
		// Parse, Validate and MarshalTo of a small and a large document (not
		// the stdjson sub-benchmarks, which time encoding/json), an object
		// lookup and the number and string scanners.
		Bench: []string{
			`^Benchmark(Parse|Validate)$/^(small|twitter)$/^fastjson$`,
			`^BenchmarkObjectGet$/^items_10$/^lookups_4$`,
			`^Benchmark(MarshalTo|ParseRawNumber|ParseRawString)$/^(small|twitter|1234|-1\.32434e\+12|"abcd")$`,
		},
		Tiny: []string{`^BenchmarkParse$/^small$/^fastjson$`, `^BenchmarkParseRawNumber$/^1234$`},
	},
	{
		Name: "gjson", Path: "github.com/tidwall/gjson", Version: "v1.20.2",
		What: "JSON path queries", Package: ".",
		Bench: []string{`^Benchmark(Valid|ValidBytes)$`}, // not GoStdlibValidBytes
	},
	{
		Name: "toml", Path: "github.com/BurntSushi/toml", Version: "v1.6.0",
		What: "TOML parser and encoder", Package: ".",
		Bench: []string{`^Benchmark(Decode|Encode)$/^(bool|table|spec-1\.1\.0|large-doc)$`, `^Benchmark(Key|Escapes)$`},
	},
	{
		Name: "btree", Path: "github.com/google/btree", Version: "v1.1.3",
		What: "B-tree container, generic and interface-based", Package: ".",
		Bench: []string{`^Benchmark(InsertG|SeekG|DeleteInsertG|GetG|AscendG|Get)$`},
	},
	{
		Name: "httprouter", Path: "github.com/julienschmidt/httprouter", Version: "v1.3.0",
		What: "HTTP router", Package: ".",
		Bench: []string{`^BenchmarkAllowed$`}, // its only benchmark: two sub-benchmarks
	},
	{
		Name: "zerolog", Path: "github.com/rs/zerolog", Version: "v1.35.1",
		What: "structured logger", Package: ".",
		Bench: []string{
			`^Benchmark(LogEmpty|Disabled|Info|ContextFields|LogFields)$`,
			`^BenchmarkLogFieldType$/^(Int|Str|Object)$`,
			`^BenchmarkHooks$/^Nop$/^Single$`,
		},
	},
	{
		Name: "lz4", Path: "github.com/pierrec/lz4/v4", Version: "v4.1.33",
		What: "LZ4 compressor; decoding in assembly on amd64", Package: ".",
		Bench: []string{`^Benchmark(Compress|CompressRandom|Uncompress|CompressPg1661|UncompressPg1661|WriterReset)$`},
	},
}

// tinyModules are the modules of the tiny plan: small, without dependencies,
// quick to build.
var tinyModules = []string{"httprouter", "fastjson"}

// moduleNamed returns the module of Modules with this name.
func moduleNamed(name string) (Module, bool) {
	for _, m := range Modules {
		if m.Name == name {
			return m, true
		}
	}
	return Module{}, false
}
