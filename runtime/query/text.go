package query

import "strings"

// printer writes canonical text in one pass, each node's text once, so that
// writing a statement costs time and memory linear in its size. Building a
// node's text from its operands' texts instead copies a chain of n
// operators n times (1+1+…+1 of 32k terms took gigabytes).
//
// A node's Text is a slice of its statement's Text (spanned gives each node
// its slice once the statement is written): the texts of all nodes cost no
// more than the statement's own.
type printer struct {
	b []byte
	// spans are where each node's text lies in b, when recording.
	spans  []span
	record bool
}

type span struct {
	n          *Node
	start, end int
}

func (p *printer) str(s string) { p.b = append(p.b, s...) }

// wrap writes n, in parentheses when paren holds.
func (p *printer) wrap(n *Node, paren bool) {
	if paren {
		p.b = append(p.b, '(')
	}
	p.node(n)
	if paren {
		p.b = append(p.b, ')')
	}
}

// node writes n's canonical text: parentheses only where an operand binds
// looser than its operator (a parent writes them, they are not in the
// operand's text).
func (p *printer) node(n *Node) {
	start := len(p.b)
	switch n.Kind {
	case NAnd, NOr:
		op := " AND "
		if n.Kind == NOr {
			op = " OR "
		}
		for i, k := range n.Kids {
			if i > 0 {
				p.str(op)
			}
			p.wrap(k, n.Kind == NAnd && k.Kind == NOr)
		}
	case NNot:
		p.str("NOT ")
		k := n.Kids[0]
		p.wrap(k, k.Kind == NOr || k.Kind == NAnd)
	case NCmp:
		p.wrap(n.Kids[0], isCondition(n.Kids[0]))
		p.str(" " + n.Op + " ")
		p.wrap(n.Kids[1], isCondition(n.Kids[1]))
	case NIn:
		p.node(n.Kids[0])
		if n.Negated {
			p.str(" NOT IN (")
		} else {
			p.str(" IN (")
		}
		for i, k := range n.Kids[1:] {
			if i > 0 {
				p.str(", ")
			}
			p.node(k)
		}
		p.str(")")
	case NLike:
		p.node(n.Kids[0])
		if n.Negated {
			p.str(" NOT LIKE ")
		} else {
			p.str(" LIKE ")
		}
		p.quoted(n.Pattern)
	case NMatches:
		p.node(n.Kids[0])
		p.str(" MATCHES ")
		p.quoted(n.Pattern)
	case NArith:
		a, b := n.Kids[0], n.Kids[1]
		if n.Op == "+" || n.Op == "-" {
			p.node(a)
			p.str(" " + n.Op + " ")
			p.wrap(b, b.Kind == NArith && (b.Op == "+" || b.Op == "-"))
		} else {
			p.wrap(a, a.Kind == NArith && (a.Op == "+" || a.Op == "-" || n.Op == "/"))
			p.str(" " + n.Op + " ")
			p.wrap(b, b.Kind == NArith)
		}
	case NNeg:
		p.str("-")
		p.wrap(n.Kids[0], n.Kids[0].Kind == NArith)
	default: // leaves keep the text they were made with: a literal, a column, an aggregate call
		p.str(n.Text)
	}
	if p.record {
		p.spans = append(p.spans, span{n, start, len(p.b)})
	}
}

// isCondition says whether k needs parentheses as a comparison's operand.
func isCondition(k *Node) bool {
	return k.Kind == NOr || k.Kind == NAnd || k.Kind == NNot || k.Kind == NCmp
}

// quoted writes s as a string literal.
func (p *printer) quoted(s string) {
	p.b = append(p.b, '\'')
	for {
		i := strings.IndexByte(s, '\'')
		if i < 0 {
			break
		}
		p.b = append(p.b, s[:i+1]...)
		p.b = append(p.b, '\'')
		s = s[i+1:]
	}
	p.b = append(p.b, s...)
	p.b = append(p.b, '\'')
}

// spanned returns what p wrote and gives each node written its Text, a
// slice of it.
func (p *printer) spanned() string {
	s := string(p.b)
	for _, sp := range p.spans {
		sp.n.Text = s[sp.start:sp.end]
	}
	p.b, p.spans = nil, nil
	return s
}

// textOf is n's canonical text, written on its own (for a message, or the
// key of an aggregate): linear in n's size.
func textOf(n *Node) string {
	if n.Text != "" || n.Kind == NLit || n.Kind == NCol || n.Kind == NAgg {
		return n.Text
	}
	var p printer
	p.node(n)
	return string(p.b)
}

// ClipLen is the longest expression an error message or a plan quotes
// whole.
const ClipLen = 200

// brief is n's text for a message, clipped (Clip).
func brief(n *Node) string { return Clip(textOf(n)) }

// Clip cuts s to about ClipLen bytes, keeping its start and end, so that
// what is said about a long expression does not echo all of it.
func Clip(s string) string {
	if len(s) <= ClipLen {
		return s
	}
	cut, end := ClipLen/2, len(s)-ClipLen/2
	for cut > 0 && s[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	for end < len(s) && s[end]&0xC0 == 0x80 {
		end++
	}
	return s[:cut] + " … " + s[end:]
}
