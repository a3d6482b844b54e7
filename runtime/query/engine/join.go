package engine

import (
	"math"
	"unsafe"

	"github.com/tigrisgo/tigris/runtime/query"
)

// MaxJoinBuffer bounds the tuples a window join keeps per side: the oldest
// (by time) go first and are counted (Stats.JoinDropped).
const MaxJoinBuffer = 100000

// joiner pairs tuples of two sources whose times lie within a window of each
// other (CQL's window join, EndoScope's WINDOW JOIN). Each side keeps the
// tuples the other side may still pair with: those whose time plus the
// window is not below the watermark.
//
// Its work per tuple does not grow with how full the window is, beyond the
// pairs it makes. Each side keeps its tuples ordered by time (ties in
// arrival order) in a ring, so a tuple looks only at the other side's
// tuples whose times match (found from the ring's ends, in steps that grow
// with the logarithm of the distance from the newest), eviction takes the
// oldest from the front, and a full side drops its oldest in one step. A
// tuple that arrives out of order is moved into place: a copy of the
// indices of the tuples younger than it. When WHERE holds a conjunct
// left = right whose sides each read one source (a.goroutine =
// b.goroutine), each side also keeps a ring per value of its side of it, and
// a tuple looks only at the ring of its own value: the pairs it skips are
// those the conjunct rejects. A pair is tried once, when the later of its
// two tuples arrives, so the pairs tried are the pairs made
// (Stats.JoinPairs).
type joiner struct {
	within   int64
	followed int // 0, 1 (left first) or 2 (right first)
	max      int // MaxJoinBuffer, smaller in tests
	side     [2]joinSide
	ents     []jentry // the tuples kept, both sides; free slots have seq 0
	free     []int32
	seq      uint64
	// key are the two sides of the equality the join is indexed by, nil
	// for none; keyType is their type. A value of another type (none
	// should come) turns the index off for good: the rings of all tuples
	// still hold everything.
	key     [2]*query.Node
	keyType query.Type
	env     env
	stats   *Stats
	ctl     *control
}

// joinSide is what one side keeps: all its tuples, and per key value those
// with that value.
type joinSide struct {
	all   ring
	byKey map[jkey]*ring
}

type jentry struct {
	t     Tuple
	seq   uint64
	key   jkey
	keyed bool // t is in a ring of byKey
}

// jkey is a key value: I for bool, int, duration and time, S for strings
// (the two sides' types are the same).
type jkey struct {
	i int64
	s string
}

func newJoiner(q *query.Query, st *Stats, ctl *control) *joiner {
	j := &joiner{within: int64(q.Join.Within), followed: q.Join.Followed, max: MaxJoinBuffer, stats: st, ctl: ctl}
	if k := joinKey(q); k != nil {
		j.key[0], j.key[1] = k.Kids[0], k.Kids[1]
		if sourcesOf(k.Kids[0]) != 1 {
			j.key[0], j.key[1] = k.Kids[1], k.Kids[0]
		}
		j.keyType = k.Kids[0].Type
		for s := range j.side {
			j.side[s].byKey = map[jkey]*ring{}
		}
	}
	return j
}

// joinKey finds the first conjunct of q's WHERE that equates an expression
// of one source with one of the other, both of a type compared exactly
// (bool, int, string, duration, time; not float), or nil.
func joinKey(q *query.Query) *query.Node {
	if q.Where == nil {
		return nil
	}
	for _, c := range conjuncts(q.Where) {
		if c.Kind != query.NCmp || c.Op != "=" {
			continue
		}
		a, b := c.Kids[0], c.Kids[1]
		if a.Type != b.Type {
			continue
		}
		switch a.Type {
		case query.Bool, query.Int, query.String, query.Duration, query.Time:
		default:
			continue
		}
		if sa, sb := sourcesOf(a), sourcesOf(b); sa|sb == 3 && sa != 3 && sb != 3 && sa != 0 && sb != 0 {
			return c
		}
	}
	return nil
}

// sourcesOf is the set of sources n reads, as bits (1: source 0, 2:
// source 1).
func sourcesOf(n *query.Node) int {
	set := 0
	walk(n, func(k *query.Node) {
		switch k.Kind {
		case query.NCol:
			set |= 1 << uint(k.Src)
		case query.NMatches:
			set |= 1 << uint(k.Kids[0].Src)
		}
	})
	return set
}

