package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// maxAnswer is the most bytes read from one answer.
const maxAnswer = 16 << 20

// seededOwners is the number of owners the PetClinic sample data starts with; owner
// ids are drawn from [1, 1.1·max(seededOwners, highest id seen)].
const seededOwners = 200

// session is what a user remembers between requests.
type session struct {
	owner    *ownerAnswer // the current owner, nil if none
	pets     []int64      // pet ids of the current owner
	petTypes []int64      // pet type ids, once seen
	added    int          // pets this user has added, for unique names
}

func (s *session) setOwner(o ownerAnswer) {
	s.owner = &o
	s.pets = s.pets[:0]
	for _, p := range o.Pets {
		s.pets = append(s.pets, p.ID)
	}
}

// ownerAnswer is the part of an owner answer a user keeps.
type ownerAnswer struct {
	ID        int64  `json:"id"`
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	Address   string `json:"address"`
	City      string `json:"city"`
	Telephone string `json:"telephone"`
	Pets      []struct {
		ID int64 `json:"id"`
	} `json:"pets"`
}

type ownerInput struct {
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	Address   string `json:"address"`
	City      string `json:"city"`
	Telephone string `json:"telephone"`
}

type petInput struct {
	Name      string `json:"name"`
	BirthDate string `json:"birthDate"`
	TypeID    int64  `json:"typeId"`
}

type visitInput struct {
	Date        string `json:"date,omitempty"`
	Description string `json:"description"`
}

type idAnswer struct {
	ID int64 `json:"id"`
}

// Search prefixes: mostly one or two letters, sometimes empty (every owner) or
// matching nobody, so the size of the answer varies a lot.
var prefixes = []string{"", "D", "Da", "Dav", "Do", "F", "Fr", "B", "Bl", "Br", "C", "Co",
	"E", "Es", "M", "Mc", "S", "Sc", "R", "L", "O", "Z", "Q", "J", "Xu", "Ky"}

var (
	firstNames = []string{"Ada", "Ben", "Carla", "Dmitri", "Elena", "Farid", "Grace", "Hiro",
		"Ines", "Jonas", "Kemi", "Lars", "Mina", "Nils", "Olga", "Pablo"}
	lastNames = []string{"Davis", "Franklin", "Black", "Coleman", "Douglas", "Estaban",
		"Schroeder", "Murphy", "Lindgren", "Okoro", "Ramos", "Sato", "Becker", "Moreau"}
	streets  = []string{"Main St.", "Oak Ave.", "Birch Rd.", "River Ln.", "Hill Ct."}
	cities   = []string{"Madison", "Monona", "Verona", "Oregon", "Cottage Grove"}
	petNames = []string{"Rex", "Mia", "Pip", "Olive", "Bruno", "Kiwi", "Shadow", "Pumpkin"}
	reasons  = []string{"checkup", "vaccination", "limping", "dental cleaning", "skin rash",
		"follow-up", "blood work", "weight check"}
)

