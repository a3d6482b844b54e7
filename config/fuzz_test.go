package config

import (
	"errors"
	"testing"
)

// FuzzParse checks that Parse never panics, returns a config or an ErrorList but
// never both or neither, and that every error has a position inside the file.
func FuzzParse(f *testing.F) {
	f.Add([]byte(full))
	f.Add(Template("example.com/shop"))
	f.Add([]byte("monitor:\n  mode: fast\n  rules:\n    - fine: repo\n"))
	f.Add([]byte("analysis:\n  criteria: |\n    more frequent\n    ∪ most expensive\n"))
	f.Add([]byte("pointcuts:\n  a: &x \"execution(* \\u00e9.F(..))\"\nmonitor:\n  include: [*x, a]\n"))
	f.Add([]byte("x: &a [*a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("f.yaml", data)
		if (c == nil) == (err == nil) {
			t.Fatalf("Parse = %v, %v", c, err)
		}
		if err == nil {
			c.Hash()
			if _, err := c.Runtime.Encode(); err != nil {
				t.Fatalf("a parsed config does not encode: %v", err)
			}
			return
		}
		var list ErrorList
		if !errors.As(err, &list) || len(list) == 0 {
			t.Fatalf("error %v (%T) is not a non-empty ErrorList", err, err)
		}
		lines := len(newSource("f.yaml", data).lines)
		for _, e := range list {
			if e.Line < 0 || e.Line > lines || e.Col < 0 {
				t.Fatalf("error outside the file (%d lines): %v", lines, e)
			}
		}
	})
}
