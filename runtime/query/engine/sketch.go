package engine

import (
	"math"
	"sort"
)

// quantiles answers percentiles of a group's values. It keeps the values
// themselves up to exactLimit of them, so small groups get exact answers;
// beyond that it turns into a log-bucketed sketch (DDSketch's mapping) whose
// answers are within relativeError of a true value of the data, with memory
// bounded by the values' range, not their number. Both depend only on the
// multiset of values, never on their order, so a query over a live program
// and over the trace of the same run agree.
type quantiles struct {
	exact []float64
	// The sketch: counts of positive and negative values by bucket, and of
	// zeros.
	pos, neg map[int]uint64
	zeros    uint64
	n        uint64
}

const (
	exactLimit    = 1024
	relativeError = 0.005
)

var (
	gamma    = (1 + relativeError) / (1 - relativeError)
	logGamma = math.Log(gamma)
)

func (q *quantiles) add(x float64) {
	if math.IsNaN(x) {
		return
	}
	q.n++
	if q.pos == nil {
		if len(q.exact) < exactLimit {
			q.exact = append(q.exact, x)
			return
		}
		q.pos, q.neg = map[int]uint64{}, map[int]uint64{}
		for _, v := range q.exact {
			q.bucket(v)
		}
		q.exact = nil
	}
	q.bucket(x)
}

func (q *quantiles) bucket(x float64) {
	switch {
	case x > 0:
		q.pos[index(x)]++
	case x < 0:
		q.neg[index(-x)]++
	default:
		q.zeros++
	}
}

func index(x float64) int { return int(math.Ceil(math.Log(x) / logGamma)) }

// value is the representative of bucket i: within relativeError of every
// value in it.
func value(i int) float64 { return 2 * math.Pow(gamma, float64(i)) / (gamma + 1) }

// at returns the value of rank ceil(p·n) (nearest rank), and false for no
// values.
func (q *quantiles) at(p float64) (float64, bool) {
	if q.n == 0 {
		return 0, false
	}
	rank := uint64(math.Ceil(p * float64(q.n)))
	if rank < 1 {
		rank = 1
	}
	if q.pos == nil {
		sort.Float64s(q.exact)
		return q.exact[rank-1], true
	}
	// Negative values first, largest magnitude first; then zeros; then
	// positives.
	seen := uint64(0)
	for _, i := range sortedKeys(q.neg, true) {
		seen += q.neg[i]
		if seen >= rank {
			return -value(i), true
		}
	}
	seen += q.zeros
	if seen >= rank {
		return 0, true
	}
	for _, i := range sortedKeys(q.pos, false) {
		seen += q.pos[i]
		if seen >= rank {
			return value(i), true
		}
	}
	return 0, false // unreachable: the counts add up to n
}

func sortedKeys(m map[int]uint64, desc bool) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	if desc {
		for i, j := 0, len(keys)-1; i < j; i, j = i+1, j-1 {
			keys[i], keys[j] = keys[j], keys[i]
		}
	}
	return keys
}
