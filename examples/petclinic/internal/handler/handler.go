// Package handler is the HTTP layer of PetClinic: a JSON API over
// [service.ClinicService], routed with net/http ServeMux patterns.
//
// # Routes
//
//	GET  /api/health                                 {"status":"ok"}
//	GET  /api/pettypes                               [PetType]
//	GET  /api/vets                                   [Vet] with specialties
//	GET  /api/owners?lastName=PREFIX                 [Owner] with pets; no prefix: all
//	POST /api/owners                                 OwnerInput -> 201 Owner
//	GET  /api/owners/{ownerID}                       Owner with pets and visits
//	PUT  /api/owners/{ownerID}                       OwnerInput -> 200 Owner
//	POST /api/owners/{ownerID}/pets                  PetInput -> 201 Pet
//	POST /api/owners/{ownerID}/pets/{petID}/visits   VisitInput -> 201 Visit
//	GET  /api/reports/visits                         VisitReport (expensive)
//
// Errors are JSON objects {"error": "...", "fields": [...]} with status 400 (bad
// input), 404 (unknown owner, pet or route), 405 (known route, other method), 413 (body
// over 64 KiB), 500 or, for the health check, 503.
package handler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/tigrisgo/tigris/examples/petclinic/internal/model"
	"github.com/tigrisgo/tigris/examples/petclinic/internal/service"
)

// maxBody is the largest request body accepted.
const maxBody = 64 << 10

// API serves the PetClinic JSON API. It is safe for concurrent use.
type API struct {
	svc *service.ClinicService
	log *slog.Logger
	mux *http.ServeMux
}

// New returns the API over svc. Internal errors are logged to log (nil: discarded).
func New(svc *service.ClinicService, log *slog.Logger) *API {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &API{svc: svc, log: log, mux: http.NewServeMux()}
	a.mux.HandleFunc("GET /api/health", a.health)
	a.mux.HandleFunc("GET /api/pettypes", a.petTypes)
	a.mux.HandleFunc("GET /api/vets", a.vets)
	a.mux.HandleFunc("GET /api/owners", a.findOwners)
	a.mux.HandleFunc("POST /api/owners", a.createOwner)
	a.mux.HandleFunc("GET /api/owners/{ownerID}", a.owner)
	a.mux.HandleFunc("PUT /api/owners/{ownerID}", a.updateOwner)
	a.mux.HandleFunc("POST /api/owners/{ownerID}/pets", a.addPet)
	a.mux.HandleFunc("POST /api/owners/{ownerID}/pets/{petID}/visits", a.addVisit)
	a.mux.HandleFunc("GET /api/reports/visits", a.visitReport)
	return a
}

// ServeHTTP implements http.Handler.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, pattern := a.mux.Handler(r); pattern != "" {
		a.mux.ServeHTTP(w, r)
		return
	}
	// No route: keep the status the mux chooses (404, or 405 with an Allow header)
	// but answer in JSON like every other error.
	rec := &statusRecorder{header: http.Header{}, status: http.StatusOK}
	a.mux.ServeHTTP(rec, r)
	if allow := rec.header.Get("Allow"); allow != "" {
		w.Header().Set("Allow", allow)
	}
	msg := fmt.Sprintf("%s %s: %s", r.Method, r.URL.Path, strings.ToLower(http.StatusText(rec.status)))
	writeJSON(w, rec.status, errorBody{Error: msg})
}

// statusRecorder keeps the header and status a handler writes and drops the body.
type statusRecorder struct {
	header http.Header
	status int
}

