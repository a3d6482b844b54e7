package rewriter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// importConfig is an -importcfg file as the go command wrote it, plus the lines
// the proxy adds. The original text is kept byte for byte; additions are appended,
// so a line the go command wrote is never replaced or reordered.
type importConfig struct {
	orig         []byte
	packageFile  map[string]string // packagefile path=file
	packageShlib map[string]string // packageshlib path=file (-linkshared)
	importMap    map[string]string // importmap source=actual
	added        []string          // paths added, in order
}

// readImportConfig reads and parses an importcfg file.
func readImportConfig(name string) (*importConfig, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	c, err := parseImportConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

// parseImportConfig parses the line-based format of cmd/go's importcfg:
// "# comment", "importmap old=new", "packagefile path=file",
// "packageshlib path=file", "modinfo ...". Unknown verbs are kept and ignored, like
// the compiler and linker do with lines they do not need.
func parseImportConfig(data []byte) (*importConfig, error) {
	c := &importConfig{orig: data, packageFile: map[string]string{}, packageShlib: map[string]string{}, importMap: map[string]string{}}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		verb, args, _ := strings.Cut(line, " ")
		switch verb {
		case "packagefile", "packageshlib", "importmap":
			before, after, ok := strings.Cut(strings.TrimSpace(args), "=")
			if !ok || before == "" || after == "" {
				return nil, fmt.Errorf("line %d: invalid %s: %q", i+1, verb, line)
			}
			switch verb {
			case "packagefile":
				c.packageFile[before] = after
			case "packageshlib":
				c.packageShlib[before] = after
			default:
				c.importMap[before] = after
			}
		}
	}
	return c, nil
}

// has reports whether path can be imported with this config: it has a
// packagefile (or packageshlib) line, or an importmap line maps it to one.
func (c *importConfig) has(path string) bool {
	if actual, ok := c.importMap[path]; ok {
		path = actual
	}
	if _, ok := c.packageFile[path]; ok {
		return true
	}
	_, ok := c.packageShlib[path]
	return ok
}

// add appends "packagefile path=file" unless path is already importable; it
// reports whether it added the line.
func (c *importConfig) add(path, file string) bool {
	if path == "" || file == "" || c.has(path) {
		return false
	}
	c.packageFile[path] = file
	c.added = append(c.added, path)
	return true
}

// addAll adds every package of pkgs that is missing, in path order, and returns
// how many lines it added.
func (c *importConfig) addAll(pkgs map[string]string) int {
	paths := make([]string, 0, len(pkgs))
	for p := range pkgs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	n := 0
	for _, p := range paths {
		if c.add(p, pkgs[p]) {
			n++
		}
	}
	return n
}

// resolved returns the import path → export file map the instrumenter sees
// (CompileJob.ImportCfg): every packagefile line, plus every importmap source
// path mapped to its target's file.
func (c *importConfig) resolved() map[string]string {
	m := make(map[string]string, len(c.packageFile)+len(c.importMap))
	for p, f := range c.packageFile {
		m[p] = f
	}
	for src, actual := range c.importMap {
		if f, ok := c.packageFile[actual]; ok {
			m[src] = f
		}
	}
	return m
}

// bytes returns the original text followed by one line per added package.
func (c *importConfig) bytes() []byte {
	var b bytes.Buffer
	b.Write(c.orig)
	if len(c.added) > 0 && len(c.orig) > 0 && c.orig[len(c.orig)-1] != '\n' {
		b.WriteByte('\n')
	}
	if len(c.added) > 0 {
		b.WriteString("# added by tigris\n")
	}
	for _, p := range c.added {
		fmt.Fprintf(&b, "packagefile %s=%s\n", p, c.packageFile[p])
	}
	return b.Bytes()
}

// writeFileAtomic writes data to name through a temporary file in the same
// directory and a rename, so no reader ever sees a partial file.
func writeFileAtomic(name string, data []byte) error {
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(name)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, name)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", name, werr)
	}
	return nil
}

// errObjectFormat reports an archive or object layout the proxy does not know
// (a newer toolchain); callers fall back to searching the file's bytes.
var errObjectFormat = errors.New("unknown archive or object format")

