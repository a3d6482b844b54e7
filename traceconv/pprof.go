package traceconv

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// Sample types of the profiles Profile builds, in the order of Sample.Value.
// Exclusive is the default: pprof's flat column is then a function's own time and
// its cum column the time of everything below it, as in a CPU profile, and a flame
// graph's widths add up.
const (
	SampleCalls     = "calls"     // count: calls that ended at the sample's path
	SampleInclusive = "inclusive" // nanoseconds: those calls' inclusive time
	SampleExclusive = "exclusive" // nanoseconds: those calls' exclusive time
)

// unrecordedName names the frame that stands for call levels without a record
// (sampled out, dropped, not instrumented) between a call and its recorded parent.
const unrecordedName = "(unrecorded calls)"

// elidedName names the frame that stands for the middle of a call path deeper
// than Options.MaxFrames.
const elidedName = "(elided calls)"

// createdBy names the frame under which a linked trace's calls are: the
// function whose go statement started the goroutine, in the words of Go's
// tracebacks ("created by example.com/shop.(*Server).Serve"). A frame of its
// own, so the function's own flat and cum times stay its own.
func createdBy(fn string) string { return "(created by " + fn + ")" }

// Profile reads r and builds a pprof profile of its call trees: one sample per
// distinct call path (root to callee), whose values are the calls that ended at
// that path, their inclusive and their exclusive nanoseconds (SampleCalls,
// SampleInclusive, SampleExclusive; the default is SampleExclusive). The calls
// of a linked trace (a goroutine a go statement of a traced call started) are
// under a frame "(created by F)", F the function of the go statement. Functions are
// named as Go's symbol tables name them ("example.com/shop.(*Store).Find",
// "example.com/shop.Map[...]"), so go tool pprof shows them as it shows Go
// functions; the whole signature is the system name, with the file and line of
// the probe definition.
// Memory grows with the number of distinct paths, not with the records; a path
// deeper than Options.MaxFrames is shortened (its middle frames elided) so that
// a deep recursion costs memory linear in its depth.
func Profile(r *writer.Reader, opt Options) (*profile.Profile, Report, error) {
	var rep Report
	b := newProfileBuilder(opt.withDefaults().MaxFrames)
	err := scanTrees(r, opt, &rep, b.trace, nil)
	if err != nil {
		return nil, rep, err
	}
	return b.profile(&rep), rep, nil
}

// writeProfile is Pprof's Convert: the profile, gzip-compressed protobuf.
func writeProfile(w io.Writer, r *writer.Reader, opt Options) (Report, error) {
	p, rep, err := Profile(r, opt)
	if err != nil {
		return rep, err
	}
	if err := p.Write(w); err != nil {
		return rep, fmt.Errorf("writing the profile: %w", err)
	}
	return rep, nil
}

// pathNode is one distinct call path: the path of its parent plus one function.
type pathNode struct {
	fn                int // index into profileBuilder.funcs
	calls, incl, excl int64
	kids              []*pathNode
	index             map[int]*pathNode // by fn, once kids is long
}

func (n *pathNode) child(fn int) *pathNode {
	if n.index != nil {
		if c := n.index[fn]; c != nil {
			return c
		}
	} else {
		for _, c := range n.kids {
			if c.fn == fn {
				return c
			}
		}
	}
	c := &pathNode{fn: fn}
	n.kids = append(n.kids, c)
	if n.index != nil {
		n.index[fn] = c
	} else if len(n.kids) > 16 {
		n.index = make(map[int]*pathNode, len(n.kids))
		for _, k := range n.kids {
			n.index[k.fn] = k
		}
	}
	return c
}

// funcKey is a profile function: its Go symbol name (Name), the whole
// signature (SystemName) and where it is defined.
type funcKey struct {
	name, system, file string
	line               int
}

type profileBuilder struct {
	root       pathNode
	funcs      []funcKey
	byKey      map[funcKey]int
	unrecorded int
	binary     string
	start, end int64 // wall time span of the calls, Unix ns
	maxFrames  int
	stack      []pathItem // add's walk, kept for the next trace
}

func newProfileBuilder(maxFrames int) *profileBuilder {
	b := &profileBuilder{byKey: make(map[funcKey]int), start: math.MaxInt64, end: math.MinInt64, maxFrames: maxFrames}
	b.unrecorded = b.function(funcKey{name: unrecordedName, system: unrecordedName})
	return b
}

