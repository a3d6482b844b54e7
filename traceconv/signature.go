package traceconv

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// sigParts is a probe signature taken apart.
type sigParts struct {
	Name    string   // everything before the parameter list: "example.com/shop.(*Store).Find"
	Params  []string // parameter types, as written
	Results []string // result types, as written
}

// splitSignature takes apart a signature as the monitor writes it,
// "example.com/shop.(*Store).Find(int, string) (Owner, error)", also accepting a
// leading "func " and the receiver-first form "func (*example.com/shop.Store).Find(int)".
// Brackets nest and quoted struct tags are skipped, so parameter types such as
// "func(int, error) bool" or `struct{A int "json:\"a,(\""}` stay whole. ok is false
// when there is no parameter list or the brackets do not balance.
func splitSignature(sig string) (parts sigParts, ok bool) {
	s := strings.TrimPrefix(sig, "func ")
	open := -1
	depth := 0
	for i := 0; i < len(s) && open < 0; i++ {
		switch c := s[i]; c {
		case '"', '`':
			j := skipQuoted(s, i)
			if j < 0 {
				return sigParts{}, false
			}
			i = j
		case '(':
			if depth == 0 && i > 0 && (isIdentByte(s[i-1]) || s[i-1] == ']') {
				open = i
				break
			}
			depth++
		case '[', '{':
			depth++
		case ')', ']', '}':
			if depth--; depth < 0 {
				return sigParts{}, false
			}
		}
	}
	if open < 0 {
		return sigParts{}, false
	}
	end := matching(s, open)
	if end < 0 {
		return sigParts{}, false
	}
	parts.Name = s[:open]
	parts.Params = splitTop(s[open+1 : end])
	rest := strings.TrimSpace(s[end+1:])
	if rest == "" {
		return parts, true
	}
	if rest[0] == '(' {
		e := matching(rest, 0)
		if e < 0 || strings.TrimSpace(rest[e+1:]) != "" {
			return sigParts{}, false
		}
		parts.Results = splitTop(rest[1:e])
		return parts, true
	}
	if !balanced(rest) {
		return sigParts{}, false
	}
	parts.Results = []string{rest}
	return parts, true
}

// isIdentByte reports whether c can end a Go identifier (any non-ASCII byte is
// taken to belong to a letter).
func isIdentByte(c byte) bool {
	return c == '_' || c >= 0x80 || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// skipQuoted returns the index of the quote closing the string that starts at
// s[i], or -1 when it is not closed.
func skipQuoted(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch {
		case s[j] == '\\' && q == '"':
			j++
		case s[j] == q:
			return j
		}
	}
	return -1
}

// matching returns the index of the bracket closing the one at s[open], or -1.
func matching(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '"', '`':
			j := skipQuoted(s, i)
			if j < 0 {
				return -1
			}
			i = j
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth--; depth == 0 {
				return i
			}
			if depth < 0 {
				return -1
			}
		}
	}
	return -1
}

func balanced(s string) bool {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"', '`':
			j := skipQuoted(s, i)
			if j < 0 {
				return false
			}
			i = j
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth--; depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}

// splitTop splits a list at the commas outside brackets and quotes; empty items
// are dropped. It is given balanced text.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	add := func(item string) {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"', '`':
			if j := skipQuoted(s, i); j >= 0 {
				i = j
			}
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case ',':
			if depth == 0 {
				add(s[start:i])
				start = i + 1
			}
		}
	}
	add(s[start:])
	return out
}

// qualifiedName is the function's name qualified by package and receiver:
// "example.com/shop.Store.Find", "example.com/shop.Find".
func qualifiedName(d *writer.ProbeDef) string {
	var b strings.Builder
	if d.Package != "" {
		b.WriteString(d.Package)
		b.WriteByte('.')
	}
	if d.Recv != "" {
		b.WriteString(d.Recv)
		b.WriteByte('.')
	}
	b.WriteString(d.Name)
	return b.String()
}

// exported reports whether a Go identifier is exported.
func exported(name string) bool {
	r, _ := utf8.DecodeRuneInString(name)
	return unicode.IsUpper(r)
}

// kiekerSignature writes a probe as a Kieker operation signature,
// "public void example.com/shop.Store.Find(int, string)". Kieker takes a
// signature apart at its first "(" and at the spaces before it, so the return
// type loses its spaces and parentheses (several results become "A,B"; a
// function type "func[int]error"), and the text loses ';' and line breaks, which
// would split the ASCII record.
func kiekerSignature(p *probe) string {
	var mod, fq string
	parts, ok := splitSignature(p.sig)
	switch {
	case p.def != nil && p.def.Name != "":
		fq = qualifiedName(p.def)
		mod = "private "
		if exported(p.def.Name) {
			mod = "public "
		}
	case ok:
		fq = strings.NewReplacer("(*", "", "(", "", ")", "", " ", "").Replace(parts.Name)
	default:
		fq = strings.ReplaceAll(p.sig, " ", "")
	}
	ret := "void"
	if len(parts.Results) > 0 {
		ret = strings.NewReplacer(" ", "", "(", "[", ")", "]").Replace(strings.Join(parts.Results, ","))
	}
	fq = strings.NewReplacer("(", "[", ")", "]").Replace(fq)
	s := mod + ret + " " + fq + "(" + strings.Join(parts.Params, ", ") + ")"
	return strings.NewReplacer(";", ",", "\n", " ", "\r", " ").Replace(s)
}
