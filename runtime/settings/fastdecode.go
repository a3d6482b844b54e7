package settings

import (
	"strconv"
	"unicode/utf8"
)

// decodeFast reads what Encode writes without encoding/json, whose first use
// of these types builds its reflection caches: a few hundred microseconds of
// every instrumented program's start, where this takes a few. It accepts
// only the plain shape Encode produces (known keys spelled exactly, each
// once an object, strings without escapes, numbers that parse as their
// field's type, no null) and says false for anything else, which Decode
// then hands to encoding/json, so the result is always encoding/json's
// (TestDecodeFastAgreesWithJSON).
func decodeFast(s string) (e encoded, ok bool) {
	d := fastReader{s: s}
	ok = d.object(func(key string) bool {
		switch key {
		case "format":
			return d.int(&e.Format)
		case "mode":
			return d.str((*string)(&e.Mode))
		case "pointcuts":
			return d.array(func() bool {
				var n NamedPointcut
				ok := d.pair("name", &n.Name, "expr", &n.Expr)
				e.Pointcuts = append(e.Pointcuts, n)
				return ok
			}, func() { e.Pointcuts = []NamedPointcut{} })
		case "rules":
			return d.array(func() bool {
				var r Rule
				ok := d.pair("pattern", &r.Pattern, "mode", (*string)(&r.Mode))
				e.Rules = append(e.Rules, r)
				return ok
			}, func() { e.Rules = []Rule{} })
		case "sampling":
			return d.float(&e.Sampling)
		case "summaries":
			return d.bool(&e.Summaries)
		case "followParent":
			return d.bool(&e.FollowParent)
		case "coarseBudget":
			return d.float(&e.CoarseBudget)
		case "analysis":
			a := &e.Analysis
			return d.object(func(key string) bool {
				switch key {
				case "enabled":
					return d.bool(&a.Enabled)
				case "criteria":
					return d.str(&a.Criteria)
				case "metrics":
					if a.Metrics == nil {
						a.Metrics = map[string]string{}
					}
					return d.object(func(key string) bool {
						var v string
						ok := d.str(&v)
						a.Metrics[key] = v
						return ok
					})
				case "interval":
					return d.duration(&a.Interval)
				case "window":
					return d.duration(&a.Window)
				case "budget":
					return d.float(&a.Budget)
				}
				return false
			})
		case "writer":
			w := &e.Writer
			return d.object(func(key string) bool {
				switch key {
				case "mode":
					return d.str((*string)(&w.Mode))
				case "path":
					return d.str(&w.Path)
				case "queue":
					return d.int(&w.Queue)
				case "onFull":
					return d.str((*string)(&w.OnFull))
				case "rotate":
					return d.int64(&w.Rotate)
				case "flush":
					return d.duration(&w.Flush)
				}
				return false
			})
		case "admin":
			return d.pair("listen", &e.Admin.Listen, "token", &e.Admin.Token)
		case "queries":
			q := &e.Queries
			return d.object(func(key string) bool {
				switch key {
				case "max":
					return d.int(&q.Max)
				case "maxProbes":
					return d.int(&q.MaxProbes)
				case "budget":
					return d.float(&q.Budget)
				}
				return false
			})
		}
		return false
	})
	d.space()
	return e, ok && d.off == len(d.s)
}

// fastReader reads JSON tokens for decodeFast; every method says false for
// what it does not take.
type fastReader struct {
	s   string
	off int
}

func (d *fastReader) space() {
	for d.off < len(d.s) {
		switch d.s[d.off] {
		case ' ', '\t', '\n', '\r':
			d.off++
		default:
			return
		}
	}
}

// next skips white space and takes c if it comes next.
func (d *fastReader) next(c byte) bool {
	d.space()
	if d.off < len(d.s) && d.s[d.off] == c {
		d.off++
		return true
	}
	return false
}

// object reads an object, calling field after each key and its colon; a
// key twice is refused (encoding/json would merge or replace).
func (d *fastReader) object(field func(key string) bool) bool {
	if !d.next('{') {
		return false
	}
	if d.next('}') {
		return true
	}
	var seen []string
	for {
		var key string
		if !d.str(&key) || !d.next(':') {
			return false
		}
		for _, k := range seen {
			if k == key {
				return false
			}
		}
		seen = append(seen, key)
		if !field(key) {
			return false
		}
		if d.next('}') {
			return true
		}
		if !d.next(',') {
			return false
		}
	}
}

// pair reads an object of two string fields, keys a and b.
func (d *fastReader) pair(a string, va *string, b string, vb *string) bool {
	return d.object(func(key string) bool {
		switch key {
		case a:
			return d.str(va)
		case b:
			return d.str(vb)
		}
		return false
	})
}

// array reads an array of elements, calling empty for [] (encoding/json
// makes an empty slice of it, not nil).
func (d *fastReader) array(elem func() bool, empty func()) bool {
	if !d.next('[') {
		return false
	}
	if d.next(']') {
		empty()
		return true
	}
	for {
		if !elem() {
			return false
		}
		if d.next(']') {
			return true
		}
		if !d.next(',') {
			return false
		}
	}
}

// str reads a string of valid UTF-8 without escapes or control characters
// (encoding/json would replace invalid UTF-8).
func (d *fastReader) str(v *string) bool {
	if !d.next('"') {
		return false
	}
	ascii := true
	for i := d.off; i < len(d.s); i++ {
		switch c := d.s[i]; {
		case c == '"':
			if !ascii && !utf8.ValidString(d.s[d.off:i]) {
				return false
			}
			*v = d.s[d.off:i]
			d.off = i + 1
			return true
		case c == '\\' || c < 0x20:
			return false
		case c >= 0x80:
			ascii = false
		}
	}
	return false
}

// number returns the text of a number: what JSON allows, which strconv then
// reads as encoding/json does.
func (d *fastReader) number() string {
	d.space()
	start := d.off
	for d.off < len(d.s) && isNumberByte(d.s[d.off]) {
		d.off++
	}
	n := d.s[start:d.off]
	if !validNumber(n) {
		return ""
	}
	return n
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// validNumber reports whether n is a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(n string) bool {
	i := 0
	digits := func() bool {
		j := i
		for i < len(n) && n[i] >= '0' && n[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(n) && n[i] == '-' {
		i++
	}
	if i < len(n) && n[i] == '0' {
		i++
	} else if i >= len(n) || n[i] < '1' || n[i] > '9' || !digits() {
		return false
	}
	if i < len(n) && n[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(n) && (n[i] == 'e' || n[i] == 'E') {
		i++
		if i < len(n) && (n[i] == '+' || n[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(n)
}

func (d *fastReader) float(v *float64) bool {
	f, err := strconv.ParseFloat(d.number(), 64)
	*v = f
	return err == nil
}

func (d *fastReader) int64(v *int64) bool {
	i, err := strconv.ParseInt(d.number(), 10, 64)
	*v = i
	return err == nil
}

func (d *fastReader) int(v *int) bool {
	i, err := strconv.ParseInt(d.number(), 10, strconv.IntSize)
	*v = int(i)
	return err == nil
}

func (d *fastReader) bool(v *bool) bool {
	d.space()
	switch {
	case len(d.s)-d.off >= 4 && d.s[d.off:d.off+4] == "true":
		*v = true
		d.off += 4
		return true
	case len(d.s)-d.off >= 5 && d.s[d.off:d.off+5] == "false":
		*v = false
		d.off += 5
		return true
	}
	return false
}

func (d *fastReader) duration(v *Duration) bool {
	var s string
	if !d.str(&s) {
		return false
	}
	p, err := ParseDuration(s)
	*v = p
	return err == nil
}
