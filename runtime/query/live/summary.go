package live

import (
	"github.com/tigrisgo/tigris/runtime/query"
	"github.com/tigrisgo/tigris/runtime/query/engine"
)

// MaxEndedExplain bounds the plan explanation an ended query keeps: an
// ended query keeps a summary (what listings show, its columns, its plan's
// explanation cut to this many bytes), never its compiled query or plan.
const MaxEndedExplain = 16 << 10

// summary is what listings say of a query, kept when it ends.
type summary struct {
	kind             query.Kind
	probes, samplers int
	columns          []query.Column
	explain          string // set when the query ends
}

func summarize(p *engine.Plan) summary {
	s := summary{kind: p.Query.Kind, probes: len(p.Probes()), columns: p.Query.Schema}
	for _, l := range p.Leaves {
		if l.Every > 0 {
			s.samplers++
		}
	}
	return s
}

// forget drops the ended query's plan (and with it its compiled query) and
// its taps, keeping its explanation, cut to MaxEndedExplain.
func (q *Query) forget() {
	q.held.drop()
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.plan == nil {
		return
	}
	e := q.plan.Explain()
	if len(e) > MaxEndedExplain {
		cut := MaxEndedExplain
		for cut > 0 && e[cut]&0xC0 == 0x80 {
			cut--
		}
		e = e[:cut] + "\n… (cut: the query has ended)\n"
	}
	q.sum.explain = e
	q.plan = nil
}

// Explain is the query's plan explained (engine.Plan.Explain); an ended
// query's, as it was when it ended, at most MaxEndedExplain bytes.
func (q *Query) Explain() string {
	q.mu.Lock()
	p, e := q.plan, q.sum.explain
	q.mu.Unlock()
	if p != nil {
		return p.Explain()
	}
	return e
}

// Columns are the columns of the query's rows.
func (q *Query) Columns() []query.Column { return q.sum.columns }
