package service

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/tigrisgo/tigris/examples/petclinic/internal/model"
)

// bootstrapRounds is the number of resamples behind the confidence interval of
// visits per pet: it is what makes the report CPU-heavy.
const bootstrapRounds = 2000

// VisitReport builds the clinic statistics: totals, visits per pet type and per month,
// the ten busiest owners, the mean number of visits per pet with a 95% bootstrap
// confidence interval and the median gap between two visits of a pet. It reads every
// visit and is expensive; the API offers it for occasional use.
func (s *ClinicService) VisitReport(ctx context.Context) (model.VisitReport, error) {
	var r model.VisitReport
	totals, err := s.store.Reports.Totals(ctx)
	if err != nil {
		return r, err
	}
	r.Owners, r.Pets, r.Visits = totals.Owners, totals.Pets, totals.Visits

	counts, err := s.store.Reports.VisitsByTypeAndMonth(ctx)
	if err != nil {
		return r, err
	}
	byType := map[string]*model.TypeVisits{}
	byMonth := map[string]int64{}
	for _, c := range counts {
		t := byType[c.Type]
		if t == nil {
			t = &model.TypeVisits{Type: c.Type}
			byType[c.Type] = t
		}
		t.Visits += c.Visits
		byMonth[c.Month] += c.Visits
	}

	pets, err := s.store.Reports.PetVisits(ctx)
	if err != nil {
		return r, err
	}
	perPet := make([]float64, len(pets))
	ownerVisits := map[int64]*model.OwnerActivity{}
	var gaps []float64
	for i, p := range pets {
		perPet[i] = float64(len(p.Dates))
		t := byType[p.Type]
		if t == nil {
			t = &model.TypeVisits{Type: p.Type}
			byType[p.Type] = t
		}
		t.Pets++
		a := ownerVisits[p.OwnerID]
		if a == nil {
			a = &model.OwnerActivity{OwnerID: p.OwnerID, Name: p.OwnerName}
			ownerVisits[p.OwnerID] = a
		}
		a.Visits += int64(len(p.Dates))
		for j := 1; j < len(p.Dates); j++ {
			if d, ok := daysBetween(p.Dates[j-1], p.Dates[j]); ok {
				gaps = append(gaps, d)
			}
		}
	}

	r.ByType = make([]model.TypeVisits, 0, len(byType))
	for _, t := range byType {
		if r.Visits > 0 {
			t.Share = float64(t.Visits) / float64(r.Visits)
		}
		r.ByType = append(r.ByType, *t)
	}
	slices.SortFunc(r.ByType, func(a, b model.TypeVisits) int {
		return cmp.Or(cmp.Compare(b.Visits, a.Visits), cmp.Compare(a.Type, b.Type))
	})

	r.ByMonth = make([]model.MonthVisits, 0, len(byMonth))
	for m, n := range byMonth {
		r.ByMonth = append(r.ByMonth, model.MonthVisits{Month: m, Visits: n})
	}
	slices.SortFunc(r.ByMonth, func(a, b model.MonthVisits) int { return cmp.Compare(a.Month, b.Month) })

	active := make([]model.OwnerActivity, 0, len(ownerVisits))
	for _, a := range ownerVisits {
		active = append(active, *a)
	}
	slices.SortFunc(active, func(a, b model.OwnerActivity) int {
		return cmp.Or(cmp.Compare(b.Visits, a.Visits), cmp.Compare(a.OwnerID, b.OwnerID))
	})
	r.TopOwners = active[:min(10, len(active))]

	if err := ctx.Err(); err != nil {
		return r, err
	}
	r.VisitsPerPet = bootstrapMean(perPet, bootstrapRounds, uint64(r.Visits))
	r.MedianGapDays = median(gaps)
	return r, nil
}

func daysBetween(from, to string) (float64, bool) {
	a, err1 := time.Parse(model.DateLayout, from)
	b, err2 := time.Parse(model.DateLayout, to)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return b.Sub(a).Hours() / 24, true
}

// bootstrapMean estimates the mean of xs with a 95% percentile bootstrap interval over
// rounds resamples. The resampling is seeded, so equal inputs give equal estimates.
func bootstrapMean(xs []float64, rounds int, seed uint64) model.Estimate {
	if len(xs) == 0 {
		return model.Estimate{}
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	rng := rand.New(rand.NewPCG(seed, uint64(len(xs))))
	means := make([]float64, rounds)
	for r := range means {
		var s float64
		for range xs {
			s += xs[rng.IntN(len(xs))]
		}
		means[r] = s / float64(len(xs))
	}
	sort.Float64s(means)
	return model.Estimate{
		Mean: round(sum/float64(len(xs)), 4),
		Low:  round(means[int(0.025*float64(rounds))], 4),
		High: round(means[int(0.975*float64(rounds))-1], 4),
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}
