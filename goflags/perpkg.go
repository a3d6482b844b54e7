package goflags

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Package is what PerPackage needs to know about a package: what `go list`
// reports as ImportPath, Dir and Standard, and whether the package was named
// on the command line (not DepOnly).
type Package struct {
	ImportPath string
	Dir        string
	Standard   bool
	Cmdline    bool
}

// PerPackage is the value of a per-package flag (-gcflags, -asmflags,
// -ldflags, -gccgoflags) given any number of times: each value is
// [pattern=]flags, and a package gets the flags of the last value whose
// pattern matches it (no pattern: the command-line packages).
type PerPackage struct {
	values []ppValue
}

type ppValue struct {
	match func(Package) bool
	flags []string
}

// Set adds one value of the flag, as the go command would see it; cwd is the
// go command's working directory (relative patterns are resolved against it).
func (f *PerPackage) Set(v, cwd string) error {
	match := func(p Package) bool { return p.Cmdline }
	v = strings.TrimSpace(v)
	if v == "" {
		// -gcflags="" means no flags for the command-line packages.
		f.values = append(f.values, ppValue{match, []string{}})
		return nil
	}
	if !strings.HasPrefix(v, "-") {
		i := strings.Index(v, "=")
		if i <= 0 {
			return fmt.Errorf("%q: missing <pattern>=<flags>", v)
		}
		if v[0] == '\'' || v[0] == '"' {
			return fmt.Errorf("%q: parameter may not start with a quote character", v)
		}
		match = matchPackage(strings.TrimSpace(v[:i]), cwd)
		v = v[i+1:]
	}
	flags, err := Split(v)
	if err != nil {
		return fmt.Errorf("%q: %v", v, err)
	}
	if flags == nil {
		flags = []string{}
	}
	f.values = append(f.values, ppValue{match, flags})
	return nil
}

// For returns the flags p gets, nil when no value matches it.
func (f *PerPackage) For(p Package) []string {
	var flags []string
	for _, v := range f.values {
		if v.match(p) {
			flags = v.flags
		}
	}
	return flags
}

// Present reports whether any value was set.
func (f *PerPackage) Present() bool { return len(f.values) > 0 }

// matchPackage is cmd/go's load.MatchPackage: a relative pattern ("./...",
// "../x") matches directories below cwd, "all" every package, "std" the
// standard library, "cmd" the commands of the Go distribution, anything else
// import paths (with "..." wildcards).
func matchPackage(pattern, cwd string) func(Package) bool {
	switch {
	case isRelativePath(pattern):
		var dir string
		i := strings.Index(pattern, "...")
		if i < 0 {
			dir, pattern = pattern, ""
		} else {
			j := strings.LastIndex(pattern[:i], "/")
			dir, pattern = pattern[:j], pattern[j+1:]
		}
		dir = filepath.Join(cwd, dir)
		if pattern == "" {
			return func(p Package) bool { return p.Dir == dir }
		}
		match := matchPattern(pattern)
		return func(p Package) bool {
			rel, err := filepath.Rel(dir, p.Dir)
			if err != nil {
				return false
			}
			rel = filepath.ToSlash(rel)
			if rel == ".." || strings.HasPrefix(rel, "../") {
				return false
			}
			return match(rel)
		}
	case pattern == "all":
		return func(Package) bool { return true }
	case pattern == "std":
		return func(p Package) bool { return p.Standard }
	case pattern == "cmd":
		return func(p Package) bool { return p.Standard && strings.HasPrefix(p.ImportPath, "cmd/") }
	}
	match := matchPattern(pattern)
	return func(p Package) bool { return match(p.ImportPath) }
}

func isRelativePath(pattern string) bool {
	return strings.HasPrefix(pattern, "./") || strings.HasPrefix(pattern, "../") || pattern == "." || pattern == ".."
}

// matchPattern is cmd/go's pkgpattern.MatchPattern: "..." matches any run of
// characters, a trailing "/..." also matches the path without it ("net/..."
// matches "net"), and a wildcard never matches a "vendor" path element that
// the pattern does not spell out (an element named vendor that is not the
// last one is turned into a character the wildcard excludes, on both sides).
func matchPattern(pattern string) func(string) bool {
	const mark = "\x00"
	if strings.Contains(pattern, mark) || !utf8.ValidString(pattern) {
		return func(string) bool { return false }
	}
	re := markVendor(regexp.QuoteMeta(pattern), mark)
	switch {
	case strings.HasSuffix(re, `/`+mark+`/\.\.\.`):
		re = strings.TrimSuffix(re, `/`+mark+`/\.\.\.`) + `(/vendor|/` + mark + `/\.\.\.)`
	case re == mark+`/\.\.\.`:
		re = `(/vendor|/` + mark + `/\.\.\.)`
	}
	if strings.HasSuffix(re, `/\.\.\.`) {
		re = strings.TrimSuffix(re, `/\.\.\.`) + `(/\.\.\.)?`
	}
	re = strings.ReplaceAll(re, `\.\.\.`, `[^`+mark+`]*`)
	reg := regexp.MustCompile(`^` + re + `$`)
	return func(name string) bool {
		if strings.Contains(name, mark) {
			return false
		}
		return reg.MatchString(markVendor(name, mark))
	}
}

// markVendor replaces every "vendor" element of a path but the last with mark.
func markVendor(path, mark string) string {
	if !strings.Contains(path, "vendor") {
		return path
	}
	elems := strings.Split(path, "/")
	for i := 0; i < len(elems)-1; i++ {
		if elems[i] == "vendor" {
			elems[i] = mark
		}
	}
	return strings.Join(elems, "/")
}
