package engine

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tigrisgo/tigris/runtime/query"
)

// Acquisition costs time linear in the WHERE condition's size for the
// conditions that depend on no probe, and that size times the probes for
// the conditions on static columns, at most MaxPlanWork, with no allocation
// per probe beyond its ProbeNeed: a source's WHERE is prepared once (which
// conjuncts depend on the probe, which nodes its static columns decide),
// then each probe evaluates only what depends on it. A plan reads a derived
// stream's query once however many of its leaves read it.

// MaxPlanWork bounds the work of deciding, probe by probe, the conjuncts of
// WHERE on static columns: their nodes times the probes. The smallest are
// decided first; the conjuncts past the bound are not used to choose
// probes (every probe is acquired as far as they go) and are checked on
// each call as the rest of WHERE is. A plan note says so.
const MaxPlanWork = 1 << 22

// maxPushed is how many pushed-down conditions a ProbeNeed names (Pushed);
// the rest are counted. What is pushed is not bounded, only what is named.
const maxPushed = 8

// where is one calls source's view of a query's WHERE, prepared once for
// all the probes.
type where struct {
	si   int
	fine bool
	conj []*query.Node
	// dep says, per conjunct, whether it reads a static column of the
	// source (or MATCHES its function): whether the probe decides it; size
	// is its nodes.
	dep  []bool
	size []int
	// undecided counts the conjuncts on static columns past MaxPlanWork.
	undecided int
	// rejected counts, per conjunct, the probes it was the first to rule
	// out; conflicts the probes whose pushed-down bounds no call can meet:
	// what Nothing says when no probe is acquired.
	rejected  []int
	conflicts int
	// closed are the largest subexpressions that the probe's static
	// columns and literals decide.
	closed map[*query.Node]bool
	// base is what the conjuncts that depend on no probe push down, for
	// every probe; never says none of those conjuncts can hold.
	base  ProbeNeed
	never bool
	// tup and env evaluate a closed subexpression for one probe.
	tup Tuple
	env env
}

// prepare readies source si of q for acquire.
func prepare(q *query.Query, si int) *where {
	w := &where{si: si, fine: readsFine(q, si), closed: map[*query.Node]bool{}}
	w.env.tup[si] = &w.tup
	if q.Where != nil {
		w.conj = conjuncts(q.Where)
	}
	w.dep = make([]bool, len(w.conj))
	w.size = make([]int, len(w.conj))
	w.rejected = make([]int, len(w.conj))
	for i, c := range w.conj {
		closed, dep, size := w.mark(c)
		if closed {
			w.closed[c] = true
		}
		w.dep[i], w.size[i] = dep, size
		if dep {
			continue
		}
		// The same for every probe: decide it now.
		if v, known := w.partial(c, nil); known {
			if !v.Truth() {
				w.never = true
			}
			continue
		}
		w.pushInto(c, nil, &w.base, c)
	}
	return w
}

// mark says whether n is closed (decided by literals and the probe's static
// columns) and whether it depends on the probe, counts its nodes, and
// records the closed operands of a node that is not.
func (w *where) mark(n *query.Node) (closed, dep bool, size int) {
	switch n.Kind {
	case query.NLit:
		return true, false, 1
	case query.NCol:
		if n.Src == w.si && isStatic(n.Col) {
			return true, true, 1
		}
		return false, false, 1
	case query.NAgg:
		return false, false, 1
	case query.NMatches:
		if n.Kids[0].Src == w.si {
			return true, true, 2
		}
		return false, false, 2
	}
	closed, size = true, 1
	var buf [2]bool
	kids := buf[:0]
	for _, k := range n.Kids {
		c, d, s := w.mark(k)
		closed = closed && c
		dep = dep || d
		size += s
		kids = append(kids, c)
	}
	if !closed {
		for i, k := range n.Kids {
			if kids[i] {
				w.closed[k] = true
			}
		}
	}
	return closed, dep, size
}

// bound keeps the per-probe work over probes within MaxPlanWork: the
// smallest conjuncts on static columns first, the others undecided.
func (w *where) bound(probes int) {
	var order []int
	for i, d := range w.dep {
		if d {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return w.size[order[a]] < w.size[order[b]] })
	work := 0
	for _, i := range order {
		if cost := w.size[i] * probes; work+cost <= MaxPlanWork {
			work += cost
			continue
		}
		w.dep[i] = false
		w.undecided++
	}
}

// need is what probe pr needs for the source, nil when no call of it can
// pass WHERE.
func (w *where) need(pr *Probe) *ProbeNeed {
	if w.never {
		return nil
	}
	n := w.base
	n.Probe, n.Fine, n.Pass = pr, w.fine, -1
	n.pushed = n.pushed[:len(n.pushed):len(n.pushed)] // appends copy
	for i, c := range w.conj {
		if !w.dep[i] {
			continue
		}
		v, known := w.partial(c, pr)
		if known {
			if !v.Truth() {
				w.rejected[i]++
				return nil
			}
			continue
		}
		w.pushInto(c, pr, &n, c)
	}
	if n.MaxNs < 0 || n.MaxNs > 0 && n.MinNs > n.MaxNs || n.Require&n.Forbid != 0 {
		w.conflicts++
		return nil // no call can pass
	}
	n.where = w
	return &n
}

// static evaluates closed n for probe pr.
func (w *where) static(n *query.Node, pr *Probe) query.Value {
	w.tup.Call.Probe = pr
	v := eval(n, &w.env)
	w.tup.Call.Probe = nil
	return v
}

