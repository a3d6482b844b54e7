package rewriter

// CompileJob is one `compile` invocation seen by the toolexec proxy, in the form the
// instrumenter needs. The proxy (toolexec.go) builds it from the compiler's argv; the
// instrumenter (instrument.go) edits Files and records the imports it added; the
// proxy then rewrites argv and resolves export data for AddedImports.
type CompileJob struct {
	// ImportPath is the -p value ("example.com/shop/repo", "main", "runtime").
	ImportPath string
	// ToolexecImportPath is TOOLEXEC_IMPORTPATH: the package as the go command
	// names it ("example.com/app", "p [p.test]"), "" when unknown.
	ToolexecImportPath string
	// TestVariant is the text in brackets of a test variant's TOOLEXEC_IMPORTPATH
	// ("p [p.test]" → "p.test"); empty for a plain package.
	TestVariant string
	// Files are the .go source files in argv order. The instrumenter may replace an
	// entry with a rewritten copy written under WorkDir, and may append new files.
	Files []string
	// WorkDir is a private directory for rewritten files (inside the build's $WORK,
	// or TIGRIS_KEEP when set); it exists when the instrumenter runs.
	WorkDir string
	// Lang is the -lang value ("go1.22"), empty when absent.
	Lang string
	// Std reports the -std flag (compiling a standard library package).
	Std bool
	// Complete reports the -complete flag. The instrumenter clears it when it adds a
	// body-less declaration.
	Complete bool
	// ImportCfg maps import paths to export data files, as read from -importcfg
	// (packagefile lines) and importmap lines applied.
	ImportCfg map[string]string
	// ImportMap holds the importmap lines of the importcfg (source path → actual).
	ImportMap map[string]string
	// Inlinable, when set, returns what the compiler says of the package's
	// functions when it compiles the package unchanged: which it inlines and
	// the size of those too complex to inline. The instrumenter asks only
	// when a function matches.
	//
	// reduced, when not nil, are the files of a reduced copy of the package
	// (inlpass.go) to compile instead of Files.
	Inlinable func(reduced []string) (Inlining, error)
	// ReduceInlining allows the instrumenter to hand Inlinable a reduced copy.
	ReduceInlining bool
	// AddedImports are import paths the instrumenter introduced; the proxy makes sure
	// each one (and its dependencies) has a packagefile line.
	AddedImports []string
	// Log receives one line per match decision when the user asked for it; may be nil.
	Log func(format string, args ...any)
	// Notices are what the instrumenter tells the user whatever the verbosity,
	// one line each with the position first (a function a pointcut names
	// exactly that gets no probe); the proxy prints them with the compile's
	// output, which the go command shows under the package's name.
	Notices []string
}
