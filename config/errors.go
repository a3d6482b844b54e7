package config

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2"
	"go.yaml.in/yaml/v3"
)

// Error is one problem in a config file. Its text is one line:
//
//	tigris.yaml:7:9: monitor.mode: "fast" is not a mode (want off, coarse or fine)
type Error struct {
	// File is the file name as given to Parse or Load.
	File string
	// Line and Col are 1-based; Col counts characters (runes) like YAML does. Col is
	// 0 when unknown (some YAML syntax errors) and then left out of the text, as
	// go/token.Position does; Line is 0 only when the YAML parser gave no clue.
	Line, Col int
	// Key is the dotted path of the setting, e.g. "monitor.rules[2]"; empty for
	// errors that are not about one setting (YAML syntax).
	Key string
	// Msg says what is wrong and what is allowed.
	Msg string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
		if e.Col > 0 {
			b.WriteString(":" + strconv.Itoa(e.Col))
		}
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList is the error Parse and Load return for a file with problems: every
// problem found, sorted by position. Like go/scanner.ErrorList its Error text is the
// first problem plus a count, one line; print the elements to show them all.
type ErrorList []*Error

func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	case 2:
		return l[0].Error() + " (and 1 more error)"
	}
	return fmt.Sprintf("%s (and %d more errors)", l[0], len(l)-1)
}

func (l ErrorList) sort() {
	slices.SortStableFunc(l, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
}

// source is a config file's text with what is needed to turn YAML node positions
// and expression-relative offsets into file positions.
type source struct {
	name  string
	data  []byte
	lines []int // byte offset of the start of each line, as YAML counts lines
}

func newSource(name string, data []byte) *source {
	s := &source{name: name, data: data, lines: []int{0}}
	for i := 0; i < len(data); {
		if n := lineBreak(data, i); n > 0 {
			i += n
			s.lines = append(s.lines, i)
		} else {
			i++
		}
	}
	return s
}

// lineBreak returns the length of the line break at data[i:], 0 if there is none.
// Like the YAML scanner it counts CR LF, CR, LF, NEL, LS and PS.
func lineBreak(data []byte, i int) int {
	switch b := data[i:]; {
	case b[0] == '\r' && len(b) > 1 && b[1] == '\n':
		return 2
	case b[0] == '\r' || b[0] == '\n':
		return 1
	case len(b) > 1 && b[0] == 0xC2 && b[1] == 0x85:
		return 2
	case len(b) > 2 && b[0] == 0xE2 && b[1] == 0x80 && (b[2] == 0xA8 || b[2] == 0xA9):
		return 3
	}
	return 0
}

// offset returns the byte offset of a 1-based line and rune column, -1 if outside.
func (s *source) offset(line, col int) int {
	if line < 1 || line > len(s.lines) || col < 1 {
		return -1
	}
	off := s.lines[line-1]
	for range col - 1 {
		if off >= len(s.data) || lineBreak(s.data, off) > 0 {
			return -1
		}
		_, w := utf8.DecodeRune(s.data[off:])
		off += w
	}
	return off
}

// position returns the 1-based line and rune column of a byte offset.
func (s *source) position(off int) (line, col int) {
	i, found := slices.BinarySearch(s.lines, off)
	if !found {
		i--
	}
	return i + 1, utf8.RuneCount(s.data[s.lines[i]:off]) + 1
}

// exprPos returns the file position of byte offset off inside the value of scalar
// n (offsets into n.Value, as expression parsers report them). It follows plain,
// single- and double-quoted scalars on one line and literal block scalars (|); for
// anything else it returns the scalar's own position.
func (s *source) exprPos(n *yaml.Node, off int) (line, col int) {
	line, col = n.Line, n.Column
	start := s.offset(n.Line, n.Column)
	if start < 0 || off < 0 || n.Kind != yaml.ScalarNode {
		return line, col
	}
	if p := s.locate(n, start, min(off, len(n.Value))); p >= 0 {
		return s.position(p)
	}
	return line, col
}

// locate walks the raw text of scalar n from byte start and returns the byte offset
// in the file of value offset off, or -1 when the raw text does not line up.
func (s *source) locate(n *yaml.Node, start, off int) int {
	raw, v := s.data, n.Value
	j := start
	if n.Style&yaml.TaggedStyle != 0 && j < len(raw) && raw[j] == '!' {
		for j < len(raw) && raw[j] != ' ' && raw[j] != '\t' && raw[j] != '\n' {
			j++
		}
		for j < len(raw) && (raw[j] == ' ' || raw[j] == '\t') {
			j++
		}
	}
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		return locateDouble(raw, j, v, off)
	case n.Style&yaml.SingleQuotedStyle != 0:
		if j >= len(raw) || raw[j] != '\'' {
			return -1
		}
		j++
		for i := 0; i < off; {
			if j >= len(raw) || raw[j] == '\n' {
				return -1
			}
			if raw[j] == '\'' && j+1 < len(raw) && raw[j+1] == '\'' && v[i] == '\'' {
				i, j = i+1, j+2
				continue
			}
			if raw[j] != v[i] {
				return -1
			}
			i, j = i+1, j+1
		}
		return j
	case n.Style&yaml.LiteralStyle != 0:
		return locateLiteral(raw, j, v, off)
	case n.Style&yaml.FoldedStyle != 0:
		return -1
	}
	// Plain: the value is the raw text when it is on one line.
	if j+off <= len(raw) && string(raw[j:j+off]) == v[:off] && !strings.Contains(v[:off], "\n") {
		return j + off
	}
	return -1
}

