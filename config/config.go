package config

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tigrisgo/tigris/runtime/pointcut"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// The values of monitor.inlinable.
const (
	InlinableSkip  = "skip"
	InlinableProbe = "probe"
)

// The values of monitor.small.
const (
	// SmallSkip leaves a function too small to be worth a probe without one.
	SmallSkip = "skip"
	// SmallProbe instruments it anyway.
	SmallProbe = "probe"
)

// The values of monitor.panics.
const (
	// PanicsOwnDefers: a probe defers its exit only in a function with a
	// defer statement of its own; elsewhere each of the function's returns
	// ends the call, so a probe that is off costs a load and a branch, and a
	// panic passing through is not measured.
	PanicsOwnDefers = "own-defers"
	// PanicsAll: every probe defers its exit, so every panic passing through
	// a probed function is measured, and every probed function carries a
	// defer's bookkeeping, also when its probe is off.
	PanicsAll = "all"
)

// FileName is the name Find looks for.
const FileName = "tigris.yaml"

// Version is the only schema version this package reads.
const Version = 1

// Config is a loaded, validated tigris.yaml. Parse, Load and Default return it
// complete; nothing in it is partial. It is read-only after that and then safe for
// concurrent use.
type Config struct {
	// Path is the file it was read from, as given to Load or Parse; "" for Default.
	Path string

	// Named are the named pointcuts of the pointcuts section, in file order.
	Named []pointcut.Named
	// Env is the pointcut environment built from Named. Use it to parse any further
	// expression (run-time rule patterns, the admin endpoint) so names resolve.
	Env *pointcut.Env

	// Include and Exclude are monitor.include and monitor.exclude as written: each a
	// pointcut name or expression.
	Include, Exclude []string
	// Instrument selects the functions that get probes compiled in:
	// (include₁ || include₂ || ...) && !(exclude₁ || exclude₂ || ...). It is nil when
	// Include is empty, which means nothing is instrumented; test for nil before
	// matching.
	Instrument *pointcut.Pointcut
	// Std allows instrumenting standard-library packages (monitor.std). Without it
	// the rewriter skips them whatever Instrument says.
	Std bool
	// Inlinable says what happens to a matched function that the compiler
	// inlines in a plain build (monitor.inlinable): InlinableSkip (the default)
	// leaves it without a probe, so that inlining and escape decisions stay
	// those of the plain build; InlinableProbe instruments it anyway.
	Inlinable string
	// Panics says which probes defer their exit (monitor.panics):
	// PanicsOwnDefers (the default) or PanicsAll.
	Panics string
	// Small says what happens to a matched function too small to be worth a
	// probe (monitor.small): SmallSkip (the default) leaves it without one,
	// SmallProbe instruments it anyway. See rewriter.SmallSize.
	Small string
	// Floor compiles every probe as the floor it is measured against
	// (monitor.floor): the probe's load and branch and a cold call of
	// monitor.Floor, nothing measured. For benchmarks only.
	Floor bool
	// AdminLink links the admin HTTP endpoint into instrumented binaries
	// (admin.link; by default on exactly when admin.listen is set), so that
	// admin.listen or TIGRIS_ADMIN can start it. Without it the binary carries
	// no net/http for tigris.
	AdminLink bool

	// Runtime is what the instrumented binary starts with. It has passed
	// settings.Runtime.Validate, its rule patterns parse in Env, and its criteria
	// parse as TigrisDSL. Runtime.Pointcuts mirrors Named.
	Runtime settings.Runtime
}

// Default returns the configuration used when there is no tigris.yaml: nothing is
// instrumented and the run-time settings are settings.Default().
func Default() *Config {
	env, err := pointcut.NewEnv(nil)
	if err != nil {
		panic("config: empty pointcut environment: " + err.Error()) // a bug in pointcut
	}
	return &Config{Env: env, Runtime: settings.Default(), Inlinable: InlinableSkip, Panics: PanicsOwnDefers, Small: SmallSkip}
}

// Load reads and parses the file at path. Errors about the content are an
// ErrorList; a file that cannot be read gives the *fs.PathError.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("%s: larger than %d bytes, the most a tigris.yaml may hold (parsing one of that size takes seconds, and go build -toolexec parses it in every compile)", path, MaxSize)
	}
	return Parse(path, data)
}

// MaxSize is the largest tigris.yaml Load reads: 1 MiB. tigris go parses the
// config once per build, but go build -toolexec parses it in every compile
// and link (a 1 MiB file of pointcuts takes seconds); far below this size it
// already says everything a config can say.
const MaxSize = 1 << 20

// Find returns the path of the tigris.yaml in dir or in the nearest parent
// directory, stopping at the file system root. When there is none the error is a
// *NotFoundError, for which errors.Is(err, fs.ErrNotExist) holds.
func Find(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("finding %s: %w", FileName, err)
	}
	for d := abs; ; {
		p := filepath.Join(d, FileName)
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.Mode().IsRegular():
			return p, nil
		case err == nil:
			return "", fmt.Errorf("finding %s: %s is not a regular file", FileName, p)
		case !errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("finding %s: %w", FileName, err)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", &NotFoundError{Dir: abs}
		}
		d = parent
	}
}

// NotFoundError is Find's error when no directory from Dir up holds a tigris.yaml.
type NotFoundError struct{ Dir string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no %s in %s or any parent directory (tigris init writes one)", FileName, e.Dir)
}

// Is makes errors.Is(err, fs.ErrNotExist) true.
func (e *NotFoundError) Is(target error) bool { return target == fs.ErrNotExist }

// BuildHash returns a SHA-256 digest of what in c changes compiler output: the
// named pointcuts, the include and exclude lists, Std, Inlinable, Panics and
// AdminLink. The run-time settings
// do not take part: they are linked into the binary (see rewriter), so changing
// them relinks and recompiles nothing. Like Hash it is computed from parsed
// values.
func (c *Config) BuildHash() []byte {
	b, err := json.Marshal(struct {
		Schema           string
		Named            []pointcut.Named
		Include, Exclude []string
		Std              bool
		Inlinable        string
		Panics           string
		Small            string
		Floor            bool
		AdminLink        bool
	}{"tigris.yaml/build/3", c.Named, c.Include, c.Exclude, c.Std, c.Inlinable, c.Panics, c.Small, c.Floor, c.AdminLink})
	if err != nil {
		panic(err) // only strings, slices of them and a bool: cannot fail
	}
	sum := sha256.Sum256(b)
	return sum[:]
}

// Hash returns a SHA-256 digest of everything in c that changes the binary: the
// pointcuts, include and exclude lists, Std and the run-time settings.
// It is computed from parsed values, so comments, key order, quoting and layout do
// not change it; any change of a value does. Path does not take part.
func (c *Config) Hash() []byte {
	b, err := json.Marshal(struct {
		Schema           string
		Named            []pointcut.Named
		Include, Exclude []string
		Std              bool
		Inlinable        string
		Panics           string
		Small            string
		Floor            bool
		AdminLink        bool
		Runtime          settings.Runtime
	}{"tigris.yaml/3", c.Named, c.Include, c.Exclude, c.Std, c.Inlinable, c.Panics, c.Small, c.Floor, c.AdminLink, c.Runtime})
	if err != nil {
		// Only a NaN in a float field gets here; it still needs a stable digest.
		b = fmt.Appendf(nil, "%#v", c.Runtime)
	}
	sum := sha256.Sum256(b)
	return sum[:]
}
