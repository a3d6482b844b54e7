package engine

import (
	"strings"

	"github.com/tigrisgo/tigris/runtime/pointcut"
)

// Probe is what planning knows of one instrumented function: its static
// columns, its mode, and its coarse statistics so far.
type Probe struct {
	ID        uint32
	Function  string // Go's symbol form, Symbol(Signature)
	Package   string
	Receiver  string
	Name      string
	Signature string
	File      string
	Line      int
	// Sig is the pointcut view of the function, for MATCHES.
	Sig *pointcut.Signature
	// Mode is the probe's mode now: "off", "coarse" or "fine".
	Mode string
	// Rate is calls per second so far, MeanNs and SDNs their duration;
	// Rate < 0 when unknown (the probe was never on).
	Rate, MeanNs, SDNs float64
}

// Costs are what acquisition costs per call and per reading, in
// nanoseconds of CPU, as the program measured them; 0 where unknown.
type Costs struct {
	// CoarseNs is a coarse call's probe cost (paid by a probe switched on
	// from off); FineNs what fine mode adds to it.
	CoarseNs, FineNs float64
	// TupleNs is the cost of one tuple that passes the pushed-down
	// predicates: its delivery and its processing by the query.
	TupleNs float64
	// SampleNs is the cost of one reading of a runtime stream.
	SampleNs float64
}

// Catalog is what a plan is made against: a running program's probes, or a
// trace file's.
type Catalog interface {
	Probes() []*Probe
	Costs() Costs
}

// Symbol is a function's name in Go's symbol form from its signature as
// probes describe it: "example.com/shop.(*Store).Find(int) error" gives
// "example.com/shop.(*Store).Find", "example.com/shop.Map[...](...)" gives
// "example.com/shop.Map[...]". The name ends at the first "(" that opens the
// parameters, one that follows a name or a "]".
func Symbol(sig string) string {
	if i := paramsStart(sig); i >= 0 {
		return sig[:i]
	}
	return sig
}

// paramsStart is the index of the "(" that opens sig's parameters, or -1.
func paramsStart(sig string) int {
	depth := 0
	for i := 0; i < len(sig); i++ {
		switch sig[i] {
		case '[':
			depth++
		case ']':
			depth--
		case '(':
			if depth == 0 && i > 0 && sig[i-1] != '.' {
				return i
			}
			if i > 0 && sig[i-1] == '.' {
				// a receiver group "(*T)." : skip to its end
				end := strings.IndexByte(sig[i:], ')')
				if end < 0 {
					return -1
				}
				i += end
			}
		}
	}
	return -1
}

// SignatureOf rebuilds the pointcut view of a function from what a trace
// file's probe definition holds: the parameter and result types come from
// the signature text.
func SignatureOf(sig, pkg, recv, name, file string, line int) *pointcut.Signature {
	s := &pointcut.Signature{Package: pkg, Recv: recv, Name: name, File: file, Line: line}
	// A function literal's probe is named as Go names it ("NewHandler.func1").
	if s.Name, s.Lit = pointcut.SplitLiteral(name); s.Lit != "" {
		s.Flags |= pointcut.Literal
	}
	i := paramsStart(sig)
	if i < 0 {
		return s
	}
	head := sig[:i]
	if strings.Contains(head, "(*") {
		s.RecvPtr = true
	}
	if strings.Contains(head, "[...]") {
		s.Flags |= pointcut.Generic
	}
	params, rest := splitGroup(sig[i:])
	s.Params = splitTypes(params)
	rest = strings.TrimSpace(rest)
	if strings.HasPrefix(rest, "(") {
		results, _ := splitGroup(rest)
		s.Results = splitTypes(results)
	} else if rest != "" {
		s.Results = []string{rest}
	}
	return s
}

// splitGroup splits "(a, b) rest" into "a, b" and " rest".
func splitGroup(s string) (inner, rest string) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return s[1:i], s[i+1:]
			}
		}
	}
	return "", ""
}

// splitTypes splits a type list at its top-level commas.
func splitTypes(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}
