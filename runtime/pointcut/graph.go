package pointcut

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseGraph reads back the text Restrict writes. A planned build hands each
// instrumented compile its package's restriction instead of the whole config:
// the compile then parses only the terms that can select something in its
// package, once per package rather than the whole tigris.yaml once per
// compile. The result matches every join point of that package exactly as
// the pointcut it was restricted from.
//
// The text is one node a line, in post order: "id op operand...", where a
// leaf's operand is its canonical text quoted as Go quotes it and a
// composite's operands are the ids of earlier lines. Errors name the line.
// The cost is linear in the text: each leaf is parsed once, each composite
// built from nodes already built, and the expansion is bounded by MaxTerms as
// in NewEnv.
func ParseGraph(text string) (*Pointcut, error) {
	if text == "" {
		return newPointcut(noneNode), nil
	}
	var nodes []*node
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		n, err := graphNode(line, nodes)
		if err != nil {
			return nil, fmt.Errorf("pointcut graph line %d: %w", i+1, err)
		}
		nodes = append(nodes, n)
	}
	return newPointcut(nodes[len(nodes)-1]), nil
}

// graphNode builds the node of one line; nodes are the lines before it.
func graphNode(line string, nodes []*node) (*node, error) {
	idText, rest, _ := strings.Cut(line, " ")
	opText, operands, _ := strings.Cut(rest, " ")
	if id, err := strconv.Atoi(idText); err != nil || id != len(nodes) {
		return nil, fmt.Errorf("id %q, want %d", idText, len(nodes))
	}
	o, err := strconv.ParseUint(opText, 10, 8)
	if err != nil || op(o) > opPred {
		return nil, fmt.Errorf("operator %q is not one of 0 to %d", opText, opPred)
	}
	switch op(o) {
	case opAnd, opOr, opNot:
		return graphComposite(op(o), operands, nodes)
	}
	leaf, err := strconv.Unquote(operands)
	if err != nil {
		return nil, fmt.Errorf("operand %.40q of operator %d is not a quoted term", operands, o)
	}
	p, err := Parse(leaf)
	if err != nil {
		return nil, fmt.Errorf("term %q: %w", leaf, err)
	}
	if n := p.node(); n.op == op(o) && len(n.kids) == 0 {
		return n, nil
	}
	return nil, fmt.Errorf("%q is not a single term of operator %d", leaf, o)
}

// graphComposite builds an &&, || or ! node of the ids in operands.
func graphComposite(o op, operands string, nodes []*node) (*node, error) {
	fields := strings.Fields(operands)
	switch {
	case o == opNot && len(fields) != 1:
		return nil, fmt.Errorf("! takes one operand, not %d", len(fields))
	case o != opNot && len(fields) < 2:
		return nil, fmt.Errorf("&& and || take two operands or more, not %d", len(fields))
	}
	kids := make([]*node, len(fields))
	for i, f := range fields {
		k, err := strconv.Atoi(f)
		if err != nil || k < 0 || k >= len(nodes) {
			return nil, fmt.Errorf("operand %q is not the id of an earlier line", f)
		}
		kids[i] = nodes[k]
	}
	n := composite(o, kids)
	if n.size() > MaxTerms {
		return nil, fmt.Errorf("expands to more than %d terms", MaxTerms)
	}
	return n, nil
}