// partial evaluates n as far as probe pr's static columns decide it (pr nil:
// as far as literals do): its value and true, or false when the call must
// decide. It allocates nothing.
func (w *where) partial(n *query.Node, pr *Probe) (query.Value, bool) {
	if w.closed[n] {
		return w.static(n, pr), true
	}
	switch n.Kind {
	case query.NAnd, query.NOr:
		// AND is false when an operand is, true when all are; OR the
		// other way round.
		decides := n.Kind == query.NOr
		all := true
		for _, k := range n.Kids {
			v, known := w.partial(k, pr)
			if !known {
				all = false
				continue
			}
			if v.Truth() == decides {
				return query.BoolValue(decides), true
			}
		}
		if all {
			return query.BoolValue(!decides), true
		}
	case query.NNot:
		if v, known := w.partial(n.Kids[0], pr); known {
			return query.BoolValue(v.T != query.Null && !v.Truth()), true
		}
	}
	return query.Value{}, false
}

// pushInto folds into need what remains of n, undecided for probe pr, when
// the probe's exit can decide it (push), and names conjunct c among the
// pushed conditions. What remains of an AND is its undecided operands, of
// an OR its one undecided operand (more cannot be pushed).
func (w *where) pushInto(n *query.Node, pr *Probe, need *ProbeNeed, c *query.Node) bool {
	if !w.pushes(n, pr, need) {
		return false
	}
	if len(need.pushed) < maxPushed {
		need.pushed = append(need.pushed, c)
	} else {
		need.PushedMore++
	}
	return true
}

func (w *where) pushes(n *query.Node, pr *Probe, need *ProbeNeed) bool {
	switch n.Kind {
	case query.NAnd:
		saved := *need
		for _, k := range n.Kids {
			if _, known := w.partial(k, pr); known {
				continue // true, or the AND would be decided
			}
			if !w.pushes(k, pr, need) {
				*need = saved
				return false
			}
		}
		return true
	case query.NOr:
		var left *query.Node
		for _, k := range n.Kids {
			if _, known := w.partial(k, pr); known {
				continue // false, or the OR would be decided
			}
			if left != nil {
				return false
			}
			left = k
		}
		return left != nil && w.pushes(left, pr, need)
	}
	return push(n, w.si, need)
}

// Pushed names the conditions pushed down to the probe's exit, as what
// remains of the query's conjuncts once its static columns are known: at
// most maxPushed of them (PushedMore counts the rest), each clipped
// (query.Clip).
func (n *ProbeNeed) Pushed() []string {
	var out []string
	for _, c := range n.pushed {
		r := c
		if n.where != nil {
			r = simplify(c, n.where.si, n.Probe)
		}
		out = append(out, query.Clip(r.Text))
	}
	return out
}

// joinTexts writes the text of an AND or OR of kids (what remains of one
// for a probe).
func joinTexts(kids []*query.Node, k query.NodeKind) string {
	op := " AND "
	if k == query.NOr {
		op = " OR "
	}
	var b strings.Builder
	for i, c := range kids {
		if i > 0 {
			b.WriteString(op)
		}
		if c.Kind == query.NOr && k == query.NAnd {
			b.WriteString("(" + c.Text + ")")
		} else {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// nothing says why no probe of probes can feed the source (alias names it):
// the program has none, a condition is never true, one condition rules out
// every probe (with a probe's name for the column it compares, the form the
// names take), or the conditions do together.
func (w *where) nothing(alias string, probes []*Probe) string {
	if len(probes) == 0 {
		return alias + ": the program has no probes"
	}
	if w.never {
		for i, c := range w.conj {
			if w.dep[i] {
				continue
			}
			if v, known := w.partial(c, nil); known && !v.Truth() {
				return fmt.Sprintf("%s: %s is never true", alias, query.Clip(c.Text))
			}
		}
	}
	for i, n := range w.rejected {
		if n == len(probes) {
			return alias + ": no probe matches " + query.Clip(w.conj[i].Text) + w.namedLike(w.conj[i], probes)
		}
	}
	if w.conflicts == len(probes) || w.never {
		return alias + ": no call can pass what WHERE asks of duration, error and panicked together"
	}
	return alias + ": no probe passes WHERE's conditions on function, package and the other static columns together"
}

// namedLike shows the form of the names c compares: the value, in the
// probe that comes closest to c's string (the longest common suffix, "%"
// and a leading "…/" aside), of the first static column c compares with a
// string. A string holding "…" is an elision, as the documents print long
// import paths: the note says so.
func (w *where) namedLike(c *query.Node, probes []*Probe) string {
	col, lit := -1, ""
	walk(c, func(n *query.Node) {
		if col >= 0 || len(n.Kids) == 0 {
			return
		}
		k := n.Kids[0]
		if k.Kind != query.NCol || k.Src != w.si || !isStatic(k.Col) || query.Calls.Columns[k.Col].Type != query.String {
			return
		}
		switch {
		case n.Kind == query.NLike:
			col, lit = k.Col, n.Pattern
		case (n.Kind == query.NCmp || n.Kind == query.NIn) && len(n.Kids) > 1 && n.Kids[1].Kind == query.NLit && n.Kids[1].Val.T == query.String:
			col, lit = k.Col, n.Kids[1].Val.S
		}
	})
	if col < 0 {
		return ""
	}
	want := strings.Trim(lit, "%")
	if i := strings.LastIndex(want, "…"); i >= 0 {
		want = want[i+len("…"):]
	}
	best, bestLen := "", -1
	for _, pr := range probes {
		t := &Tuple{Call: Call{Probe: pr}}
		v := t.col(col).S
		if n := commonSuffix(v, want); n > bestLen {
			best, bestLen = v, n
		}
	}
	out := fmt.Sprintf("; probes have %s like '%s'", query.Calls.Columns[col].Name, query.Clip(best))
	if strings.Contains(lit, "…") {
		out += " ('…' stands for a part left out in print: write the whole name, or LIKE with %)"
	}
	return out
}

func commonSuffix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	return n
}