// function returns the index of a function, the same for equal keys across streams.
func (b *profileBuilder) function(k funcKey) int {
	i, ok := b.byKey[k]
	if !ok {
		i = len(b.funcs)
		b.funcs = append(b.funcs, k)
		b.byKey[k] = i
	}
	return i
}

func (b *profileBuilder) probeFunc(p *probe) int {
	if p.idx < 0 {
		k := funcKey{name: goSymbol(p.sig), system: p.sig}
		if p.def != nil {
			k.file, k.line = p.def.File, p.def.Line
		}
		p.idx = b.function(k)
	}
	return p.idx
}

func (b *profileBuilder) trace(s *stream, t *writer.Trace) error {
	if b.binary == "" && s.hdr != nil {
		b.binary = s.hdr.Binary
	}
	base := &b.root
	if l := t.Link; l != nil {
		fn := "a traced call"
		if l.Probe != 0 {
			fn = goSymbol(s.probe(l.Probe).sig)
		}
		name := createdBy(fn)
		base = base.child(b.function(funcKey{name: name, system: name}))
	}
	for _, n := range t.Roots {
		b.add(s, base, n)
	}
	return nil
}

// add counts n and its subtree under parent, in the order a recursive walk
// would, with a stack of its own: a trace file can hold a call chain
// millions deep, more than a goroutine's stack holds in recursive calls.
func (b *profileBuilder) add(s *stream, parent *pathNode, n *writer.Node) {
	stack := append(b.stack[:0], pathItem{parent, n})
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		parent, n := it.parent, it.n
		if n.Missing > 0 {
			parent = parent.child(b.unrecorded)
		}
		pn := parent.child(b.probeFunc(s.probe(n.Record.Probe)))
		pn.calls++
		pn.incl += int64(n.Inclusive)
		pn.excl += int64(n.Exclusive)
		b.start = min(b.start, s.wall(n.Record.TIn))
		b.end = max(b.end, s.wall(n.Record.TOut))
		for i := len(n.Children) - 1; i >= 0; i-- {
			stack = append(stack, pathItem{pn, n.Children[i]})
		}
	}
	b.stack = stack
}

// pathItem is a call add has still to count, and the path it is under.
type pathItem struct {
	parent *pathNode
	n      *writer.Node
}

// location adds function fn and its one location to p.
func (b *profileBuilder) location(p *profile.Profile, fn int) *profile.Location {
	k := b.funcs[fn]
	f := &profile.Function{ID: uint64(fn + 1), Name: k.name, SystemName: k.system, Filename: k.file, StartLine: int64(k.line)}
	p.Function = append(p.Function, f)
	l := &profile.Location{ID: uint64(fn + 1), Mapping: p.Mapping[0], Line: []profile.Line{{Function: f, Line: int64(k.line)}}}
	p.Location = append(p.Location, l)
	return l
}

func (b *profileBuilder) profile(rep *Report) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: SampleCalls, Unit: "count"},
			{Type: SampleInclusive, Unit: "nanoseconds"},
			{Type: SampleExclusive, Unit: "nanoseconds"},
		},
		DefaultSampleType: SampleExclusive,
		PeriodType:        &profile.ValueType{Type: SampleExclusive, Unit: "nanoseconds"},
		Period:            1,
	}
	if b.start <= b.end {
		p.TimeNanos, p.DurationNanos = b.start, b.end-b.start
	}
	// One mapping that says functions and lines are known, so pprof does not try
	// to symbolize the addresses (there are none).
	m := &profile.Mapping{ID: 1, File: b.binary, HasFunctions: true, HasFilenames: true, HasLineNumbers: true}
	p.Mapping = []*profile.Mapping{m}
	locs := make([]*profile.Location, len(b.funcs))
	for i := range b.funcs {
		locs[i] = b.location(p, i)
	}
	b.samples(p, locs, rep)
	p.Comments = append(p.Comments, fmt.Sprintf("tigris trace of %s: %d records, %d call tree(s)", nameOr(filepath.Base(b.binary), "a program"), rep.Records, rep.Traces))
	for _, w := range rep.Warnings() {
		p.Comments = append(p.Comments, "warning: "+w)
	}
	return p
}