// perform makes the request of action a for user u and updates its session. When a
// needs something the user does not have (an owner, a pet), it makes the request
// that gets it instead.
func (r *run) perform(u *user, a Action) {
	s, rng := &u.session, u.rng
	switch a {
	case Health:
		r.do(call{method: http.MethodGet, path: "/api/health", endpoint: "GET /api/health"})
	case Vets:
		r.do(call{method: http.MethodGet, path: "/api/vets", endpoint: "GET /api/vets"})
	case Report:
		r.do(call{method: http.MethodGet, path: "/api/reports/visits", endpoint: "GET /api/reports/visits"})
	case PetTypes:
		var types []idAnswer
		if r.do(call{method: http.MethodGet, path: "/api/pettypes", endpoint: "GET /api/pettypes", out: &types}) {
			s.petTypes = s.petTypes[:0]
			for _, t := range types {
				s.petTypes = append(s.petTypes, t.ID)
			}
		}
	case FindOwners:
		prefix := prefixes[rng.IntN(len(prefixes))]
		var owners []ownerAnswer
		if r.do(call{method: http.MethodGet, path: "/api/owners?lastName=" + url.QueryEscape(prefix),
			endpoint: "GET /api/owners", out: &owners}) {
			for _, o := range owners {
				r.seeOwner(o.ID)
			}
			if len(owners) > 0 {
				s.setOwner(owners[rng.IntN(len(owners))])
			}
		}
	case OwnerDetail:
		if s.owner == nil {
			r.lookupOwner(u)
			return
		}
		r.ownerDetail(s, s.owner.ID)
	case LookupOwner:
		r.lookupOwner(u)
	case UpdateOwner:
		if s.owner == nil {
			r.lookupOwner(u)
			return
		}
		o := s.owner
		in := ownerInput{FirstName: o.FirstName, LastName: o.LastName, Address: o.Address, City: o.City, Telephone: o.Telephone}
		if rng.IntN(2) == 0 {
			in.Telephone = telephone(u)
		} else {
			in.Address = fmt.Sprintf("%d %s", 1+rng.IntN(999), streets[rng.IntN(len(streets))])
		}
		var answer ownerAnswer
		if r.do(call{method: http.MethodPut, path: "/api/owners/" + strconv.FormatInt(o.ID, 10),
			endpoint: "PUT /api/owners/{id}", body: in, out: &answer}) {
			s.setOwner(answer)
		}
	case RegisterOwner:
		in := ownerInput{
			FirstName: firstNames[rng.IntN(len(firstNames))],
			LastName:  lastNames[rng.IntN(len(lastNames))],
			Address:   fmt.Sprintf("%d %s", 1+rng.IntN(999), streets[rng.IntN(len(streets))]),
			City:      cities[rng.IntN(len(cities))],
			Telephone: telephone(u),
		}
		var answer ownerAnswer
		if r.do(call{method: http.MethodPost, path: "/api/owners", endpoint: "POST /api/owners", body: in, out: &answer}) {
			r.seeOwner(answer.ID)
			s.setOwner(answer)
		}
	case AddPet:
		if s.owner == nil {
			r.perform(u, RegisterOwner)
			return
		}
		s.added++
		typeID := int64(1 + rng.IntN(6))
		if len(s.petTypes) > 0 {
			typeID = s.petTypes[rng.IntN(len(s.petTypes))]
		}
		in := petInput{
			Name:      fmt.Sprintf("%s %d-%d", petNames[rng.IntN(len(petNames))], u.id, s.added),
			BirthDate: time.Now().AddDate(-1-rng.IntN(14), 0, -rng.IntN(365)).Format(time.DateOnly),
			TypeID:    typeID,
		}
		var answer idAnswer
		if r.do(call{method: http.MethodPost, path: fmt.Sprintf("/api/owners/%d/pets", s.owner.ID),
			endpoint: "POST /api/owners/{id}/pets", body: in, out: &answer}) {
			s.pets = append(s.pets, answer.ID)
		}
	case AddVisit:
		if s.owner == nil {
			r.lookupOwner(u)
			return
		}
		if len(s.pets) == 0 {
			r.ownerDetail(s, s.owner.ID)
			return
		}
		in := visitInput{Description: reasons[rng.IntN(len(reasons))]}
		if rng.IntN(2) == 0 {
			in.Date = time.Now().AddDate(0, 0, -rng.IntN(30)).Format(time.DateOnly)
		}
		pet := s.pets[rng.IntN(len(s.pets))]
		r.do(call{method: http.MethodPost, path: fmt.Sprintf("/api/owners/%d/pets/%d/visits", s.owner.ID, pet),
			endpoint: "POST /api/owners/{id}/pets/{petId}/visits", body: in})
	default:
		panic("loadgen: unknown action " + string(a)) // validatePatterns rejects these
	}
}

// lookupOwner opens a random owner, about one time in eleven an unknown one.
func (r *run) lookupOwner(u *user) {
	hi := max(r.maxOwner.Load(), seededOwners)
	r.ownerDetail(&u.session, 1+u.rng.Int64N(hi+hi/10))
}

func (r *run) ownerDetail(s *session, id int64) {
	var answer ownerAnswer
	if r.do(call{method: http.MethodGet, path: "/api/owners/" + strconv.FormatInt(id, 10),
		endpoint: "GET /api/owners/{id}", out: &answer}) {
		r.seeOwner(answer.ID)
		s.setOwner(answer)
	}
}

func telephone(u *user) string { return fmt.Sprintf("555%07d", u.rng.IntN(10_000_000)) }

// call is one request.
type call struct {
	method, path string
	endpoint     string // statistics key
	body         any    // sent as JSON if not nil
	out          any    // a 2xx answer is decoded into it if not nil
}

// do sends c, records the outcome and reports whether it got a 2xx answer (decoded
// into c.out).
func (r *run) do(c call) bool {
	var body io.Reader
	if c.body != nil {
		b, err := json.Marshal(c.body)
		if err != nil {
			panic("loadgen: encoding a request: " + err.Error()) // the input types always encode
		}
		body = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(r.reqCtx, r.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, c.method, r.baseURL+c.path, body)
	if err != nil {
		panic("loadgen: building a request: " + err.Error()) // the base URL was checked
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	var traced func(status int)
	if r.opts.Trace != nil {
		traced = r.opts.Trace(req, c.endpoint)
	}

	start := time.Now()
	resp, err := r.client.Do(req)
	var data []byte
	if err == nil {
		data, err = io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
		resp.Body.Close()
	}
	latency := time.Since(start)
	if traced != nil {
		status := 0
		if err == nil {
			status = resp.StatusCode
		}
		traced(status)
	}
	if err != nil && r.reqCtx.Err() != nil {
		return false // abandoned: the caller stopped the run
	}
	if err != nil {
		// No answer, or only part of one: status 0.
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("timeout after %v", r.opts.Timeout)
		}
		r.rec.record(c.endpoint, 0, latency, err)
		return false
	}
	ok := resp.StatusCode >= 200 && resp.StatusCode <= 299
	if ok && c.out != nil {
		if derr := json.Unmarshal(data, c.out); derr != nil {
			err, ok = fmt.Errorf("decoding the answer: %w", derr), false
		}
	}
	r.rec.record(c.endpoint, resp.StatusCode, latency, err)
	return ok
}
