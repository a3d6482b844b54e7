package loadgen

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClinic is a small in-memory stand-in for the PetClinic API with the same routes
// and JSON shapes. It counts requests and the most requests in flight at once.
type fakeClinic struct {
	delay time.Duration // added to every request but the health check

	requests    atomic.Int64 // every request, the health check included
	inFlight    atomic.Int64
	maxInFlight atomic.Int64

	mu        sync.Mutex
	owners    map[int64]*fakeOwner
	nextOwner int64
	nextPet   int64
	byPath    map[string]int64 // requests per "METHOD /route"
}

type fakeOwner struct {
	ownerInput
	ID   int64   `json:"id"`
	Pets []int64 `json:"-"`
}

func (o *fakeOwner) answer() map[string]any {
	pets := make([]map[string]any, len(o.Pets))
	for i, id := range o.Pets {
		pets[i] = map[string]any{"id": id, "name": "pet", "visits": []any{}}
	}
	return map[string]any{"id": o.ID, "firstName": o.FirstName, "lastName": o.LastName,
		"address": o.Address, "city": o.City, "telephone": o.Telephone, "pets": pets}
}

func newFakeClinic(t *testing.T, delay time.Duration) (*fakeClinic, *httptest.Server) {
	f := &fakeClinic{delay: delay, owners: map[int64]*fakeOwner{}, byPath: map[string]int64{}}
	names := []string{"Davis", "Franklin", "Black", "Coleman", "Douglas"}
	for i := range int64(seededOwners) {
		f.nextOwner++
		f.nextPet++
		f.owners[f.nextOwner] = &fakeOwner{ID: f.nextOwner, Pets: []int64{f.nextPet}, ownerInput: ownerInput{
			FirstName: "F", LastName: names[i%int64(len(names))], Address: "1 Main St.", City: "Madison", Telephone: "6085551234"}}
	}
	srv := httptest.NewServer(f.routes())
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeClinic) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/health", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /api/vets", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, []map[string]any{{"id": 1, "firstName": "James", "lastName": "Carter", "specialties": []any{}}})
	})
	mux.HandleFunc("GET /api/pettypes", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, []map[string]any{{"id": 1, "name": "cat"}, {"id": 2, "name": "dog"}})
	})
	mux.HandleFunc("GET /api/reports/visits", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		n := len(f.owners)
		f.mu.Unlock()
		reply(w, 200, map[string]any{"owners": n})
	})
	mux.HandleFunc("GET /api/owners", func(w http.ResponseWriter, r *http.Request) {
		prefix := strings.ToLower(r.URL.Query().Get("lastName"))
		f.mu.Lock()
		defer f.mu.Unlock()
		out := []map[string]any{}
		for id := int64(1); id <= f.nextOwner; id++ {
			if o := f.owners[id]; strings.HasPrefix(strings.ToLower(o.LastName), prefix) {
				out = append(out, o.answer())
			}
		}
		reply(w, 200, out)
	})
	mux.HandleFunc("POST /api/owners", func(w http.ResponseWriter, r *http.Request) {
		var in ownerInput
		if !decodeStrict(w, r, &in) || !validOwner(w, in) {
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.nextOwner++
		o := &fakeOwner{ID: f.nextOwner, ownerInput: in}
		f.owners[o.ID] = o
		reply(w, 201, o.answer())
	})
	mux.HandleFunc("GET /api/owners/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.withOwner(w, r, func(o *fakeOwner) { reply(w, 200, o.answer()) })
	})
	mux.HandleFunc("PUT /api/owners/{id}", func(w http.ResponseWriter, r *http.Request) {
		var in ownerInput
		if !decodeStrict(w, r, &in) || !validOwner(w, in) {
			return
		}
		f.withOwner(w, r, func(o *fakeOwner) {
			o.ownerInput = in
			reply(w, 200, o.answer())
		})
	})
	mux.HandleFunc("POST /api/owners/{id}/pets", func(w http.ResponseWriter, r *http.Request) {
		var in petInput
		if !decodeStrict(w, r, &in) {
			return
		}
		if in.Name == "" || in.TypeID < 1 || len(in.BirthDate) != len("2006-01-02") {
			reply(w, 400, map[string]string{"error": "invalid pet"})
			return
		}
		f.withOwner(w, r, func(o *fakeOwner) {
			f.nextPet++
			o.Pets = append(o.Pets, f.nextPet)
			reply(w, 201, map[string]any{"id": f.nextPet, "ownerId": o.ID, "name": in.Name})
		})
	})
	mux.HandleFunc("POST /api/owners/{id}/pets/{petID}/visits", func(w http.ResponseWriter, r *http.Request) {
		var in visitInput
		if !decodeStrict(w, r, &in) {
			return
		}
		pet, _ := strconv.ParseInt(r.PathValue("petID"), 10, 64)
		if in.Description == "" {
			reply(w, 400, map[string]string{"error": "invalid visit"})
			return
		}
		f.withOwner(w, r, func(o *fakeOwner) {
			for _, p := range o.Pets {
				if p == pet {
					reply(w, 201, map[string]any{"id": 1, "petId": pet})
					return
				}
			}
			reply(w, 404, map[string]string{"error": "no such pet"})
		})
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		n := f.inFlight.Add(1)
		defer f.inFlight.Add(-1)
		for {
			m := f.maxInFlight.Load()
			if n <= m || f.maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		_, pattern := mux.Handler(r)
		f.mu.Lock()
		f.byPath[pattern]++
		f.mu.Unlock()
		if f.delay > 0 && r.URL.Path != "/api/health" {
			time.Sleep(f.delay)
		}
		mux.ServeHTTP(w, r)
	})
}

func (f *fakeClinic) withOwner(w http.ResponseWriter, r *http.Request, fn func(*fakeOwner)) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.owners[id]
	if o == nil {
		reply(w, 404, map[string]string{"error": fmt.Sprintf("owner %d: not found", id)})
		return
	}
	fn(o)
}

func (f *fakeClinic) count(pattern string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.byPath[pattern]
}

func validOwner(w http.ResponseWriter, in ownerInput) bool {
	if in.FirstName == "" || in.LastName == "" || in.Address == "" || in.City == "" || len(in.Telephone) != 10 {
		reply(w, 400, map[string]string{"error": "invalid owner"})
		return false
	}
	return true
}

func decodeStrict(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		reply(w, 400, map[string]string{"error": err.Error()})
		return false
	}
	return true
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