// samples adds one sample per path node with calls, in depth-first order. A
// path of at most maxFrames frames is the sample's stack as it is. A deeper one
// keeps its outermost head and innermost tail frames around one elided frame,
// and deep paths that then have the same stack share one sample: pprof stacks
// cannot share prefixes, so full stacks would cost the sum of all depths,
// quadratic in the depth of a recursion, where this costs maxFrames per path.
func (b *profileBuilder) samples(p *profile.Profile, locs []*profile.Location, rep *Report) {
	head := b.maxFrames / 2
	tail := b.maxFrames - head - 1
	var elided *profile.Location
	merged := make(map[string]*profile.Sample) // deep samples by their stack
	var key []byte
	var path []int // function indexes, root first
	// An explicit stack of iterators instead of recursion: the walk's own
	// memory stays one word per level however deep the paths go.
	type frame struct {
		n    *pathNode
		next int // index of the next kid to visit
	}
	todo := []frame{{n: &b.root}}
	for len(todo) > 0 {
		f := &todo[len(todo)-1]
		if f.next == len(f.n.kids) {
			todo = todo[:len(todo)-1]
			if len(todo) > 0 {
				path = path[:len(path)-1]
			}
			continue
		}
		n := f.n.kids[f.next]
		f.next++
		todo = append(todo, frame{n: n})
		path = append(path, n.fn)
		if n.calls == 0 {
			continue
		}
		v := []int64{n.calls, n.incl, n.excl}
		if len(path) <= b.maxFrames {
			stack := make([]*profile.Location, len(path)) // leaf first
			for i, fn := range path {
				stack[len(path)-1-i] = locs[fn]
			}
			p.Sample = append(p.Sample, &profile.Sample{Location: stack, Value: v})
			continue
		}
		rep.Elided++
		if elided == nil {
			if fn := b.function(funcKey{name: elidedName, system: elidedName}); fn < len(locs) {
				elided = locs[fn] // a probe of that name, improbable as it is
			} else {
				elided = b.location(p, fn)
			}
		}
		stack := make([]*profile.Location, 0, b.maxFrames)
		key = key[:0]
		for i := len(path) - 1; i >= len(path)-tail; i-- {
			stack = append(stack, locs[path[i]])
			key = binary.AppendUvarint(key, uint64(path[i]))
		}
		stack = append(stack, elided)
		for i := head - 1; i >= 0; i-- {
			stack = append(stack, locs[path[i]])
			key = binary.AppendUvarint(key, uint64(path[i]))
		}
		if s := merged[string(key)]; s != nil {
			for i := range v {
				s.Value[i] += v[i]
			}
			continue
		}
		s := &profile.Sample{Location: stack, Value: v}
		merged[string(key)] = s
		p.Sample = append(p.Sample, s)
	}
}

func nameOr(s, alt string) string {
	if s == "" || s == "." || strings.Trim(s, "/") == "" {
		return alt
	}
	return s
}

// goSymbol is a function's name as Go writes it in its symbol tables, tracebacks
// and CPU profiles: the signature without parameters and results,
// "example.com/shop.(*Store).Find", "example.com/shop.Map[...]",
// "example.com/shop.(*Stack[...]).Pop". pprof leaves such a name alone, where it
// would simplify a whole signature as if it were demangled C++ (cutting every
// parenthesised part: "shop..FindAll []string"). The receiver-first form of old
// traces, "func (*example.com/shop.Store).Find(int)", is turned into it; a
// signature that does not parse is kept whole.
func goSymbol(sig string) string {
	parts, ok := splitSignature(sig)
	if !ok || parts.Name == "" {
		return sig
	}
	name := parts.Name
	if name[0] != '(' {
		return name
	}
	end := matching(name, 0)
	if end < 0 || end+1 >= len(name) || name[end+1] != '.' {
		return name
	}
	recv, method := name[1:end], name[end+2:]
	star := ""
	if strings.HasPrefix(recv, "*") {
		star, recv = "*", recv[1:]
	}
	typ := recv
	if i := strings.IndexByte(typ, '['); i >= 0 {
		typ = typ[:i] // the package path ends before the type's arguments
	}
	dot := strings.LastIndexByte(typ, '.')
	if dot < 0 {
		return name
	}
	pkg, typeName := recv[:dot], recv[dot+1:]
	if star == "" {
		return pkg + "." + typeName + "." + method
	}
	return pkg + ".(" + star + typeName + ")." + method
}
