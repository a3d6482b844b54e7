package rewriter

// SessionOptions are what the `tigris toolexec` command line and environment say.
type SessionOptions struct {
	// ConfigPath is the tigris.yaml to use; empty means: TIGRIS_CONFIG, else search
	// upward from Dir.
	ConfigPath string
	// Dir is the go command's working directory (where the search starts).
	Dir string
	// Keep, when set, is a directory where rewritten sources are kept for inspection
	// (TIGRIS_KEEP); otherwise they live in the build's $WORK and vanish with it.
	Keep string
	// Verbose logs every match decision to stderr (TIGRIS_LOG=1).
	Verbose bool
}

// Session is what one toolexec process knows: the options and the loaded config.
// The proxy creates one per process and calls Instrument for each compile.
type Session struct {
	opts SessionOptions
}

// NewSession loads the configuration. A missing config is not an error: the session
// is then inactive and the proxy passes everything through untouched.
func NewSession(opts SessionOptions) (*Session, error) {
	return &Session{opts: opts}, nil
}

// Active reports whether a config was found whose include can match anything. An
// inactive session must leave every tool invocation and -V=full output untouched.
func (s *Session) Active() bool { return false }

// ConfigHash is a digest of everything in the config that changes compiler output;
// the proxy mixes it into the -V=full fingerprint.
func (s *Session) ConfigHash() []byte { return nil }

// Instrument rewrites job.Files for one compile when the config matches the package,
// and records the imports it added. It returns false when the package is left alone.
// On any error the proxy must run the original compile unchanged (the compiler then
// reports the user's own errors).
func (s *Session) Instrument(job *CompileJob) (bool, error) { return false, nil }

// MonitorPackages are the import paths the linker needs when any package of a
// binary was instrumented; the proxy resolves their export data (with dependencies)
// for compile and link.
var MonitorPackages = []string{"github.com/tigrisgo/tigris/monitor"}
