// Package service is the business layer of PetClinic: [ClinicService] validates input,
// combines repository calls into the operations the API offers and builds reports.
//
// # Errors
//
// Operations return errors wrapping [ErrNotFound] when an owner or pet does not exist
// and a [*ValidationError] when the input is not acceptable; anything else is an
// internal error.
//
// # Workload shape
//
// The operations differ on purpose, so that a monitor has something to find:
// [ClinicService.FindVets] is cheap to cache but runs 1+N queries on every call and is
// called very often; [ClinicService.VisitReport] is expensive and rare;
// [ClinicService.FindPetTypes] and [ClinicService.Health] are cheap and frequent;
// [ClinicService.FindOwnerByID] fails for unknown ids; the size of the result of
// [ClinicService.FindOwners] depends heavily on the prefix.
package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tigrisgo/tigris/examples/petclinic/internal/model"
	"github.com/tigrisgo/tigris/examples/petclinic/internal/repository"
)

// ErrNotFound is wrapped by the errors of operations on an owner or pet that does not
// exist.
var ErrNotFound = errors.New("not found")

// ClinicService is the PetClinic business layer. It is safe for concurrent use.
type ClinicService struct {
	store *repository.Store
	now   func() time.Time
}

// Option configures a ClinicService.
type Option func(*ClinicService)

// WithClock makes the service read the current time from now (default time.Now). It is
// used for default visit dates and to reject dates in the future.
func WithClock(now func() time.Time) Option { return func(s *ClinicService) { s.now = now } }

