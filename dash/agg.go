package dash

import (
	"cmp"
	"math"
	"slices"

	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/tracecontext"
	"github.com/tigrisgo/tigris/runtime/writer"
	"github.com/tigrisgo/tigris/traceconv"
)

// agg summarizes recorded calls, call tree by call tree: per function the
// counts, a latency histogram, totals and a series over time buckets; and a
// few call trees to draw (the slowest and the latest). It serves a trace
// file (the whole run) and a live program's recent records alike. Memory
// grows with the functions, never with the records: the buckets lie on a
// grid of a power of ten nanoseconds, ten of them are merged into one when
// the span outgrows them, and the trees kept are bounded. finish merges them
// once more into the windows the page shows: a round width (1, 2 or 5 times a
// power of ten) that gives at most windows of them, so a short run gets as
// many points as a long one.
type agg struct {
	keep     int // trees kept of each kind
	maxNodes int // nodes kept of one tree
	windows  int // most windows shown; the grid holds fineBuckets times as many
	buckets  int // most buckets on the grid while reading

	funcs  []*funcAcc
	byFunc map[traceconv.Func]int
	byDef  map[*writer.ProbeDef]int

	width int64 // bucket width, ns; 0 until the first record
	base  int64 // bucket 0 is [base·width, (base+1)·width) of wall time
	start int64 // wall time of bucket 0: base·width
	used  int   // buckets used, from 0

	first, last int64 // wall: earliest entry, latest exit
	calls       int64
	header      *writer.Header

	// The trees kept, as candidates while reading and as keptTrees after
	// finish: the slowest by duration, longest first, and the latest in
	// completion order, oldest first.
	slowC, lateC    []candidate
	slowest, latest []*keptTree
}

// funcAcc accumulates one function's calls.
type funcAcc struct {
	fn             traceconv.Func
	calls          uint64
	errors, panics uint64
	incl           hist
	time           sums // of the inclusive durations, for the standard deviation
	inclNs, exclNs float64
	size           sums // result sizes of the calls that reported one
	series         []bucket
}

// sums are the count, sum and sum of squares of some values: enough for a
// mean and a variance, and mergeable.
type sums struct {
	n       uint64
	sum, sq float64
}

func (s *sums) add(v float64) { s.n++; s.sum += v; s.sq += v * v }
func (s *sums) merge(o sums)  { s.n += o.n; s.sum += o.sum; s.sq += o.sq }

func (s sums) mean() float64 {
	if s.n == 0 {
		return 0
	}
	return s.sum / float64(s.n)
}

func (s sums) sd() float64 {
	if s.n < 2 {
		return 0
	}
	v := (s.sq - s.sum*s.sum/float64(s.n)) / float64(s.n-1)
	return math.Sqrt(max(v, 0))
}

// bucket is one function's calls that ended in one time bucket.
type bucket struct {
	time, size     sums
	errors, panics uint64
}

func (b *bucket) merge(o bucket) {
	b.time.merge(o.time)
	b.size.merge(o.size)
	b.errors += o.errors
	b.panics += o.panics
}

// keptTree is a call tree kept to be drawn: its nodes in execution order,
// each naming its function by index into agg.funcs.
type keptTree struct {
	ID        uint64 // unique across the input's streams
	Stream    int
	Raw       uint64 // the process's own trace id
	Start     int64  // wall ns
	Dur       int64
	Calls     int  // every call of the tree
	Truncated bool // Nodes holds only the first maxNodes calls
	Errors    int
	Panics    int
	GID       uint64
	TraceID   string // the W3C trace id of the request trace it joined, "" if none
	Nodes     []keptNode
}

type keptNode struct {
	Fn      int32
	Parent  int32 // -1 for a root
	Depth   int32
	Missing int32 // call levels without records above this one
	Start   int64 // ns from the tree's start
	Dur     int64
	Self    int64
	Flags   writer.Flags
}

func newAgg(keep, maxNodes, windows int) *agg {
	return &agg{keep: keep, maxNodes: maxNodes, windows: windows, buckets: fineBuckets * windows, byFunc: map[traceconv.Func]int{}, byDef: map[*writer.ProbeDef]int{}}
}

// firstWidth is the first time bucket's width; it grows tenfold as the span
// outgrows the buckets. fineBuckets is how many buckets the grid has per
// window shown: enough that the windows finish makes of them are round.
const (
	firstWidth  = int64(1)
	fineBuckets = 5
)

