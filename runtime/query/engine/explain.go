package engine

import (
	"fmt"
	"strings"
	"time"
)

// Explain renders the plan for people: the query, each leaf with the probes
// it acquires (mode, pushed-down conditions, estimated rate and share that
// passes), the samplers, the trigger actions' probes, the estimated cost and
// the verdict against the limits.
func (p *Plan) Explain() string {
	var b strings.Builder
	fmt.Fprintf(&b, "query: %s\n", p.Query.Text)
	// Leaves that read one derived stream share its probes: listed once.
	listed := map[*ProbeNeed]string{}
	for _, l := range p.Leaves {
		if l.Every > 0 {
			fmt.Fprintf(&b, "source %s: sampler %s every %v\n", l.Path, l.Stream.Name, l.Every)
			continue
		}
		if len(l.Probes) > 0 {
			if first, ok := listed[l.Probes[0]]; ok {
				fmt.Fprintf(&b, "source %s: %d probe(s), those of source %s\n", l.Path, len(l.Probes), first)
				continue
			}
			listed[l.Probes[0]] = l.Path
		}
		fmt.Fprintf(&b, "source %s: %d probe(s)\n", l.Path, len(l.Probes))
		const shown = 20
		for i, n := range l.Probes {
			if i == shown {
				fmt.Fprintf(&b, "  ... and %d more\n", len(l.Probes)-shown)
				break
			}
			fmt.Fprintf(&b, "  %s  %s", n.Probe.Function, n.mode())
			if n.Probe.Mode != n.mode() && !(n.mode() == "coarse" && n.Probe.Mode == "fine") {
				fmt.Fprintf(&b, " (now %s)", n.Probe.Mode)
			}
			pushed := n.Pushed()
			if len(pushed) > 0 {
				fmt.Fprintf(&b, ", at exit: %s", strings.Join(pushed, " AND "))
				if n.PushedMore > 0 {
					fmt.Fprintf(&b, " and %d more", n.PushedMore)
				}
			}
			if n.Probe.Rate >= 0 {
				fmt.Fprintf(&b, ", %s calls/s", rate(n.Probe.Rate))
				if n.Pass >= 0 && len(pushed) > 0 {
					fmt.Fprintf(&b, ", ~%s pass", percent(n.Pass))
				}
			} else {
				b.WriteString(", rate unknown (never on)")
			}
			b.WriteByte('\n')
		}
	}
	for i, a := range p.Query.Actions {
		switch {
		case a.Pointcut != nil:
			fmt.Fprintf(&b, "action %s: %d probe(s) fine while it holds\n", a.Text, len(p.Actions[i]))
		default:
			fmt.Fprintf(&b, "action %s\n", a.Text)
		}
	}
	for _, j := range p.Joins {
		fmt.Fprintf(&b, "join %s: ~%s pairs/s, from %s and %s tuples/s within %v", j.Sources, rate(j.Pairs), rate(j.Rates[0]), rate(j.Rates[1]), j.Window)
		if p.Costs.TupleNs > 0 {
			fmt.Fprintf(&b, " (each costs a tuple: %s of one core)", percent(j.Pairs*p.Costs.TupleNs/float64(time.Second)))
		}
		if j.Keyed != "" {
			fmt.Fprintf(&b, "; indexed by %s, at most that", j.Keyed)
		}
		b.WriteByte('\n')
	}
	for _, n := range p.Notes {
		if n != p.Nothing {
			fmt.Fprintf(&b, "note: %s\n", n)
		}
	}
	if p.Nothing != "" {
		fmt.Fprintf(&b, "produces nothing: %s\n", p.Nothing)
	}
	fmt.Fprintf(&b, "estimated cost: %s of one core", percent(p.CostNs/float64(time.Second)))
	if p.CostNs > 0 {
		fmt.Fprintf(&b, " (%s CPU per second)", time.Duration(p.CostNs).Round(time.Nanosecond))
	}
	if p.Unknown > 0 {
		fmt.Fprintf(&b, ", not counting %d probe(s) never on", p.Unknown)
	}
	b.WriteByte('\n')
	if c := p.Costs; c != (Costs{}) {
		fmt.Fprintf(&b, "  from: coarse probe %s, fine adds %s, a tuple that passes %s, a sampler reading %s\n",
			ns(c.CoarseNs), ns(c.FineNs), ns(c.TupleNs), ns(c.SampleNs))
	}
	if p.Refused != "" {
		fmt.Fprintf(&b, "refused: %s\n", p.Refused)
	}
	return b.String()
}

func (n *ProbeNeed) mode() string {
	if n.Fine {
		return "fine"
	}
	return "coarse"
}

func rate(r float64) string {
	switch {
	case r >= 100:
		return fmt.Sprintf("%.0f", r)
	case r >= 1:
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.3g", r)
}

func ns(f float64) string { return time.Duration(f).Round(time.Nanosecond).String() }