// NewClinicService returns a service over the repositories of store.
func NewClinicService(store *repository.Store, opts ...Option) *ClinicService {
	s := &ClinicService{store: store, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
}

// translate turns repository.ErrNotFound into ErrNotFound, keeping the message.
func translate(err error) error {
	if errors.Is(err, repository.ErrNotFound) {
		return notFound{err}
	}
	return err
}

type notFound struct{ err error }

func (e notFound) Error() string        { return e.err.Error() }
func (e notFound) Is(target error) bool { return target == ErrNotFound }
func (e notFound) Unwrap() error        { return e.err }

// FindOwnerByID returns an owner with its pets and their visits.
func (s *ClinicService) FindOwnerByID(ctx context.Context, id int64) (model.Owner, error) {
	owner, err := s.store.Owners.FindByID(ctx, id)
	if err != nil {
		return model.Owner{}, translate(err)
	}
	pets, err := s.store.Pets.FindByOwner(ctx, id)
	if err != nil {
		return model.Owner{}, err
	}
	visits, err := s.store.Visits.FindByOwner(ctx, id)
	if err != nil {
		return model.Owner{}, err
	}
	byPet := make(map[int64]int, len(pets))
	for i := range pets {
		pets[i].Visits = []model.Visit{}
		byPet[pets[i].ID] = i
	}
	for _, v := range visits {
		if i, ok := byPet[v.PetID]; ok {
			pets[i].Visits = append(pets[i].Visits, v)
		}
	}
	owner.Pets = pets
	return owner, nil
}

// FindOwners returns the owners whose last name starts with lastName (ignoring ASCII
// case; empty means all), each with its pets but without visits.
func (s *ClinicService) FindOwners(ctx context.Context, lastName string) ([]model.Owner, error) {
	if err := checkLength("lastName", lastName, maxName); err != nil {
		return nil, err
	}
	owners, err := s.store.Owners.FindByLastName(ctx, lastName)
	if err != nil {
		return nil, err
	}
	pets, err := s.store.Pets.FindByOwnerLastName(ctx, lastName)
	if err != nil {
		return nil, err
	}
	byOwner := make(map[int64]int, len(owners))
	for i := range owners {
		owners[i].Pets = []model.Pet{}
		byOwner[owners[i].ID] = i
	}
	for _, p := range pets {
		if i, ok := byOwner[p.OwnerID]; ok {
			owners[i].Pets = append(owners[i].Pets, p)
		}
	}
	return owners, nil
}

// CreateOwner validates and stores a new owner and returns it (without pets).
func (s *ClinicService) CreateOwner(ctx context.Context, in model.OwnerInput) (model.Owner, error) {
	in = normalizeOwner(in)
	if err := validateOwner(in); err != nil {
		return model.Owner{}, err
	}
	id, err := s.store.Owners.Insert(ctx, in)
	if err != nil {
		return model.Owner{}, err
	}
	return ownerFrom(id, in), nil
}

// UpdateOwner validates and replaces the fields of an existing owner and returns the
// owner with its pets and visits.
func (s *ClinicService) UpdateOwner(ctx context.Context, id int64, in model.OwnerInput) (model.Owner, error) {
	in = normalizeOwner(in)
	if err := validateOwner(in); err != nil {
		return model.Owner{}, err
	}
	if err := s.store.Owners.Update(ctx, id, in); err != nil {
		return model.Owner{}, translate(err)
	}
	return s.FindOwnerByID(ctx, id)
}

func ownerFrom(id int64, in model.OwnerInput) model.Owner {
	return model.Owner{
		ID: id, FirstName: in.FirstName, LastName: in.LastName,
		Address: in.Address, City: in.City, Telephone: in.Telephone, Pets: []model.Pet{},
	}
}

// AddPet validates and stores a new pet of an existing owner. Pet names are unique
// per owner (ignoring case).
func (s *ClinicService) AddPet(ctx context.Context, ownerID int64, in model.PetInput) (model.Pet, error) {
	in.Name = trim(in.Name)
	in.BirthDate = trim(in.BirthDate)
	if _, err := s.store.Owners.FindByID(ctx, ownerID); err != nil {
		return model.Pet{}, translate(err)
	}
	types, err := s.store.Pets.FindPetTypes(ctx)
	if err != nil {
		return model.Pet{}, err
	}
	pets, err := s.store.Pets.FindByOwner(ctx, ownerID)
	if err != nil {
		return model.Pet{}, err
	}
	typ, err := validatePet(in, types, pets, s.now())
	if err != nil {
		return model.Pet{}, err
	}
	id, err := s.store.Pets.Insert(ctx, ownerID, in)
	if err != nil {
		return model.Pet{}, err
	}
	return model.Pet{ID: id, OwnerID: ownerID, Name: in.Name, BirthDate: in.BirthDate, Type: typ}, nil
}

// NewVisit validates and stores a visit of a pet of an owner. An empty date means
// today.
func (s *ClinicService) NewVisit(ctx context.Context, ownerID, petID int64, in model.VisitInput) (model.Visit, error) {
	in.Date = trim(in.Date)
	in.Description = trim(in.Description)
	if in.Date == "" {
		in.Date = s.now().Format(model.DateLayout)
	}
	pet, err := s.store.Pets.FindByID(ctx, petID)
	if err != nil {
		return model.Visit{}, translate(err)
	}
	if pet.OwnerID != ownerID {
		return model.Visit{}, notFound{fmt.Errorf("pet %d of owner %d: %w", petID, ownerID, repository.ErrNotFound)}
	}
	if err := validateVisit(in, pet, s.now()); err != nil {
		return model.Visit{}, err
	}
	id, err := s.store.Visits.Insert(ctx, petID, in)
	if err != nil {
		return model.Visit{}, err
	}
	return model.Visit{ID: id, PetID: petID, Date: in.Date, Description: in.Description}, nil
}

// FindVets returns every vet with its specialties.
func (s *ClinicService) FindVets(ctx context.Context) ([]model.Vet, error) {
	return s.store.Vets.FindAll(ctx)
}

// FindPetTypes returns every pet type.
func (s *ClinicService) FindPetTypes(ctx context.Context) ([]model.PetType, error) {
	return s.store.Pets.FindPetTypes(ctx)
}

// Health checks that the database answers.
func (s *ClinicService) Health(ctx context.Context) error {
	if err := s.store.Ping(ctx); err != nil {
		return fmt.Errorf("database: %w", err)
	}
	return nil
}