func (s *statusRecorder) Header() http.Header         { return s.header }
func (s *statusRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (s *statusRecorder) WriteHeader(status int)      { s.status = status }

func (a *API) health(w http.ResponseWriter, r *http.Request) {
	if err := a.svc.Health(r.Context()); err != nil {
		a.log.Error("health check failed", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (a *API) petTypes(w http.ResponseWriter, r *http.Request) {
	types, err := a.svc.FindPetTypes(r.Context())
	a.respond(w, r, http.StatusOK, types, err)
}

func (a *API) vets(w http.ResponseWriter, r *http.Request) {
	vets, err := a.svc.FindVets(r.Context())
	a.respond(w, r, http.StatusOK, vets, err)
}

func (a *API) findOwners(w http.ResponseWriter, r *http.Request) {
	owners, err := a.svc.FindOwners(r.Context(), r.URL.Query().Get("lastName"))
	a.respond(w, r, http.StatusOK, owners, err)
}

func (a *API) owner(w http.ResponseWriter, r *http.Request) {
	id, ok := a.pathID(w, r, "ownerID")
	if !ok {
		return
	}
	owner, err := a.svc.FindOwnerByID(r.Context(), id)
	a.respond(w, r, http.StatusOK, owner, err)
}

func (a *API) createOwner(w http.ResponseWriter, r *http.Request) {
	var in model.OwnerInput
	if !a.decode(w, r, &in) {
		return
	}
	owner, err := a.svc.CreateOwner(r.Context(), in)
	if err == nil {
		w.Header().Set("Location", fmt.Sprintf("/api/owners/%d", owner.ID))
	}
	a.respond(w, r, http.StatusCreated, owner, err)
}

func (a *API) updateOwner(w http.ResponseWriter, r *http.Request) {
	id, ok := a.pathID(w, r, "ownerID")
	if !ok {
		return
	}
	var in model.OwnerInput
	if !a.decode(w, r, &in) {
		return
	}
	owner, err := a.svc.UpdateOwner(r.Context(), id, in)
	a.respond(w, r, http.StatusOK, owner, err)
}

func (a *API) addPet(w http.ResponseWriter, r *http.Request) {
	ownerID, ok := a.pathID(w, r, "ownerID")
	if !ok {
		return
	}
	var in model.PetInput
	if !a.decode(w, r, &in) {
		return
	}
	pet, err := a.svc.AddPet(r.Context(), ownerID, in)
	a.respond(w, r, http.StatusCreated, pet, err)
}

func (a *API) addVisit(w http.ResponseWriter, r *http.Request) {
	ownerID, ok := a.pathID(w, r, "ownerID")
	if !ok {
		return
	}
	petID, ok := a.pathID(w, r, "petID")
	if !ok {
		return
	}
	var in model.VisitInput
	if !a.decode(w, r, &in) {
		return
	}
	visit, err := a.svc.NewVisit(r.Context(), ownerID, petID, in)
	a.respond(w, r, http.StatusCreated, visit, err)
}

func (a *API) visitReport(w http.ResponseWriter, r *http.Request) {
	report, err := a.svc.VisitReport(r.Context())
	a.respond(w, r, http.StatusOK, report, err)
}

// errorBody is the JSON body of every error response.
type errorBody struct {
	Error  string               `json:"error"`
	Fields []service.FieldError `json:"fields,omitempty"`
}

// respond writes v with status on success, or the error response that err calls for.
func (a *API) respond(w http.ResponseWriter, r *http.Request, status int, v any, err error) {
	var invalid *service.ValidationError
	switch {
	case err == nil:
		writeJSON(w, status, v)
	case errors.Is(err, service.ErrNotFound):
		writeJSON(w, http.StatusNotFound, errorBody{Error: err.Error()})
	case errors.As(err, &invalid):
		writeJSON(w, http.StatusBadRequest, errorBody{Error: "invalid input", Fields: invalid.Fields})
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		// The client went away; nobody reads the answer.
		w.WriteHeader(499)
	default:
		a.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		writeJSON(w, http.StatusInternalServerError, errorBody{Error: "internal error"})
	}
}

// pathID parses the positive integer path value name or writes a 404.
func (a *API) pathID(w http.ResponseWriter, r *http.Request, name string) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || id <= 0 {
		writeJSON(w, http.StatusNotFound, errorBody{Error: fmt.Sprintf("%s %q is not an id", name, r.PathValue(name))})
		return 0, false
	}
	return id, true
}

// decode reads one JSON object into v, rejecting unknown fields, trailing data and
// bodies over maxBody; on failure it writes the error response.
func (a *API) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			err = errors.New("data after the JSON object")
		}
	}
	var tooBig *http.MaxBytesError
	switch {
	case err == nil:
		return true
	case errors.As(err, &tooBig):
		writeJSON(w, http.StatusRequestEntityTooLarge, errorBody{Error: fmt.Sprintf("body larger than %d bytes", tooBig.Limit)})
	default:
		writeJSON(w, http.StatusBadRequest, errorBody{Error: "bad JSON body: " + err.Error()})
	}
	return false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.Encode(v) // the status is sent; a failed write means the client went away
}
