package loadgen

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
)

// Action is one kind of request a simulated user makes. The set is fixed: each action
// knows how to build its request and what to remember from the answer.
type Action string

// The actions, with the request each makes.
const (
	Health        Action = "health"        // GET  /api/health
	PetTypes      Action = "petTypes"      // GET  /api/pettypes
	Vets          Action = "vets"          // GET  /api/vets
	FindOwners    Action = "findOwners"    // GET  /api/owners?lastName=P, P a random prefix (often one letter, sometimes empty)
	OwnerDetail   Action = "ownerDetail"   // GET  /api/owners/{id} of the user's current owner, or LookupOwner without one
	LookupOwner   Action = "lookupOwner"   // GET  /api/owners/{id}, id random, about 1 in 11 unknown (404)
	UpdateOwner   Action = "updateOwner"   // PUT  /api/owners/{id}, the current owner with a new address or telephone
	RegisterOwner Action = "registerOwner" // POST /api/owners, a new owner becomes the current one
	AddPet        Action = "addPet"        // POST /api/owners/{id}/pets, a new pet of the current owner
	AddVisit      Action = "addVisit"      // POST /api/owners/{id}/pets/{petID}/visits, for a pet of the current owner
	Report        Action = "report"        // GET  /api/reports/visits
)

// Actions lists every action.
var Actions = []Action{Health, PetTypes, Vets, FindOwners, OwnerDetail, LookupOwner,
	UpdateOwner, RegisterOwner, AddPet, AddVisit, Report}

// Step is one row entry of a transition table: go to To with relative weight Weight.
type Step struct {
	To     Action
	Weight float64
}

// Pattern is a navigation pattern: a user starts at Start and, after each request,
// moves to one of the steps listed for its current action in Table, chosen with
// probability proportional to the weights.
type Pattern struct {
	// Name identifies the pattern in statistics.
	Name string
	// Weight is the relative chance that a new user follows this pattern (0 means 1).
	Weight float64
	// Start is the first action of a user.
	Start Action
	// Table is the transition table. Every action reachable from Start must have a
	// row with at least one step; weights must be positive.
	Table map[Action][]Step
}

// DefaultPatterns returns the three navigation patterns of the PetClinic workload:
//
//   - "browse": a visitor looking around — the vet list most of all, pet types, owner
//     searches and details, owners looked up by id (some unknown) and, rarely, the
//     statistics report.
//   - "maintenance": the front desk keeping records: find an owner, open it, update
//     it, book a visit for one of its pets.
//   - "newclient": a first visit: register the owner, add a pet (or two), book a
//     visit, check the record.
//
// Each call returns fresh values the caller may change.
func DefaultPatterns() []Pattern {
	return []Pattern{
		{
			Name: "browse", Weight: 2, Start: Vets,
			Table: map[Action][]Step{
				Vets:        {{Vets, 20}, {PetTypes, 15}, {FindOwners, 30}, {LookupOwner, 20}, {Health, 10}, {Report, 5}},
				PetTypes:    {{Vets, 50}, {FindOwners, 30}, {Health, 20}},
				FindOwners:  {{OwnerDetail, 60}, {FindOwners, 20}, {Vets, 20}},
				OwnerDetail: {{Vets, 50}, {FindOwners, 30}, {LookupOwner, 20}},
				LookupOwner: {{Vets, 50}, {LookupOwner, 30}, {FindOwners, 20}},
				Health:      {{Vets, 100}},
				Report:      {{Vets, 100}},
			},
		},
		{
			Name: "maintenance", Weight: 1, Start: FindOwners,
			Table: map[Action][]Step{
				FindOwners:  {{OwnerDetail, 80}, {FindOwners, 20}},
				OwnerDetail: {{UpdateOwner, 40}, {AddVisit, 40}, {Vets, 20}},
				UpdateOwner: {{AddVisit, 50}, {OwnerDetail, 30}, {FindOwners, 20}},
				AddVisit:    {{OwnerDetail, 40}, {FindOwners, 40}, {Vets, 20}},
				Vets:        {{FindOwners, 100}},
			},
		},
		{
			Name: "newclient", Weight: 1, Start: RegisterOwner,
			Table: map[Action][]Step{
				RegisterOwner: {{AddPet, 90}, {OwnerDetail, 10}},
				AddPet:        {{AddVisit, 60}, {AddPet, 20}, {OwnerDetail, 20}},
				AddVisit:      {{OwnerDetail, 50}, {Vets, 30}, {RegisterOwner, 20}},
				OwnerDetail:   {{RegisterOwner, 40}, {Vets, 30}, {PetTypes, 30}},
				Vets:          {{RegisterOwner, 50}, {PetTypes, 50}},
				PetTypes:      {{RegisterOwner, 100}},
			},
		},
	}
}

