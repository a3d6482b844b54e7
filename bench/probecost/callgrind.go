package probecost

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Profile is one callgrind dump: each function's own cost (its instructions
// and those of the code inlined into it, callees not counted) and how often
// it was called, and who called it how often.
type Profile struct {
	// Events are the names of the counted events, in the file's order
	// ("Ir", "D1mr", ...).
	Events []string
	// Self is each function's own cost, one count per event.
	Self map[string][]int64
	// Calls is how often each function was called (from every caller).
	Calls map[string]int64
	// Callers is, per function called, how often each caller called it.
	Callers map[string]map[string]int64
	// Total is the dump's summary line: the whole program.
	Total []int64
}

// Event returns the index of the named event, -1 when the dump lacks it.
func (p *Profile) Event(name string) int {
	for i, e := range p.Events {
		if e == name {
			return i
		}
	}
	return -1
}

// ReadProfileFile reads a callgrind output file.
func ReadProfileFile(path string) (*Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := ReadProfile(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// ReadProfile reads callgrind's output format (version 1, positions: line,
// with or without name compression). A recursion level's name ("f'2") counts
// as the function's.
func ReadProfile(r io.Reader) (*Profile, error) {
	p := &Profile{Self: map[string][]int64{}, Calls: map[string]int64{}, Callers: map[string]map[string]int64{}}
	names := map[string]string{} // "(id)" to name
	name := func(v string) string {
		v = strings.TrimSpace(v)
		if strings.HasPrefix(v, "(") {
			end := strings.IndexByte(v, ')')
			if end < 0 {
				return v
			}
			id, rest := v[:end+1], strings.TrimSpace(v[end+1:])
			if rest == "" {
				return names[id]
			}
			names[id] = level(rest)
			return names[id]
		}
		return level(v)
	}
	var fn, cfn string
	inCall := false // the next cost line is a call's inclusive cost
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	line := 0
	for sc.Scan() {
		line++
		s := sc.Text()
		switch {
		case s == "" || s[0] == '#':
		case strings.HasPrefix(s, "events:"):
			p.Events = strings.Fields(s[len("events:"):])
		case strings.HasPrefix(s, "summary:") || strings.HasPrefix(s, "totals:"):
			if p.Total == nil {
				p.Total = costs(strings.Fields(s[strings.IndexByte(s, ':')+1:]), len(p.Events))
			}
		case strings.HasPrefix(s, "fn="):
			fn = name(s[3:])
		case strings.HasPrefix(s, "cfn="):
			cfn = name(s[4:])
		case strings.HasPrefix(s, "calls="):
			f := strings.Fields(s[len("calls="):])
			if len(f) == 0 {
				return nil, fmt.Errorf("line %d: calls= without a count", line)
			}
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: calls count %q: %w", line, f[0], err)
			}
			p.Calls[cfn] += n
			if p.Callers[cfn] == nil {
				p.Callers[cfn] = map[string]int64{}
			}
			p.Callers[cfn][fn] += n
			inCall = true
		case s[0] >= '0' && s[0] <= '9' || s[0] == '+' || s[0] == '-' || s[0] == '*':
			if inCall {
				inCall = false // the callee's inclusive cost: not the caller's own
				continue
			}
			f := strings.Fields(s)
			c := costs(f[1:], len(p.Events))
			self := p.Self[fn]
			if self == nil {
				self = make([]int64, len(p.Events))
				p.Self[fn] = self
			}
			for i := range c {
				self[i] += c[i]
			}
		default:
			// ob=, fl=, fi=, fe=, cob=, cfi=, cfl=, and the header's
			// other keys: the names of objects and files are not needed,
			// but they share no namespace with functions.
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if p.Events == nil {
		return nil, fmt.Errorf("no events line: not a callgrind output file")
	}
	return p, nil
}

// level drops callgrind's recursion level from a function's name: "f'2" is f.
func level(name string) string {
	if i := strings.LastIndexByte(name, '\''); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			return name[:i]
		}
	}
	return name
}

func costs(f []string, n int) []int64 {
	c := make([]int64, n)
	for i := 0; i < len(f) && i < n; i++ {
		c[i], _ = strconv.ParseInt(f[i], 10, 64)
	}
	return c
}

// Minus returns p's counts less q's, q a profile of a shorter run of the
// same program: what the longer run did beyond the shorter one, its start
// and first iterations cancelled out.
func (p *Profile) Minus(q *Profile) *Profile {
	d := &Profile{Events: p.Events, Self: map[string][]int64{}, Calls: map[string]int64{}, Callers: map[string]map[string]int64{},
		Total: minus(p.Total, q.Total)}
	for fn, c := range p.Self {
		d.Self[fn] = minus(c, q.Self[fn])
	}
	for fn, c := range q.Self {
		if p.Self[fn] == nil {
			d.Self[fn] = minus(make([]int64, len(c)), c)
		}
	}
	for fn, n := range p.Calls {
		d.Calls[fn] = n - q.Calls[fn]
	}
	for fn, n := range q.Calls {
		if _, ok := p.Calls[fn]; !ok {
			d.Calls[fn] = -n
		}
	}
	for fn, callers := range p.Callers {
		d.Callers[fn] = map[string]int64{}
		for c, n := range callers {
			d.Callers[fn][c] = n - q.Callers[fn][c]
		}
	}
	return d
}

func minus(a, b []int64) []int64 {
	d := append([]int64(nil), a...)
	for i := range d {
		if i < len(b) {
			d[i] -= b[i]
		}
	}
	return d
}