// add takes one call tree in. The tree itself is kept only while it is
// among the latest or the slowest; finish turns those into keptTrees.
func (a *agg) add(t *traceconv.Tree) {
	tr := t.Trace
	if len(tr.Nodes) == 0 {
		return
	}
	if a.header == nil && t.Header != nil {
		a.header = t.Header
	}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range tr.Nodes {
		n := &tr.Nodes[i]
		r := &n.Record
		f := a.funcs[a.funcOf(t, n)]
		out := t.Wall(r.TOut)
		lo, hi = min(lo, out-(r.TOut-r.TIn)), max(hi, out)
		d := int64(n.Inclusive)
		f.calls++
		f.incl.add(d)
		f.time.add(float64(d))
		f.inclNs += float64(d)
		f.exclNs += float64(n.Exclusive)
		b := a.bucketOf(out, f)
		b.time.add(float64(d))
		if r.Flags&writer.FlagError != 0 {
			f.errors++
			b.errors++
		}
		if r.Flags&writer.FlagPanic != 0 {
			f.panics++
			b.panics++
		}
		if r.Flags&writer.FlagSize != 0 {
			f.size.add(float64(r.Size))
			b.size.add(float64(r.Size))
		}
	}
	a.calls += int64(len(tr.Nodes))
	if a.first == 0 || lo < a.first {
		a.first = lo
	}
	a.last = max(a.last, hi)
	a.keepTree(candidate{tree: *t, start: lo, dur: hi - lo})
}

// funcOf is the index in a.funcs of a node's function. Definitions are
// looked up by pointer, so a record costs no hashing of its signature.
func (a *agg) funcOf(t *traceconv.Tree, n *writer.Node) int {
	d := t.Def(n)
	if d != nil {
		if i, ok := a.byDef[d]; ok {
			return i
		}
	}
	i := a.funcIndex(t.Func(n))
	if d != nil {
		a.byDef[d] = i
	}
	return i
}

// candidate is a call tree that may be kept.
type candidate struct {
	tree       traceconv.Tree
	start, dur int64
}

func (a *agg) funcIndex(fn traceconv.Func) int {
	if i, ok := a.byFunc[fn]; ok {
		return i
	}
	i := len(a.funcs)
	a.byFunc[fn] = i
	a.funcs = append(a.funcs, &funcAcc{fn: fn})
	return i
}

// bucketOf is f's bucket of the instant at (wall ns), widening the buckets
// when at lies beyond the last, and adding buckets in front when it lies
// before the first (the calls of a call tree end before its root, which may
// come first). Calls are bucketed by their end, the order in which the
// monitor writes them.
func (a *agg) bucketOf(at int64, f *funcAcc) *bucket {
	if a.width == 0 {
		a.width, a.base, a.start = firstWidth, at/firstWidth, at
	}
	i := floorDiv(at, a.width) - a.base
	for i < 0 || i >= int64(a.buckets) {
		switch {
		case i < 0 && int64(a.used)-i <= int64(a.buckets):
			// Room in front: half of what is free beyond what is needed, so
			// that calls ending a little earlier each time do not shift
			// every series each time. What stays empty is trimmed.
			a.shift(-i + (int64(a.buckets)-int64(a.used)+i)/2)
		case i >= int64(a.buckets) && a.trim() > 0:
		default:
			a.widen(10)
		}
		i = floorDiv(at, a.width) - a.base
	}
	a.used = max(a.used, int(i)+1)
	if int(i) >= len(f.series) {
		f.series = slices.Grow(f.series, int(i)+1-len(f.series))[:i+1]
	}
	return &f.series[i]
}

// floorDiv is a/b rounded down (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// shift puts k empty buckets in front of the first.
func (a *agg) shift(k int64) {
	for _, f := range a.funcs {
		if len(f.series) > 0 {
			f.series = append(make([]bucket, k, int(k)+len(f.series)), f.series...)
		}
	}
	a.base -= k
	a.start = a.base * a.width
	a.used += int(k)
}

// trim drops the empty buckets in front of the first call, and says how
// many.
func (a *agg) trim() int {
	lead := a.used
	for _, f := range a.funcs {
		for i := 0; i < len(f.series) && i < lead; i++ {
			if f.series[i].time.n > 0 {
				lead = i
				break
			}
		}
	}
	if lead == a.used {
		return 0
	}
	for _, f := range a.funcs {
		f.series = f.series[min(lead, len(f.series)):]
	}
	a.base += int64(lead)
	a.start = a.base * a.width
	a.used -= lead
	return lead
}

// widen makes the buckets factor times wider, merging the buckets that fall
// into one on the wider grid.
func (a *agg) widen(factor int64) {
	base := floorDiv(a.base, factor)
	at := func(i int) int { return int(floorDiv(a.base+int64(i), factor) - base) }
	for _, f := range a.funcs {
		s := f.series
		if len(s) == 0 {
			continue
		}
		// In place: bucket i goes to at(i) <= i, after the bucket that was
		// there has gone.
		for i := range s {
			if j := at(i); i == 0 || j != at(i-1) {
				s[j] = s[i]
			} else {
				s[j].merge(s[i])
			}
		}
		n := at(len(s)-1) + 1
		clear(s[n:])
		f.series = s[:n]
	}
	if a.used > 0 {
		a.used = at(a.used-1) + 1
	}
	a.width *= factor
	a.base = base
	a.start = a.base * a.width
}

