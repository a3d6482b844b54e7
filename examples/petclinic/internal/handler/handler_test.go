package handler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/examples/petclinic/internal/database"
	"github.com/tigrisgo/tigris/examples/petclinic/internal/handler"
	"github.com/tigrisgo/tigris/examples/petclinic/internal/model"
	"github.com/tigrisgo/tigris/examples/petclinic/internal/repository"
	"github.com/tigrisgo/tigris/examples/petclinic/internal/service"
)

var today = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// newServer serves the API over a freshly seeded in-memory database.
func newServer(t *testing.T) *httptest.Server {
	t.Helper()
	db, err := database.Open(context.Background(), database.Memory, database.SeedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	svc := service.NewClinicService(repository.New(db.DB), service.WithClock(func() time.Time { return today }))
	srv := httptest.NewServer(handler.New(svc, nil))
	t.Cleanup(srv.Close)
	return srv
}

// call sends a request with an optional JSON body and decodes a JSON answer into out
// (if not nil). It returns the status and the raw body.
func call(t *testing.T, srv *httptest.Server, method, path string, body any, out any) (int, string) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, srv.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: decoding %s: %v", method, path, data, err)
		}
	}
	return resp.StatusCode, string(data)
}

func wantStatus(t *testing.T, what string, got int, body string, want int) {
	t.Helper()
	if got != want {
		t.Errorf("%s: status %d, want %d; body %s", what, got, want, body)
	}
}

func TestHealthAndPetTypes(t *testing.T) {
	srv := newServer(t)
	var health map[string]string
	code, body := call(t, srv, "GET", "/api/health", nil, &health)
	wantStatus(t, "health", code, body, 200)
	if health["status"] != "ok" {
		t.Errorf("health = %v", health)
	}
	var types []model.PetType
	code, body = call(t, srv, "GET", "/api/pettypes", nil, &types)
	wantStatus(t, "pettypes", code, body, 200)
	var names []string
	for _, ty := range types {
		names = append(names, ty.Name)
	}
	if !slices.Equal(names, database.PetTypes) {
		t.Errorf("pet types %v, want %v", names, database.PetTypes)
	}
}

func TestVets(t *testing.T) {
	srv := newServer(t)
	var vets []model.Vet
	code, body := call(t, srv, "GET", "/api/vets", nil, &vets)
	wantStatus(t, "vets", code, body, 200)
	if len(vets) != 10 {
		t.Fatalf("%d vets, want 10", len(vets))
	}
	specialties := 0
	for _, v := range vets {
		if v.Specialties == nil {
			t.Errorf("vet %d: specialties null, want a list", v.ID)
		}
		specialties += len(v.Specialties)
	}
	if specialties == 0 {
		t.Error("no vet has a specialty")
	}
}

func TestFindOwners(t *testing.T) {
	srv := newServer(t)
	search := func(prefix string) []model.Owner {
		t.Helper()
		var owners []model.Owner
		code, body := call(t, srv, "GET", "/api/owners?lastName="+prefix, nil, &owners)
		wantStatus(t, "search "+prefix, code, body, 200)
		return owners
	}
	all := search("")
	if len(all) != 200 {
		t.Fatalf("empty prefix found %d owners, want all 200", len(all))
	}
	pets := 0
	for _, o := range all {
		pets += len(o.Pets)
		for _, p := range o.Pets {
			if p.OwnerID != o.ID || p.Visits != nil {
				t.Fatalf("owner %d lists pet %+v", o.ID, p)
			}
		}
	}
	if pets != 400 {
		t.Errorf("owners list %d pets, want 400", pets)
	}
	d := search("D")
	for _, o := range d {
		if !strings.HasPrefix(o.LastName, "D") {
			t.Errorf("prefix D found %q", o.LastName)
		}
	}
	if lower := search("d"); len(lower) != len(d) {
		t.Errorf("search is case-sensitive: d %d, D %d", len(lower), len(d))
	}
	if len(d) < 20 {
		t.Errorf("prefix D found only %d owners; the sample data should make it common", len(d))
	}
	if got := search("Zzz"); len(got) != 0 || got == nil {
		t.Errorf("prefix Zzz found %v, want []", got)
	}
	if got := search("%25"); len(got) != 0 {
		t.Errorf(`prefix "%%" found %d owners: LIKE wildcards are not escaped`, len(got))
	}
	code, body := call(t, srv, "GET", "/api/owners?lastName="+strings.Repeat("x", 81), nil, nil)
	wantStatus(t, "long prefix", code, body, 400)
}

