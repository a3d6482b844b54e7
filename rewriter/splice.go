package rewriter

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// edit replaces src[off:off+del] with text. Edits never insert a line break, so
// every original line keeps its number and the file needs no //line bookkeeping
// beyond one directive naming the original file.
type edit struct {
	off  int
	del  int
	text string
}

// applyEdits returns src with edits applied; edits at the same offset keep their
// order of addition.
func applyEdits(src []byte, edits []edit) []byte {
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].off < edits[j].off })
	var out bytes.Buffer
	out.Grow(len(src) + 64*len(edits))
	last := 0
	for _, e := range edits {
		out.Write(src[last:e.off])
		out.WriteString(e.text)
		last = e.off + e.del
	}
	out.Write(src[last:])
	return out.Bytes()
}

// writeRewritten writes a rewritten copy of the file at orig into dir. The copy
// starts with a //line directive so positions (panics, runtime.Caller, coverage,
// debuggers) name the original file; the edits keep line numbers.
func writeRewritten(dir, orig string, src []byte) (string, error) {
	abs, err := filepath.Abs(orig)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "//line %s:1\n", abs)
	buf.Write(src)
	out := filepath.Join(dir, filepath.Base(orig))
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return "", err
	}
	return out, nil
}
