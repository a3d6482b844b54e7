package probecost

import (
	"fmt"
	"io"
	"strings"
)

// Table writes, for each run, what it costs beyond base per probed call,
// part by part (instructions, first-level misses and of them the data
// cache's, last-level misses, mispredicted branches, KCachegrind's cycle
// estimate), after a line of its
// probes' activity per operation; probed is the calls of probed functions
// per operation.
func Table(w io.Writer, base *Breakdown, probed float64, runs ...*Breakdown) {
	fmt.Fprintf(w, "per probed call beyond %s (%.2f probed calls an operation; %s: %.1f instructions, %.0f estimated cycles an operation)\n",
		base.Run.Name, probed, base.Run.Name, base.Total.Ir, base.Total.Cycles())
	fmt.Fprintf(w, "cycles estimated as Ir + 10 Bm + 10 L1m + 100 LLm (KCachegrind's); a clock read counts as one instruction there\n\n")
	for _, r := range runs {
		fmt.Fprintf(w, "%s: per operation %.2f starts, %.2f timed, %.2f clock reads, %.2f calls into the measured functions (%s %.2f)\n",
			r.Run.Name, r.Starts(), r.Timed(), r.ClockReads(), r.ModuleCalls(), base.Run.Name, base.ModuleCalls())
		// Where the runs' work differs (a service's requests), the
		// measured functions' own cost per call of one of them still
		// compares: the probe's inlined code is most of the difference.
		rm, bm := r.Per(PartModule), base.Per(PartModule)
		fmt.Fprintf(w, "  own code per call of a measured function: %.1f instructions, %.3f L1m (%s %.1f, %.3f)\n",
			rm.Ir/rm.Call, rm.L1/rm.Call, base.Run.Name, bm.Ir/bm.Call, bm.L1/bm.Call)
		if nc := r.NewCalls(base); len(nc) > 0 {
			if len(nc) > 8 {
				nc = append(nc[:8], "…")
			}
			fmt.Fprintf(w, "  called more than in %s: %s\n", base.Run.Name, strings.Join(nc, ", "))
		}
		fmt.Fprintf(w, "  %-36s %9s %8s %8s %8s %8s %9s\n", "part", "Ir", "L1m", "of it D1", "LLm", "Bm", "cycles")
		for _, pt := range append(Parts, "total") {
			var d Counts
			if pt == "total" {
				d = r.Total.minus(base.Total)
			} else {
				d = r.Per(pt).minus(base.Per(pt))
			}
			d = d.div(probed)
			if pt != "total" && d.Ir == 0 && d.L1 == 0 && d.LL == 0 && d.Bm == 0 {
				continue
			}
			fmt.Fprintf(w, "  %-36s %9.2f %8.3f %8.3f %8.3f %8.3f %9.2f\n", pt, d.Ir, d.L1, d.D1, d.LL, d.Bm, d.Cycles())
		}
		fmt.Fprintln(w)
	}
}