func TestOwnerDetail(t *testing.T) {
	srv := newServer(t)
	visits := 0
	for id := 1; id <= 200; id++ {
		var o model.Owner
		code, body := call(t, srv, "GET", "/api/owners/"+itoa(id), nil, &o)
		wantStatus(t, "owner", code, body, 200)
		if o.ID != int64(id) || len(o.Pets) == 0 {
			t.Fatalf("owner %d: %+v", id, o)
		}
		for _, p := range o.Pets {
			if p.Visits == nil {
				t.Fatalf("owner %d pet %d: visits null, want a list", id, p.ID)
			}
			visits += len(p.Visits)
		}
	}
	if visits != 1000 {
		t.Errorf("owners show %d visits, want 1000", visits)
	}
	for _, path := range []string{"/api/owners/999", "/api/owners/0", "/api/owners/-3", "/api/owners/abc"} {
		code, body := call(t, srv, "GET", path, nil, nil)
		wantStatus(t, path, code, body, 404)
		if !strings.Contains(body, `"error"`) {
			t.Errorf("%s: body %s has no error", path, body)
		}
	}
}

func TestCreateAndUpdateOwner(t *testing.T) {
	srv := newServer(t)
	in := model.OwnerInput{FirstName: "Ada", LastName: "Lovelace", Address: "12 St James's Sq.", City: "London", Telephone: "0123456789"}
	var created model.Owner
	code, body := call(t, srv, "POST", "/api/owners", in, &created)
	wantStatus(t, "create", code, body, 201)
	if created.ID != 201 || created.LastName != "Lovelace" || created.Pets == nil {
		t.Errorf("created %+v", created)
	}
	var found []model.Owner
	call(t, srv, "GET", "/api/owners?lastName=Lov", nil, &found)
	if len(found) != 1 || found[0].ID != created.ID {
		t.Errorf("search for the new owner found %+v", found)
	}

	in.City, in.Telephone = "  Marylebone ", "555"
	var updated model.Owner
	code, body = call(t, srv, "PUT", "/api/owners/201", in, &updated)
	wantStatus(t, "update", code, body, 200)
	if updated.City != "Marylebone" || updated.Telephone != "555" {
		t.Errorf("updated %+v", updated)
	}
	code, body = call(t, srv, "PUT", "/api/owners/4242", in, nil)
	wantStatus(t, "update unknown", code, body, 404)

	for name, tc := range map[string]struct {
		body   any
		status int
		want   string
	}{
		"missing fields": {model.OwnerInput{FirstName: "x"}, 400, `"lastName"`},
		"bad telephone":  {model.OwnerInput{FirstName: "a", LastName: "b", Address: "c", City: "d", Telephone: "12-34"}, 400, "digits"},
		"long telephone": {model.OwnerInput{FirstName: "a", LastName: "b", Address: "c", City: "d", Telephone: "12345678901"}, 400, "digits"},
		"unknown field":  {`{"firstName":"a","nickname":"b"}`, 400, "nickname"},
		"two objects":    {`{"firstName":"a"} {}`, 400, "after the JSON object"},
		"not JSON":       {`firstName=a`, 400, "bad JSON"},
		"too large":      {`{"firstName":"` + strings.Repeat("a", 70_000) + `"}`, 413, "larger than"},
	} {
		code, body := call(t, srv, "POST", "/api/owners", tc.body, nil)
		wantStatus(t, name, code, body, tc.status)
		if !strings.Contains(body, tc.want) {
			t.Errorf("%s: body %s does not mention %s", name, body, tc.want)
		}
	}
}

