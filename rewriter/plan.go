package rewriter

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tigrisgo/tigris/config"
	"github.com/tigrisgo/tigris/runtime/pointcut"
)

// A Plan is what `tigris go` decided before it ran the go command (package
// driver), handed to every `tigris toolexec --plan=FILE` of that build.
//
// With a plan the proxy leaves the build's identity to the go command: it
// answers compile -V=full with the compiler's own line, so every package
// tigris does not touch has the cache key of a plain build and shares its
// objects, and it instruments exactly the packages whose -gcflags carry
// DigestFlag, which the driver computed from the config and each package's
// syntax (Restrict): that flag is part of the package's compile key, so a
// package is recompiled when, and only when, what tigris can select in it
// changes. The flag is removed before the compiler runs.
type Plan struct {
	// Config is the absolute path of tigris.yaml, for messages. The build
	// never reads it again: the plan holds what the compiles and links need
	// of it, as it was when the plan was made, so a big config is parsed once
	// per build and an edit during a build takes effect in the next one.
	Config string
	// Std, Inlinable, Panics, Small, Floor and AdminLink are the config's
	// monitor.std, monitor.inlinable, monitor.panics, monitor.small,
	// monitor.floor and admin.link; Settings is the run-time settings text
	// links embed. Each instrumented package's pointcut restriction is in the
	// selection file named by its digest (WriteSelection).
	Std       bool
	Inlinable string
	Panics    string
	Small     string
	Floor     bool
	AdminLink bool
	Settings  string
	// Dir, GoExe, Subcommand, Flags and Packages describe the go command as
	// the user wrote it (the flags to replay in a nested go list, without
	// what the driver added).
	Dir        string
	GoExe      string
	Subcommand string
	Flags      []string
	Packages   []string
	// LinkID is appended to link -V=full: it covers the run-time settings the
	// link embeds, the tigris binary and the runtime sources.
	LinkID string
}

// DigestFlag is the compiler flag the driver adds to an instrumented
// package's -gcflags: "-tigris=<digest>".
const DigestFlag = "tigris"

// planVersion names the plan file's layout.
const planVersion = "tigris-plan-2"

// WritePlan stores p in tigris's cache directory under a name made of its
// content and returns the file's path. Plans are small and content-addressed,
// so a build never sees another build's plan and nothing needs cleaning up
// while builds run; files older than a week are removed on the way.
func WritePlan(p *Plan) (string, error) {
	data, err := json.Marshal(struct {
		Version string
		*Plan
	}{planVersion, p})
	if err != nil {
		return "", err
	}
	dir := tigrisCacheDir()
	if dir == "" {
		return "", errors.New("no user cache directory for the build plan (set XDG_CACHE_HOME or HOME)")
	}
	dir = filepath.Join(dir, "plans")
	sum := sha256.Sum256(data)
	name := filepath.Join(dir, hex.EncodeToString(sum[:16])+".json")
	if reuse(name) {
		return name, nil
	}
	pruneOld(dir, weekOld)
	return name, writeFileAtomic(name, data)
}

// reuse reports whether the content-named file exists, and if so marks it
// as used now, so that no build prunes it while this one needs it.
func reuse(name string) bool {
	now := time.Now()
	return os.Chtimes(name, now, now) == nil
}

// WriteSelection stores a package's pointcut restriction under its digest
// (Session.PackageDigest) next to the plans, for the package's compile
// (PlannedSession). The digest covers the text, so an existing file holds it
// already.
func WriteSelection(digest, selection string) error {
	name, err := selectionFile(digest)
	if err != nil || reuse(name) {
		return err
	}
	return writeFileAtomic(name, []byte(selection))
}

func selectionFile(digest string) (string, error) {
	dir := tigrisCacheDir()
	if dir == "" {
		return "", errors.New("no user cache directory for the build plan (set XDG_CACHE_HOME or HOME)")
	}
	if digest == "" || strings.ContainsAny(digest, `/\.`) {
		return "", fmt.Errorf("%q is not a package digest", digest)
	}
	return filepath.Join(dir, "plans", digest+".sel"), nil
}

// PlannedSession is the session of one compile or link of a planned build:
// the plan's part of the config and, for the compile of an instrumented
// package (digest ≠ ""), its selection. Nothing parses tigris.yaml.
func PlannedSession(plan *Plan, digest string) (*Session, error) {
	sel := ""
	if digest != "" {
		name, err := selectionFile(digest)
		if err != nil {
			return nil, err
		}
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("reading the package's selection: %w (was it removed during the build?)", err)
		}
		sel = string(data)
	}
	instrument, err := pointcut.ParseGraph(sel)
	if err != nil {
		return nil, fmt.Errorf("the package's selection (digest %s): %w", digest, err)
	}
	cfg := &config.Config{Path: plan.Config, Instrument: instrument, Std: plan.Std, Inlinable: plan.Inlinable, Panics: plan.Panics, Small: plan.Small, Floor: plan.Floor, AdminLink: plan.AdminLink}
	return &Session{cfg: cfg, settingsText: plan.Settings}, nil
}

// ReadPlan reads a plan written by WritePlan.
func ReadPlan(name string) (*Plan, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("reading the build plan: %w (was it removed during the build?)", err)
	}
	var v struct {
		Version string
		Plan
	}
	if err := json.Unmarshal(data, &v); err != nil || v.Version != planVersion {
		return nil, fmt.Errorf("build plan %s: not a plan of this tigris", name)
	}
	return &v.Plan, nil
}

// weekOld is how old a plan file gets before WritePlan removes it.
const weekOld = 7 * 24 * time.Hour

// pruneOld removes the files in dir last modified more than age ago; errors
// are ignored (another build may be pruning too).
func pruneOld(dir string, age time.Duration) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > age {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// invocationOf describes the go command of a plan, which gave the tool the
// environment env.
func invocationOf(p *Plan, env environ) *goInvocation {
	inv := &goInvocation{
		env:        env,
		goExe:      p.GoExe,
		dir:        p.Dir,
		subcommand: p.Subcommand,
		flags:      p.Flags,
		packages:   p.Packages,
		source:     "the build plan",
	}
	for _, pkg := range p.Packages {
		inv.versioned = inv.versioned || strings.Contains(pkg, "@")
	}
	return inv
}