// locateDouble maps a value offset inside a double-quoted scalar on one line.
func locateDouble(raw []byte, j int, v string, off int) int {
	if j >= len(raw) || raw[j] != '"' {
		return -1
	}
	j++
	for i := 0; i < off; {
		if j >= len(raw) || raw[j] == '\n' || raw[j] == '"' {
			return -1
		}
		if raw[j] != '\\' {
			if raw[j] != v[i] {
				return -1
			}
			i, j = i+1, j+1
			continue
		}
		if j+1 >= len(raw) {
			return -1
		}
		// An escape: find how many raw bytes it spans and how many value bytes it
		// stands for.
		rawLen, valLen := 2, 1
		switch raw[j+1] {
		case 'x':
			rawLen, valLen = 4, hexRuneLen(raw, j+2, 2)
		case 'u':
			rawLen, valLen = 6, hexRuneLen(raw, j+2, 4)
		case 'U':
			rawLen, valLen = 10, hexRuneLen(raw, j+2, 8)
		case 'N', '_':
			valLen = 2 // U+0085, U+00A0
		case 'L', 'P':
			valLen = 3 // U+2028, U+2029
		case '\n', '\r':
			return -1
		}
		if valLen <= 0 {
			return -1
		}
		i, j = i+valLen, j+rawLen
	}
	return j
}

// hexRuneLen is the UTF-8 length of the rune written with n hex digits at raw[j:].
func hexRuneLen(raw []byte, j, n int) int {
	if j+n > len(raw) {
		return -1
	}
	r, err := strconv.ParseUint(string(raw[j:j+n]), 16, 32)
	if err != nil {
		return -1
	}
	return utf8.RuneLen(rune(r))
}

// locateLiteral maps a value offset inside a literal block scalar (|): value lines
// are the file lines after the header, less the block's indentation.
func locateLiteral(raw []byte, j int, v string, off int) int {
	nl := strings.IndexByte(string(raw[j:]), '\n')
	if nl < 0 {
		return -1
	}
	lineStart := j + nl + 1
	// The indentation is that of the first non-empty line.
	indent := -1
	for p := lineStart; p < len(raw) && indent < 0; {
		k := p
		for k < len(raw) && raw[k] == ' ' {
			k++
		}
		if k < len(raw) && raw[k] != '\n' && raw[k] != '\r' {
			indent = k - p
		}
		next := strings.IndexByte(string(raw[p:]), '\n')
		if next < 0 {
			break
		}
		p += next + 1
	}
	if indent < 0 {
		return -1
	}
	// Walk value lines; empty value lines may have fewer spaces in the file.
	i := 0
	p := lineStart
	for {
		end := strings.IndexByte(v[i:], '\n')
		if end < 0 {
			end = len(v) - i
		}
		k := p
		for k < len(raw) && k-p < indent && raw[k] == ' ' {
			k++
		}
		if off <= i+end {
			q := k + off - i
			if q > len(raw) || string(raw[k:q]) != v[i:off] {
				return -1
			}
			return q
		}
		i += end + 1
		next := strings.IndexByte(string(raw[p:]), '\n')
		if next < 0 || i > len(v) {
			return -1
		}
		p += next + 1
	}
}

// exprOffset returns the byte offset into expr that a parser error points at.
// Participle's Offset is a byte offset; errors built by hand may carry only Line and
// Column (runes), so those are used when Offset is 0 and the position is not 1:1.
func exprOffset(expr string, err error) (int, string, bool) {
	var perr participle.Error
	if !errors.As(err, &perr) {
		return 0, err.Error(), false
	}
	pos := perr.Position()
	off := pos.Offset
	if off == 0 && (pos.Line > 1 || pos.Column > 1) {
		off = runeOffset(expr, pos.Line, pos.Column)
	}
	return max(0, min(off, len(expr))), perr.Message(), true
}

// runeOffset returns the byte offset in s of a 1-based line and rune column.
func runeOffset(s string, line, col int) int {
	off := 0
	for l := 1; l < line; l++ {
		i := strings.IndexByte(s[off:], '\n')
		if i < 0 {
			return len(s)
		}
		off += i + 1
	}
	for c := 1; c < col && off < len(s) && s[off] != '\n'; c++ {
		_, w := utf8.DecodeRuneInString(s[off:])
		off += w
	}
	return off
}