// clonePatterns copies ps and their tables, so a run is not affected by later changes.
func clonePatterns(ps []Pattern) []Pattern {
	out := slices.Clone(ps)
	for i := range out {
		out[i].Table = maps.Clone(out[i].Table)
		for a, steps := range out[i].Table {
			out[i].Table[a] = slices.Clone(steps)
		}
	}
	return out
}

// validatePatterns checks that there is a pattern, that names are unique and that
// every table is complete, listing every problem.
func validatePatterns(ps []Pattern) error {
	if len(ps) == 0 {
		return errors.New("loadgen: no navigation pattern")
	}
	var errs []error
	seen := map[string]bool{}
	for i, p := range ps {
		name := p.Name
		if name == "" {
			errs = append(errs, fmt.Errorf("loadgen: pattern %d has no name", i))
			name = fmt.Sprintf("#%d", i)
		} else if seen[name] {
			errs = append(errs, fmt.Errorf("loadgen: pattern %q: duplicate name", name))
		}
		seen[name] = true
		if p.Weight < 0 {
			errs = append(errs, fmt.Errorf("loadgen: pattern %q: negative weight %g", name, p.Weight))
		}
		errs = append(errs, p.check(name)...)
	}
	return errors.Join(errs...)
}

func (p Pattern) check(name string) []error {
	var errs []error
	known := func(a Action) bool { return slices.Contains(Actions, a) }
	if !known(p.Start) {
		return []error{fmt.Errorf("loadgen: pattern %q: unknown start action %q", name, p.Start)}
	}
	// Walk from Start; report each problem once, in a stable order.
	visited := map[Action]bool{p.Start: true}
	queue := []Action{p.Start}
	for len(queue) > 0 {
		a := queue[0]
		queue = queue[1:]
		steps := p.Table[a]
		if len(steps) == 0 {
			errs = append(errs, fmt.Errorf("loadgen: pattern %q: action %q has no next step", name, a))
			continue
		}
		for _, s := range steps {
			switch {
			case !known(s.To):
				errs = append(errs, fmt.Errorf("loadgen: pattern %q: %q -> unknown action %q", name, a, s.To))
			case !(s.Weight > 0):
				errs = append(errs, fmt.Errorf("loadgen: pattern %q: %q -> %q: weight %g is not positive", name, a, s.To, s.Weight))
			case !visited[s.To]:
				visited[s.To] = true
				queue = append(queue, s.To)
			}
		}
	}
	for a := range p.Table {
		if !known(a) {
			errs = append(errs, fmt.Errorf("loadgen: pattern %q: unknown action %q in the table", name, a))
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return cmp.Compare(a.Error(), b.Error()) })
	return errs
}

// next draws the action after a, following the table.
func (p *Pattern) next(a Action, rng *rand.Rand) Action {
	steps := p.Table[a]
	var total float64
	for _, s := range steps {
		total += s.Weight
	}
	x := rng.Float64() * total
	for _, s := range steps {
		if x < s.Weight {
			return s.To
		}
		x -= s.Weight
	}
	return steps[len(steps)-1].To
}

// pickPattern draws a pattern by weight.
func pickPattern(ps []Pattern, rng *rand.Rand) *Pattern {
	weight := func(p Pattern) float64 {
		if p.Weight == 0 {
			return 1
		}
		return p.Weight
	}
	var total float64
	for _, p := range ps {
		total += weight(p)
	}
	x := rng.Float64() * total
	for i := range ps {
		if x < weight(ps[i]) {
			return &ps[i]
		}
		x -= weight(ps[i])
	}
	return &ps[len(ps)-1]
}
