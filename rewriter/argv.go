package rewriter

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The command lines the go command hands to the compiler and the linker,
// read and rewritten (doc.go: unknown flags are kept as they are).

// compileValueFlags are the compiler flags that accept their value as the next
// argument ("-p path"). A flag missing here is treated as boolean, which is only
// wrong when it is written in two arguments and its value ends in .go right before
// the file list.
var compileValueFlags = setOf(
	"D", "I", "asmhdr", "bench", "blockprofile", "buildid", "c", "coveragecfg",
	"cpuprofile", "d", "embedcfg", "env", "gendwarfinl", "goversion", "importcfg",
	"installsuffix", "json", "lang", "linkobj", "memprofile", "memprofilerate",
	"mutexprofile", "o", "p", "pgoprofile", "spectre", "symabis", "traceprofile",
	"trimpath",
)

// linkValueFlags are the linker flags that accept their value as the next argument.
var linkValueFlags = setOf(
	"B", "D", "E", "H", "I", "L", "R", "T", "X", "benchmark", "benchmarkprofile",
	"buildid", "buildmode", "capturehostobjs", "cpuprofile", "extar", "extld",
	"extldflags", "fipso", "funcalign", "importcfg", "installsuffix", "k", "libgcc",
	"linkmode", "memprofile", "memprofilerate", "o", "pluginpath", "r", "randlayout",
	"strictdups", "tmpdir", "debugtextsize", "debugtramp",
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// toolFlag is one flag occurrence in a tool's argv.
type toolFlag struct {
	value  string
	index  int  // index of the argument holding the value ("-p=x" or the "x" after "-p")
	inline bool // value written as -name=value
}

// toolArgs is a tool's argv (without the tool path) after response-file expansion,
// split into flags and trailing operands.
type toolArgs struct {
	// args is the expanded argument list.
	args []string
	// respFile reports that the go command passed (some of) args in @response files.
	respFile bool
	// flags holds the last occurrence of each flag, by name without dashes.
	flags map[string]toolFlag
	// operands is the index in args where the trailing operands start: the .go
	// files for compile, the main archive for link. len(args) when there are none.
	operands int
}

// parseToolArgs expands response files and indexes flags. valueFlags names the
// tool's flags that may take their value from the next argument; goFiles selects
// the compile rule for operands (the maximal run of trailing arguments ending in
// .go) over the flag-parser rule (everything after the first non-flag argument).
func parseToolArgs(args []string, valueFlags map[string]bool, goFiles bool) (*toolArgs, error) {
	expanded, resp, err := expandResponseFiles(args, 0)
	if err != nil {
		return nil, err
	}
	t := &toolArgs{args: expanded, respFile: resp, flags: map[string]toolFlag{}, operands: len(expanded)}
	if goFiles {
		for t.operands > 0 && strings.HasSuffix(expanded[t.operands-1], ".go") && !strings.HasPrefix(expanded[t.operands-1], "-") {
			t.operands--
		}
	}
	for i := 0; i < t.operands; i++ {
		a := expanded[i]
		if a == "--" {
			if !goFiles {
				t.operands = i + 1
			}
			break
		}
		if len(a) < 2 || a[0] != '-' {
			if !goFiles {
				t.operands = i
				break
			}
			continue
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if eq := strings.IndexByte(name, '='); eq >= 0 {
			t.flags[name[:eq]] = toolFlag{value: name[eq+1:], index: i, inline: true}
			continue
		}
		if valueFlags[name] && i+1 < t.operands {
			i++
			t.flags[name] = toolFlag{value: expanded[i], index: i}
			continue
		}
		t.flags[name] = toolFlag{value: "true", index: i}
	}
	return t, nil
}

// value returns the value of a flag that takes one, "" when absent.
func (t *toolArgs) value(name string) string { return t.flags[name].value }

// bool reports whether a boolean flag is set (-name, -name=true, -name=1).
func (t *toolArgs) bool(name string) bool {
	f, ok := t.flags[name]
	if !ok {
		return false
	}
	switch f.value {
	case "true", "1", "t", "T", "TRUE", "True":
		return true
	}
	return false
}

// operandList returns the trailing operands.
func (t *toolArgs) operandList() []string { return t.args[t.operands:] }

// argEdit describes how to rewrite a tool's argv.
type argEdit struct {
	// set replaces the value of existing flags (name → new value).
	set map[string]string
	// drop removes boolean flags (every occurrence, any spelling).
	drop []string
	// flags are added after the existing flags, so they win over earlier
	// occurrences (the linker keeps the last -X for a symbol).
	flags []string
	// operands, when non-nil, replaces the trailing operands.
	operands []string
}

// rewrite returns a new argv with the edit applied. Flags that are not named in
// the edit keep their exact spelling and position.
func (t *toolArgs) rewrite(e argEdit) []string {
	out := make([]string, 0, len(t.args)+len(e.operands))
	dropped := func(a string) bool {
		if len(a) < 2 || a[0] != '-' {
			return false
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if eq := strings.IndexByte(name, '='); eq >= 0 {
			name = name[:eq]
		}
		for _, d := range e.drop {
			if name == d {
				return true
			}
		}
		return false
	}
	replace := map[int]string{}
	for name, v := range e.set {
		f, ok := t.flags[name]
		if !ok {
			continue
		}
		if f.inline {
			replace[f.index] = t.args[f.index][:strings.IndexByte(t.args[f.index], '=')+1] + v
		} else {
			replace[f.index] = v
		}
	}
	for i, a := range t.args[:t.operands] {
		if r, ok := replace[i]; ok {
			out = append(out, r)
			continue
		}
		if dropped(a) {
			continue
		}
		out = append(out, a)
	}
	if n := len(out); n > 0 && out[n-1] == "--" {
		out = append(append(out[:n-1], e.flags...), "--") // flags before the end of flags
	} else {
		out = append(out, e.flags...)
	}
	if e.operands != nil {
		return append(out, e.operands...)
	}
	return append(out, t.args[t.operands:]...)
}

// commandLine returns the argv to hand to the tool: args as they are, or, when
// the go command used a response file, a single "@file" naming a new response
// file written in dir.
func (t *toolArgs) commandLine(args []string, dir string) ([]string, error) {
	if !t.respFile {
		return args, nil
	}
	var b strings.Builder
	for _, a := range args {
		b.WriteString(encodeResponseArg(a))
		b.WriteByte('\n')
	}
	name := filepath.Join(dir, "args.rsp")
	if err := writeFileAtomic(name, []byte(b.String())); err != nil {
		return nil, err
	}
	return []string{"@" + name}, nil
}

// expandResponseFiles replaces every "@file" argument by the arguments listed in
// file, one per line, encoded as cmd/go writes them (see objabi.DecodeArg).
func expandResponseFiles(in []string, depth int) (out []string, used bool, err error) {
	if depth > 10 {
		return nil, false, fmt.Errorf("response files nested too deep")
	}
	for i, s := range in {
		if !strings.HasPrefix(s, "@") {
			if out != nil {
				out = append(out, s)
			}
			continue
		}
		if out == nil {
			out = append(make([]string, 0, 2*len(in)), in[:i]...)
		}
		data, err := os.ReadFile(s[1:])
		if err != nil {
			return nil, false, fmt.Errorf("reading response file: %w", err)
		}
		text := strings.TrimSpace(strings.ReplaceAll(string(data), "\r", ""))
		var args []string
		if text != "" {
			args = strings.Split(text, "\n")
		}
		for j, a := range args {
			if args[j], err = decodeResponseArg(a); err != nil {
				return nil, false, fmt.Errorf("response file %s: %w", s[1:], err)
			}
		}
		nested, _, err := expandResponseFiles(args, depth+1)
		if err != nil {
			return nil, false, err
		}
		out = append(out, nested...)
	}
	if out == nil {
		return in, false, nil
	}
	return out, true, nil
}

// encodeResponseArg escapes backslashes and newlines the way cmd/go does.
func encodeResponseArg(a string) string {
	if !strings.ContainsAny(a, "\\\n") {
		return a
	}
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(a)
}

func decodeResponseArg(a string) (string, error) {
	if !strings.ContainsRune(a, '\\') {
		return a, nil
	}
	var b strings.Builder
	for i := 0; i < len(a); i++ {
		if a[i] != '\\' {
			b.WriteByte(a[i])
			continue
		}
		i++
		if i == len(a) {
			return "", fmt.Errorf("argument %q ends in a backslash", a)
		}
		switch a[i] {
		case '\\':
			b.WriteByte('\\')
		case 'n':
			b.WriteByte('\n')
		default:
			return "", fmt.Errorf("argument %q has an unknown escape \\%c", a, a[i])
		}
	}
	return b.String(), nil
}

// testVariant returns the test binary a compile belongs to, from its
// TOOLEXEC_IMPORTPATH value and its files: "p [p.test]" and "p_test [p.test]" →
// "p.test"; the generated test main ("p.test", compiled as package main from
// _testmain.go) → "p.test"; a plain package, or a per-main-package variant such as
// "p [example.com/cmd/app]" (PGO builds) → "".
func testVariant(toolexecImportPath string, files []string) string {
	s := toolexecImportPath
	if i := strings.Index(s, " ["); i >= 0 && strings.HasSuffix(s, "]") {
		if v := s[i+2 : len(s)-1]; strings.HasSuffix(v, ".test") {
			return v
		}
		return ""
	}
	if !strings.HasSuffix(s, ".test") {
		return ""
	}
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "_testmain") {
			return s
		}
	}
	return ""
}
