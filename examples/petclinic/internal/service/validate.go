package service

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tigrisgo/tigris/examples/petclinic/internal/model"
)

// ValidationError lists what is wrong with the input of an operation.
type ValidationError struct {
	Fields []FieldError
}

// FieldError is one problem with one input field.
type FieldError struct {
	Field   string `json:"field"`
	Problem string `json:"problem"`
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Field + ": " + f.Problem
	}
	return "invalid input: " + strings.Join(parts, "; ")
}

func (e *ValidationError) add(field, format string, args ...any) {
	e.Fields = append(e.Fields, FieldError{Field: field, Problem: fmt.Sprintf(format, args...)})
}

// err returns e if it holds a problem, else nil.
func (e *ValidationError) err() error {
	if len(e.Fields) == 0 {
		return nil
	}
	return e
}

const (
	maxName = 80
	maxText = 255
)

func trim(s string) string { return strings.TrimSpace(s) }

func checkLength(field, value string, limit int) error {
	if n := utf8.RuneCountInString(value); n > limit {
		e := &ValidationError{}
		e.add(field, "longer than %d characters", limit)
		return e
	}
	return nil
}

func required(e *ValidationError, field, value string, limit int) {
	switch n := utf8.RuneCountInString(value); {
	case n == 0:
		e.add(field, "required")
	case n > limit:
		e.add(field, "longer than %d characters", limit)
	}
}

func normalizeOwner(in model.OwnerInput) model.OwnerInput {
	in.FirstName = trim(in.FirstName)
	in.LastName = trim(in.LastName)
	in.Address = trim(in.Address)
	in.City = trim(in.City)
	in.Telephone = trim(in.Telephone)
	return in
}

func validateOwner(in model.OwnerInput) error {
	e := &ValidationError{}
	required(e, "firstName", in.FirstName, maxName)
	required(e, "lastName", in.LastName, maxName)
	required(e, "address", in.Address, maxText)
	required(e, "city", in.City, maxName)
	switch {
	case in.Telephone == "":
		e.add("telephone", "required")
	case len(in.Telephone) > 10 || strings.Trim(in.Telephone, "0123456789") != "":
		e.add("telephone", "must be 1 to 10 digits")
	}
	return e.err()
}

// validatePet checks a new pet against the known types and the owner's other pets and
// returns its type.
func validatePet(in model.PetInput, types []model.PetType, pets []model.Pet, now time.Time) (model.PetType, error) {
	e := &ValidationError{}
	required(e, "name", in.Name, maxName)
	for _, p := range pets {
		if in.Name != "" && strings.EqualFold(p.Name, in.Name) {
			e.add("name", "the owner already has a pet named %q", p.Name)
			break
		}
	}
	if in.BirthDate == "" {
		e.add("birthDate", "required")
	} else if d, err := time.Parse(model.DateLayout, in.BirthDate); err != nil {
		e.add("birthDate", "not a date (want YYYY-MM-DD)")
	} else if d.After(now) {
		e.add("birthDate", "in the future")
	}
	var typ model.PetType
	for _, t := range types {
		if t.ID == in.TypeID {
			typ = t
		}
	}
	if typ.ID == 0 {
		e.add("typeId", "unknown pet type %d", in.TypeID)
	}
	return typ, e.err()
}

func validateVisit(in model.VisitInput, pet model.Pet, now time.Time) error {
	e := &ValidationError{}
	required(e, "description", in.Description, maxText)
	if d, err := time.Parse(model.DateLayout, in.Date); err != nil {
		e.add("date", "not a date (want YYYY-MM-DD)")
	} else if d.After(now.AddDate(1, 0, 0)) {
		e.add("date", "more than a year ahead")
	} else if in.Date < pet.BirthDate {
		e.add("date", "before the pet was born (%s)", pet.BirthDate)
	}
	return e.err()
}