// keyOf evaluates side s's key on t: ok false for a null (it equals
// nothing).
func (j *joiner) keyOf(s int, t *Tuple) (k jkey, ok bool) {
	e := &j.env
	e.tup[s] = t
	v := eval(j.key[s], e)
	e.tup[s] = nil
	switch {
	case v.T == query.Null:
		return k, false
	case v.T != j.keyType:
		j.unindex()
		return k, false
	case v.T == query.String:
		return jkey{s: v.S}, true
	}
	return jkey{i: v.I}, true
}

// unindex drops the key index: from now on tuples look at all of the other
// side.
func (j *joiner) unindex() {
	j.key = [2]*query.Node{}
	for s := range j.side {
		for k, r := range j.side[s].byKey {
			j.ctl.grow(-keyRingBytes(k, r))
		}
		j.side[s].byKey = nil
	}
	for i := range j.ents {
		j.ents[i].keyed = false
	}
}

// span is the range of times of the other side's tuples that a tuple of side
// s at time x pairs with: d = right − left within the window, d ≥ 0 when the
// left comes first (followed 1), d ≤ 0 when the right does (followed 2).
func (j *joiner) span(s int, x int64) (lo, hi int64) {
	lo, hi = sub(x, j.within), add(x, j.within)
	if j.followed == 0 {
		return lo, hi
	}
	if (s == 0) == (j.followed == 1) {
		return x, hi // the other side's comes after
	}
	return lo, x
}

