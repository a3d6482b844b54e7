package traceconv

import (
	"errors"
	"fmt"
	"os"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// Open opens trace files as one Reader. One path is read together with the files
// rotation made from it (writer.Open); several are read as given
// (writer.OpenFiles orders each stream's files by sequence number, so a shell
// glob's order does not matter). A path that cannot be opened is left out and
// reported in skipped; err is set only when no path is left. The caller closes r.
func Open(paths []string) (r *writer.Reader, skipped []error, err error) {
	var ok []string
	for _, p := range paths {
		if err := readable(p); err != nil {
			skipped = append(skipped, err)
			continue
		}
		ok = append(ok, p)
	}
	switch len(ok) {
	case 0:
		if len(skipped) == 0 {
			return nil, nil, errors.New("no trace file given")
		}
		return nil, skipped, errors.Join(skipped...)
	case 1:
		r, err = writer.Open(ok[0])
	default:
		r, err = writer.OpenFiles(ok...)
	}
	if err != nil {
		return nil, skipped, err
	}
	return r, skipped, nil
}

// readable checks that path is a file this process can open.
func readable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err // *PathError names the file
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s: is a directory, not a trace file", path)
	}
	return nil
}