// windowed turns the grid into the windows the page shows: the empty
// buckets in front go, and the buckets are merged into the narrowest round
// windows (1, 2 or 5 times a power of ten) of which at most a.windows cover
// the span.
func (a *agg) windowed() {
	if a.used == 0 {
		return
	}
	a.trim()
	for _, factor := range []int64{1, 2, 5, 10, 20, 50, 100} {
		if floorDiv(a.base+int64(a.used)-1, factor)-floorDiv(a.base, factor)+1 <= int64(a.windows) {
			if factor > 1 {
				a.widen(factor)
			}
			return
		}
	}
}

// keepTree keeps c if it is among the slowest or the latest.
func (a *agg) keepTree(c candidate) {
	if a.keep <= 0 {
		return
	}
	if len(a.lateC) == a.keep {
		copy(a.lateC, a.lateC[1:])
		a.lateC = a.lateC[:a.keep-1]
	}
	a.lateC = append(a.lateC, c)
	if len(a.slowC) == a.keep && c.dur <= a.slowC[a.keep-1].dur {
		return
	}
	i, _ := slices.BinarySearchFunc(a.slowC, c, func(x, y candidate) int { return -cmp.Compare(x.dur, y.dur) })
	a.slowC = slices.Insert(a.slowC, i, c)
	if len(a.slowC) > a.keep {
		a.slowC = a.slowC[:a.keep]
	}
}

// kept turns a candidate into the tree the page draws.
func (a *agg) kept(c candidate) *keptTree {
	tr := c.tree.Trace
	kt := &keptTree{ID: c.tree.ID, Stream: c.tree.Stream, Raw: tr.ID, Calls: len(tr.Nodes), Start: c.start, Dur: c.dur}
	if tr.Remote != nil {
		kt.TraceID = tracecontext.FormatTraceID(tr.Remote.TraceID)
	}
	index := make(map[*writer.Node]int32, min(len(tr.Nodes), a.maxNodes))
	for i := range tr.Nodes {
		n := &tr.Nodes[i]
		r := &n.Record
		if r.Flags&writer.FlagError != 0 {
			kt.Errors++
		}
		if r.Flags&writer.FlagPanic != 0 {
			kt.Panics++
		}
		if kt.GID == 0 {
			kt.GID = r.GID
		}
		if len(kt.Nodes) == a.maxNodes {
			kt.Truncated = true
			continue
		}
		kn := keptNode{Fn: int32(a.funcOf(&c.tree, n)), Parent: -1, Missing: int32(n.Missing),
			Start: c.tree.Wall(r.TIn) - c.start, Dur: int64(n.Inclusive), Self: int64(n.Exclusive), Flags: r.Flags}
		if p, ok := index[n.Parent]; ok && n.Parent != nil {
			kn.Parent = p
			kn.Depth = kt.Nodes[p].Depth + 1
		}
		index[n] = int32(len(kt.Nodes))
		kt.Nodes = append(kt.Nodes, kn)
	}
	return kt
}

// finish ends the input: the summaries are read-only from now on, and
// safe to read from several goroutines.
func (a *agg) finish() {
	for _, f := range a.funcs {
		f.incl.finish()
	}
	a.windowed()
	byID := map[uint64]*keptTree{}
	conv := func(cs []candidate) []*keptTree {
		var out []*keptTree
		for _, c := range cs {
			kt := byID[c.tree.ID]
			if kt == nil {
				kt = a.kept(c)
				byID[c.tree.ID] = kt
			}
			out = append(out, kt)
		}
		return out
	}
	a.slowest, a.latest = conv(a.slowC), conv(a.lateC)
	a.slowC, a.lateC = nil, nil
}

// tree returns the kept tree with this id, or nil.
func (a *agg) tree(id uint64) *keptTree {
	for _, ts := range [][]*keptTree{a.slowest, a.latest} {
		for _, t := range ts {
			if t.ID == id {
				return t
			}
		}
	}
	return nil
}

// stats are the functions' statistics as the monitor's coarse statistics
// would have counted the recorded calls between buckets from and to
// (exclusive; 0, a.used for all), with ids 1, 2, ... in the order of
// a.funcs: the input of an analysis.
func (a *agg) stats(from, to int) []monitor.Stats {
	span := float64(to-from) * float64(a.width)
	if from == 0 && to >= a.used {
		span = float64(a.last - a.first)
	}
	out := make([]monitor.Stats, len(a.funcs))
	for i, f := range a.funcs {
		var b bucket
		for j := from; j < to && j < len(f.series); j++ {
			b.merge(f.series[j])
		}
		s := monitor.Stats{
			ID: uint32(i + 1), Signature: f.fn.Signature, Mode: "fine",
			Count: b.time.n, MeanNs: b.time.mean(), StdDevNs: b.time.sd(),
			Errors: b.errors, Panics: b.panics,
			ResultSizeMean: b.size.mean(), ResultSizeSD: b.size.sd(), Sized: b.size.n,
		}
		if s.Count > 0 && span > 0 {
			s.InterArrivalNs = span / float64(s.Count)
			s.Concurrency = float64(s.Count) / span * s.MeanNs
		}
		out[i] = s
	}
	return out
}
