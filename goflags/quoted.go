package goflags

import (
	"fmt"
	"strings"
)

// Split splits s into words as the go command splits flag values and GOFLAGS:
// at white space, except inside single or double quotes, which are removed.
// There are no escapes.
func Split(s string) ([]string, error) {
	var words []string
	for {
		s = strings.TrimLeft(s, " \t\n\r")
		if s == "" {
			return words, nil
		}
		if q := s[0]; q == '\'' || q == '"' {
			end := strings.IndexByte(s[1:], q)
			if end < 0 {
				return nil, fmt.Errorf("unterminated %c string", q)
			}
			words = append(words, s[1:1+end])
			s = s[2+end:]
			continue
		}
		end := strings.IndexAny(s, " \t\n\r")
		if end < 0 {
			end = len(s)
		}
		words = append(words, s[:end])
		s = s[end:]
	}
}

// Join joins words so that Split returns them: words with white space or
// quotes are quoted. A word that holds both quote characters and white space
// cannot be written; Join reports it.
func Join(words []string) (string, error) {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch {
		case w != "" && !strings.ContainsAny(w, " \t\n\r'\""):
			b.WriteString(w)
		case !strings.ContainsRune(w, '\''):
			b.WriteString("'" + w + "'")
		case !strings.ContainsRune(w, '"'):
			b.WriteString(`"` + w + `"`)
		default:
			return "", fmt.Errorf("%q cannot be quoted for the go command (it holds both quote characters)", w)
		}
	}
	return b.String(), nil
}

// WithoutToolexec removes -toolexec settings from a GOFLAGS value, for a
// nested go command that must not run tigris again. A value that does not
// split is returned unchanged: the go command will report it.
func WithoutToolexec(goflagsValue string) string {
	words, err := Split(goflagsValue)
	if err != nil {
		return goflagsValue
	}
	kept := words[:0]
	for _, w := range words {
		if n := strings.TrimLeft(w, "-"); strings.HasPrefix(w, "-") && (n == "toolexec" || strings.HasPrefix(n, "toolexec=")) {
			continue
		}
		kept = append(kept, w)
	}
	out, err := Join(kept)
	if err != nil {
		return goflagsValue
	}
	return out
}