func TestAddPetAndVisit(t *testing.T) {
	srv := newServer(t)
	pet := model.PetInput{Name: "Nibbler", BirthDate: "2024-02-29", TypeID: 3}
	var created model.Pet
	code, body := call(t, srv, "POST", "/api/owners/7/pets", pet, &created)
	wantStatus(t, "add pet", code, body, 201)
	if created.OwnerID != 7 || created.Type.Name != "dog" || created.ID != 401 {
		t.Errorf("created %+v", created)
	}

	for name, tc := range map[string]struct {
		path   string
		body   model.PetInput
		status int
		want   string
	}{
		"duplicate name": {"/api/owners/7/pets", model.PetInput{Name: "nibbler", BirthDate: "2020-01-01", TypeID: 1}, 400, "already has"},
		"unknown type":   {"/api/owners/7/pets", model.PetInput{Name: "X", BirthDate: "2020-01-01", TypeID: 99}, 400, "typeId"},
		"future birth":   {"/api/owners/7/pets", model.PetInput{Name: "X", BirthDate: "2026-03-02", TypeID: 1}, 400, "future"},
		"bad date":       {"/api/owners/7/pets", model.PetInput{Name: "X", BirthDate: "1.2.2020", TypeID: 1}, 400, "not a date"},
		"unknown owner":  {"/api/owners/777/pets", model.PetInput{Name: "X", BirthDate: "2020-01-01", TypeID: 1}, 404, "not found"},
	} {
		code, body := call(t, srv, "POST", tc.path, tc.body, nil)
		wantStatus(t, name, code, body, tc.status)
		if !strings.Contains(body, tc.want) {
			t.Errorf("%s: body %s does not mention %s", name, body, tc.want)
		}
	}

	visitPath := "/api/owners/7/pets/401/visits"
	var v model.Visit
	code, body = call(t, srv, "POST", visitPath, model.VisitInput{Description: "first checkup"}, &v)
	wantStatus(t, "add visit", code, body, 201)
	if v.Date != "2026-03-01" || v.PetID != 401 {
		t.Errorf("visit %+v, want today's date", v)
	}
	code, body = call(t, srv, "POST", visitPath, model.VisitInput{Date: "2025-12-24", Description: "x-ray"}, nil)
	wantStatus(t, "add dated visit", code, body, 201)

	var owner model.Owner
	call(t, srv, "GET", "/api/owners/7", nil, &owner)
	var dates []string
	for _, p := range owner.Pets {
		if p.ID == 401 {
			for _, v := range p.Visits {
				dates = append(dates, v.Date)
			}
		}
	}
	if !slices.Equal(dates, []string{"2026-03-01", "2025-12-24"}) {
		t.Errorf("owner 7 shows visits %v of the new pet, want newest first", dates)
	}

	for name, tc := range map[string]struct {
		path   string
		body   model.VisitInput
		status int
	}{
		"other owner's pet":   {"/api/owners/8/pets/401/visits", model.VisitInput{Description: "x"}, 404},
		"unknown pet":         {"/api/owners/7/pets/9999/visits", model.VisitInput{Description: "x"}, 404},
		"no description":      {visitPath, model.VisitInput{}, 400},
		"before birth":        {visitPath, model.VisitInput{Date: "2024-01-01", Description: "x"}, 400},
		"more than a year":    {visitPath, model.VisitInput{Date: "2027-06-01", Description: "x"}, 400},
		"not a pet id":        {"/api/owners/7/pets/x/visits", model.VisitInput{Description: "x"}, 404},
		"date not YYYY-MM-DD": {visitPath, model.VisitInput{Date: "tomorrow", Description: "x"}, 400},
	} {
		code, body := call(t, srv, "POST", tc.path, tc.body, nil)
		wantStatus(t, name, code, body, tc.status)
	}
}

func TestVisitReport(t *testing.T) {
	srv := newServer(t)
	var r model.VisitReport
	code, body := call(t, srv, "GET", "/api/reports/visits", nil, &r)
	wantStatus(t, "report", code, body, 200)
	if r.Owners != 200 || r.Pets != 400 || r.Visits != 1000 {
		t.Errorf("totals %d/%d/%d, want 200/400/1000", r.Owners, r.Pets, r.Visits)
	}
	var byType, byMonth, pets int64
	for _, ty := range r.ByType {
		byType += ty.Visits
		pets += ty.Pets
	}
	for _, m := range r.ByMonth {
		byMonth += m.Visits
	}
	if byType != 1000 || byMonth != 1000 || pets != 400 || len(r.ByType) != 6 {
		t.Errorf("by type %d visits of %d pets in %d types, by month %d visits", byType, pets, len(r.ByType), byMonth)
	}
	if len(r.TopOwners) != 10 || !slices.IsSortedFunc(r.TopOwners, func(a, b model.OwnerActivity) int { return int(b.Visits - a.Visits) }) {
		t.Errorf("top owners %+v", r.TopOwners)
	}
	e := r.VisitsPerPet
	if e.Mean != 2.5 || e.Low > e.Mean || e.High < e.Mean || e.High-e.Low > 1 {
		t.Errorf("visits per pet %+v, want mean 2.5 inside a narrow interval", e)
	}
	if r.MedianGapDays <= 0 {
		t.Errorf("median gap %v", r.MedianGapDays)
	}
	// The same data gives the same report.
	var again model.VisitReport
	call(t, srv, "GET", "/api/reports/visits", nil, &again)
	a, _ := json.Marshal(r)
	b, _ := json.Marshal(again)
	if !bytes.Equal(a, b) {
		t.Error("two reports over the same data differ")
	}
}

func TestRouting(t *testing.T) {
	srv := newServer(t)
	code, body := call(t, srv, "DELETE", "/api/owners/1", nil, nil)
	wantStatus(t, "DELETE owner", code, body, 405)
	if !strings.Contains(body, "method not allowed") {
		t.Errorf("DELETE owner: body %s", body)
	}
	code, body = call(t, srv, "GET", "/api/nothing", nil, nil)
	wantStatus(t, "unknown endpoint", code, body, 404)
	if !strings.Contains(body, `"GET /api/nothing: not found"`) {
		t.Errorf("unknown endpoint: body %s", body)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
