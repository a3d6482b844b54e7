package rewriter

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/tigrisgo/tigris/config"
)

// SessionOptions are what the `tigris toolexec` command line and environment say.
type SessionOptions struct {
	// ConfigPath is the tigris.yaml to use (the command line's --config, else
	// TIGRIS_CONFIG); empty means: search upward from Dir.
	ConfigPath string
	// Dir is the go command's working directory (where the search starts).
	Dir string
	// Keep, when set, is a directory where rewritten sources are kept for inspection
	// (TIGRIS_KEEP); otherwise they live in the build's $WORK and vanish with it.
	Keep string
	// Verbose logs every match decision to stderr (TIGRIS_LOG=1).
	Verbose bool
	// Plan is the build plan of `tigris go` (--plan); "" for a build that
	// runs go build -toolexec itself.
	Plan string
}

// Session is what one toolexec process knows: the options and the loaded config.
// The proxy creates one per process and calls Instrument for each compile.
type Session struct {
	opts SessionOptions
	cfg  *config.Config // nil: no config, inactive
	// settingsText is the run-time settings as the linker embeds them (LinkFlags).
	settingsText string
}

// NewSession loads the configuration. A missing config is not an error: the session
// is then inactive and the proxy passes everything through untouched. A broken
// config is an error: nothing builds on a bad config.
func NewSession(opts SessionOptions) (*Session, error) {
	s := &Session{opts: opts}
	path := opts.ConfigPath
	if path == "" {
		found, err := config.Find(opts.Dir)
		if errors.Is(err, fs.ErrNotExist) {
			return s, nil // no config anywhere up the tree
		}
		if err != nil {
			return nil, err
		}
		path = found
	}
	cfg, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	text, err := cfg.Runtime.Encode()
	if err != nil {
		return nil, fmt.Errorf("encoding run-time settings: %w", err)
	}
	s.cfg, s.settingsText = cfg, text
	return s, nil
}

// Active reports whether a config was found whose include can match anything. An
// inactive session must leave every tool invocation and -V=full output untouched.
func (s *Session) Active() bool { return s != nil && s.cfg != nil && s.cfg.Instrument != nil }

// BuildHash is a digest of what in the config changes compiler output; the
// proxy mixes it into compile's -V=full fingerprint. Run-time settings are not
// part of it: they reach the binary through the linker (LinkFlags).
func (s *Session) BuildHash() []byte {
	if !s.Active() {
		return nil
	}
	h := sha256.New()
	h.Write(s.cfg.BuildHash())
	h.Write([]byte(instrumenterVersion))
	return h.Sum(nil)
}

// ConfigHash is a digest of everything in the config that changes the binary;
// the proxy mixes it into link's -V=full fingerprint, so a change of run-time
// settings relinks but recompiles nothing.
func (s *Session) ConfigHash() []byte {
	if !s.Active() {
		return nil
	}
	h := sha256.New()
	h.Write(s.cfg.Hash())
	h.Write([]byte(s.settingsText))
	h.Write([]byte(instrumenterVersion))
	return h.Sum(nil)
}

// settingsSymbol is the monitor's string variable the linker sets (-X) to the
// run-time settings of the build.
const settingsSymbol = monitorPath + ".linkedSettings"

// LinkFlags are the linker flags that give an instrumented binary its run-time
// settings. The settings are linked rather than compiled into the probe tables
// so that changing them does not change any compiler output, which would make
// the go command recompile every package including the standard library.
func (s *Session) LinkFlags() []string {
	if !s.Active() {
		return nil
	}
	return []string{"-X", settingsSymbol + "=" + s.settingsText}
}

// instrumenterVersion changes whenever generated code changes shape, so objects
// built by an older tigris are not reused even when the binary hash would not tell.
const instrumenterVersion = "tigris-instrumenter-7"

// MonitorPackages are the import paths every instrumented package imports; the
// proxy resolves their export data (with dependencies) for compile and link.
// The admin endpoint is added when the config links it (LinkedPackages).
var MonitorPackages = []string{monitorPath, atexitPath, analyzerPath}

// LinkedPackages are the runtime packages instrumented code imports under this
// config: MonitorPackages and, with admin.link, the admin endpoint.
func (s *Session) LinkedPackages() []string {
	pkgs := slices.Clone(MonitorPackages)
	if s.cfg != nil && s.cfg.AdminLink {
		pkgs = append(pkgs, adminPath)
	}
	return pkgs
}