func add(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func sub(a, b int64) int64 {
	if a < math.MinInt64+b {
		return math.MinInt64
	}
	return a - b
}

// add pairs t, of side s, with the other side's tuples and keeps it.
func (j *joiner) add(s int, t *Tuple, pair func(l, r *Tuple)) {
	var k jkey
	keyed := false
	if j.key[s] != nil {
		k, keyed = j.keyOf(s, t)
	}
	o := &j.side[1-s]
	var r *ring
	switch {
	case j.key[s] == nil:
		r = &o.all
	case keyed:
		r = o.byKey[k]
	}
	if r != nil {
		lo, hi := j.span(s, t.Time)
		for i := r.first(j.ents, lo); i < len(r.idx); i++ {
			e := &j.ents[r.idx[i]]
			if e.t.Time > hi || j.ctl.halt() {
				break
			}
			j.stats.JoinPairs++
			if s == 0 {
				pair(t, &e.t)
			} else {
				pair(&e.t, t)
			}
		}
	}
	me := &j.side[s]
	if me.all.len() >= j.max {
		j.stats.JoinDropped++
		j.drop(s)
	}
	x := j.alloc()
	j.ents[x] = jentry{t: copyTuple(t), seq: j.seq, key: k, keyed: keyed && j.key[s] != nil}
	grown := valsBytes(j.ents[x].t.Vals) + me.all.insert(j.ents, x)
	if j.ents[x].keyed {
		kr := me.byKey[k]
		if kr == nil {
			kr = &ring{}
			me.byKey[k] = kr
			grown += keyRingBytes(k, kr)
		}
		grown += kr.insert(j.ents, x)
	}
	j.ctl.grow(grown)
}

// keyRingBytes is what the index holds for key k besides r's buffer.
func keyRingBytes(k jkey, r *ring) int64 {
	return mapEntryBytes + int64(len(k.s)) + ringBytes + 4*int64(cap(r.buf))
}

var ringBytes = int64(unsafe.Sizeof(ring{}))

func (j *joiner) alloc() int32 {
	j.seq++
	if n := len(j.free); n > 0 {
		x := j.free[n-1]
		j.free = j.free[:n-1]
		return x
	}
	before := cap(j.ents)
	j.ents = append(j.ents, jentry{})
	if c := cap(j.ents); c != before {
		j.ctl.grow(int64(c-before) * entryBytes)
	}
	return int32(len(j.ents) - 1)
}

// drop forgets side s's oldest tuple, the first of its rings.
func (j *joiner) drop(s int) {
	sd := &j.side[s]
	x := sd.all.pop()
	e := &j.ents[x]
	if e.keyed {
		kr := sd.byKey[e.key]
		kr.pop() // the oldest of the side is the oldest of its key
		if kr.len() == 0 {
			j.ctl.grow(-keyRingBytes(e.key, kr))
			delete(sd.byKey, e.key)
		}
	}
	freed := valsBytes(e.t.Vals)
	*e = jentry{}
	before := cap(j.free)
	j.free = append(j.free, x)
	j.ctl.grow(4*int64(cap(j.free)-before) - freed)
}

// evict forgets the tuples no later tuple can pair with: a later tuple's
// time is at least watermark. The oldest go first, so it stops at the first
// tuple it keeps.
func (j *joiner) evict(watermark int64) {
	for s := range j.side {
		a := &j.side[s].all
		for a.len() > 0 && add(j.ents[a.idx[0]].t.Time, j.within) < watermark {
			j.drop(s)
		}
	}
	if j.side[0].all.len() == 0 && j.side[1].all.len() == 0 && cap(j.ents) > 0 {
		// Both sides are empty: the buffers go, so that what a join holds
		// follows what it keeps, not the most it ever kept.
		n := int64(cap(j.ents))*entryBytes + 4*int64(cap(j.free))
		for s := range j.side {
			n += 4 * int64(cap(j.side[s].all.buf))
			j.side[s].all = ring{}
		}
		j.ents, j.free = nil, nil
		j.ctl.grow(-n)
	}
}

// ring holds indices of entries ordered by time, ties in arrival order
// (their seq): idx is the live part of buf.
type ring struct {
	buf []int32
	idx []int32
}

func (r *ring) len() int { return len(r.idx) }

// pop removes the first (oldest) index.
func (r *ring) pop() int32 {
	x := r.idx[0]
	r.idx = r.idx[1:]
	if len(r.idx) == 0 {
		r.idx = r.buf[:0]
	}
	return x
}

// insert puts entry x after every entry of its time or older: at the end,
// unless it came out of order. It returns the bytes its buffer grew by.
func (r *ring) insert(ents []jentry, x int32) (grown int64) {
	t := ents[x].t.Time
	n := len(r.idx)
	// The first position whose time is after t, searched from the end.
	pos := n - r.fromEnd(ents, func(y int64) bool { return y > t })
	if len(r.idx) == cap(r.idx) {
		// Full: move the live part to the front of a buffer twice its size
		// (or of the same buffer, when most of it is free), so that
		// popping from the front and appending cost O(1) amortized.
		size := 2 * n
		if size < 8 {
			size = 8
		}
		if 2*n <= cap(r.buf) && n > 0 {
			size = cap(r.buf)
		}
		var nb []int32
		if size == cap(r.buf) {
			nb = r.buf[:size]
			copy(nb, r.idx)
		} else {
			nb = make([]int32, size)
			copy(nb, r.idx)
			grown = 4 * int64(size-cap(r.buf))
		}
		r.buf = nb
		r.idx = nb[:n:size]
	}
	r.idx = append(r.idx, 0)
	copy(r.idx[pos+1:], r.idx[pos:n])
	r.idx[pos] = x
	return grown
}

// first is the index of the first entry whose time is lo or later
// (len(r.idx) for none).
func (r *ring) first(ents []jentry, lo int64) int {
	if len(r.idx) == 0 || ents[r.idx[0]].t.Time >= lo {
		return 0
	}
	return len(r.idx) - r.fromEnd(ents, func(y int64) bool { return y >= lo })
}

// fromEnd is how many entries at the end satisfy after (true for a suffix
// of the ring): a gallop back from the end and a binary search, in steps
// that grow with the logarithm of the answer.
func (r *ring) fromEnd(ents []jentry, after func(int64) bool) int {
	n := len(r.idx)
	at := func(k int) int64 { return ents[r.idx[n-1-k]].t.Time } // k-th from the end
	// Find lo < hi with at(lo) after (or lo = -1) and at(hi) not after (or hi = n).
	lo, hi := -1, 0
	for hi < n && after(at(hi)) {
		lo = hi
		hi = 2*hi + 1
	}
	if hi > n {
		hi = n
	}
	for hi-lo > 1 {
		m := int(uint(lo+hi) >> 1)
		if after(at(m)) {
			lo = m
		} else {
			hi = m
		}
	}
	return lo + 1
}