// goObjectMagic starts the binary part of a Go object file (cmd/internal/goobj).
const goObjectMagic = "\x00go120ld"

// archiveImports returns the import paths listed in the Autolib block of each Go
// object file in the archive at name: the packages the linker loads because of
// it. It reads a few hundred bytes per archive (member headers, the object
// header and the strings it points at), never the whole file. It returns
// errObjectFormat for a layout it does not recognize.
func archiveImports(name string) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var magic [8]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil || string(magic[:]) != "!<arch>\n" {
		return nil, errObjectFormat
	}
	var imports []string
	off := int64(8)
	for member := 0; member < 1000; member++ {
		var hdr [60]byte
		if _, err := f.ReadAt(hdr[:], off); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		if string(hdr[58:60]) != "`\n" {
			return nil, errObjectFormat
		}
		size, err := strconv.ParseInt(strings.TrimSpace(string(hdr[48:58])), 10, 64)
		if err != nil || size < 0 {
			return nil, errObjectFormat
		}
		data := off + 60
		if strings.TrimSpace(string(hdr[:16])) != "__.PKGDEF" {
			imps, err := objectImports(f, data, size)
			if err != nil {
				return nil, err
			}
			imports = append(imports, imps...)
		}
		off = data + size + size&1
	}
	return imports, nil
}

// objectImports reads the Autolib block of the archive member at [data,
// data+size) when it is a Go object file; other members (C objects) yield nil.
func objectImports(f *os.File, data, size int64) ([]string, error) {
	peek := make([]byte, min(size, 4096))
	if _, err := f.ReadAt(peek, data); err != nil && err != io.EOF {
		return nil, err
	}
	if !bytes.HasPrefix(peek, []byte("go object ")) {
		return nil, nil
	}
	i := bytes.Index(peek, []byte("\n!\n"))
	if i < 0 {
		return nil, errObjectFormat
	}
	obj := data + int64(i) + 3
	var h [28]byte // magic, fingerprint, flags, Offsets[BlkAutolib], Offsets[BlkPkgIdx]
	if _, err := f.ReadAt(h[:], obj); err != nil {
		return nil, errObjectFormat
	}
	if string(h[:8]) != goObjectMagic {
		return nil, errObjectFormat
	}
	start, end := binary.LittleEndian.Uint32(h[20:]), binary.LittleEndian.Uint32(h[24:])
	if end < start || (end-start)%16 != 0 || int64(end) > size {
		return nil, errObjectFormat
	}
	block := make([]byte, end-start)
	if _, err := f.ReadAt(block, obj+int64(start)); err != nil {
		return nil, errObjectFormat
	}
	imports := make([]string, 0, len(block)/16)
	for b := block; len(b) >= 16; b = b[16:] { // {len, off uint32; fingerprint [8]byte}
		n, at := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])
		if n > 4096 || int64(at)+int64(n) > size {
			return nil, errObjectFormat
		}
		s := make([]byte, n)
		if _, err := f.ReadAt(s, obj+int64(at)); err != nil {
			return nil, errObjectFormat
		}
		imports = append(imports, string(s))
	}
	return imports, nil
}

// fileMentions reports whether any of needles occurs in the file: the slow,
// format-independent fallback of archiveImports.
func fileMentions(name string, needles []string) (bool, error) {
	f, err := os.Open(name)
	if err != nil {
		return false, err
	}
	defer f.Close()
	keep := 0
	for _, n := range needles {
		keep = max(keep, len(n))
	}
	buf := make([]byte, 0, 1<<20+keep)
	chunk := make([]byte, 1<<20)
	for {
		n, err := f.Read(chunk)
		buf = append(buf, chunk[:n]...)
		for _, needle := range needles {
			if bytes.Contains(buf, []byte(needle)) {
				return true, nil
			}
		}
		if err == io.EOF {
			return false, nil
		} else if err != nil {
			return false, err
		}
		if len(buf) > keep {
			buf = append(buf[:0], buf[len(buf)-keep:]...)
		}
	}
}
