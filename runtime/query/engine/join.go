package engine

// MaxJoinBuffer bounds the tuples a window join keeps per side: the oldest
// go first and are counted (Stats.JoinDropped).
const MaxJoinBuffer = 100000

// joiner pairs tuples of two sources whose times lie within a window of each
// other (CQL's window join, EndoScope's WINDOW JOIN). Each side keeps the
// tuples the other side may still pair with: those younger than the
// watermark minus the window.
type joiner struct {
	within   int64
	followed int // 0, 1 (left first) or 2 (right first)
	buf      [2][]Tuple
	stats    *Stats
	ctl      *control
}

// add pairs t, of side s, with the other side's tuples and keeps it.
func (j *joiner) add(s int, t *Tuple, pair func(l, r *Tuple)) {
	other := j.buf[1-s]
	for i := range other {
		if j.ctl.halt() {
			break
		}
		o := &other[i]
		l, r := t, o
		if s == 1 {
			l, r = o, t
		}
		if j.match(l.Time, r.Time) {
			pair(l, r)
		}
	}
	if len(j.buf[s]) >= MaxJoinBuffer {
		j.stats.JoinDropped++
		j.buf[s] = append(j.buf[s][:0], j.buf[s][1:]...)
	}
	j.buf[s] = append(j.buf[s], copyTuple(t))
}

func (j *joiner) match(l, r int64) bool {
	d := r - l
	switch j.followed {
	case 1:
		return d >= 0 && d <= j.within
	case 2:
		return d <= 0 && -d <= j.within
	}
	return d <= j.within && -d <= j.within
}

// evict forgets the tuples no later tuple can pair with: a later tuple's
// time is at least watermark.
func (j *joiner) evict(watermark int64) {
	for s := range j.buf {
		b := j.buf[s]
		k := 0
		for i := range b {
			if b[i].Time+j.within >= watermark {
				b[k] = b[i]
				k++
			}
		}
		for i := k; i < len(b); i++ {
			b[i] = Tuple{}
		}
		j.buf[s] = b[:k]
	}
}
