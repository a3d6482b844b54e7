package traceconv

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// Format is one output format of a conversion. The formats are the values
// below, listed in Formats; a caller picks one and calls its Convert.
type Format struct {
	Name        string // as `tigris convert --to` takes it
	Description string // one line
	// Ext is appended to the input's name, without its .tgr extension, to make
	// the default output name (DefaultOutput).
	Ext string
	// Dir says the output is a directory: Convert's stream is the file MainFile
	// in it, and Extra maps the names of fixed files written beside it to their
	// content. Kieker's monitoring logs are such directories.
	Dir      bool
	MainFile string
	Extra    map[string]string
	// Convert reads r to its end and writes the converted stream to w. It returns
	// an error only when writing fails; what could not be read is in the Report.
	// It does not close r.
	Convert func(w io.Writer, r *writer.Reader, opt Options) (Report, error)
}

var (
	// OpenXTrace writes OPEN.xtrace-shaped JSON: an array of traces, each a call
	// tree of MethodInvocations with responseTime and exclusiveTime.
	OpenXTrace = &Format{
		Name:        "openxtrace",
		Description: "OPEN.xtrace-shaped JSON: traces of MethodInvocations with response and exclusive times",
		Ext:         ".xtrace.json",
		Convert:     writeOpenXTrace,
	}
	// Chrome writes the Chrome trace-event JSON that Perfetto and chrome://tracing open.
	Chrome = &Format{
		Name:        "chrome",
		Description: "Chrome trace-event JSON for Perfetto (ui.perfetto.dev) and chrome://tracing",
		Ext:         ".chrome.json",
		Convert:     writeChrome,
	}
	// Pprof writes a gzip-compressed pprof profile (see Profile).
	Pprof = &Format{
		Name:        "pprof",
		Description: "pprof profile (go tool pprof): calls, inclusive and exclusive time per call path",
		Ext:         ".pb.gz",
		Convert:     writeProfile,
	}
	// Kieker writes a Kieker monitoring log: kieker.map and a .dat file of
	// OperationExecutionRecords.
	Kieker = &Format{
		Name:        "kieker",
		Description: "Kieker ASCII monitoring log (kieker.map + .dat of OperationExecutionRecords)",
		Ext:         "-kieker",
		Dir:         true,
		MainFile:    "kieker-tigris.dat",
		Extra:       map[string]string{"kieker.map": KiekerMap},
		Convert:     writeKieker,
	}
)

// Formats lists every format, in the order help texts show them.
var Formats = []*Format{OpenXTrace, Chrome, Pprof, Kieker}

// FormatNames returns the names of Formats.
func FormatNames() []string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = f.Name
	}
	return names
}

// FormatByName returns the format called name (case-insensitive).
func FormatByName(name string) (*Format, error) {
	for _, f := range Formats {
		if strings.EqualFold(f.Name, name) {
			return f, nil
		}
	}
	return nil, fmt.Errorf("unknown format %q (want one of %s)", name, strings.Join(FormatNames(), ", "))
}

// DefaultOutput is the output name for input: the same directory and name, its
// .tgr extension replaced by f.Ext ("tigris-out/app-42.tgr" → "tigris-out/app-42.pb.gz").
func (f *Format) DefaultOutput(input string) string {
	return strings.TrimSuffix(input, filepath.Ext(input)) + f.Ext
}
