// Package model holds the PetClinic domain types shared by the repository, service and
// handler layers. The types are plain values with JSON tags; they carry no behaviour.
package model

// DateLayout is how dates (birth dates, visit dates) are written in the database and
// in JSON: a calendar day without time or zone.
const DateLayout = "2006-01-02"

// Owner is a client of the clinic. Pets is filled by the operations that say so.
type Owner struct {
	ID        int64  `json:"id"`
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	Address   string `json:"address"`
	City      string `json:"city"`
	Telephone string `json:"telephone"`
	Pets      []Pet  `json:"pets"`
}

// Pet belongs to one owner. Visits is filled by the operations that say so.
type Pet struct {
	ID        int64   `json:"id"`
	OwnerID   int64   `json:"ownerId"`
	Name      string  `json:"name"`
	BirthDate string  `json:"birthDate"` // DateLayout
	Type      PetType `json:"type"`
	Visits    []Visit `json:"visits,omitzero"` // nil: not loaded
}

// PetType is a kind of animal: cat, dog, ...
type PetType struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// Visit is one appointment of a pet.
type Visit struct {
	ID          int64  `json:"id"`
	PetID       int64  `json:"petId"`
	Date        string `json:"date"` // DateLayout
	Description string `json:"description"`
}

// Vet is a veterinarian with zero or more specialties.
type Vet struct {
	ID          int64       `json:"id"`
	FirstName   string      `json:"firstName"`
	LastName    string      `json:"lastName"`
	Specialties []Specialty `json:"specialties"`
}

// Specialty is a field a vet is qualified in (radiology, surgery, ...).
type Specialty struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// OwnerInput is what a client sends to create or update an owner.
type OwnerInput struct {
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	Address   string `json:"address"`
	City      string `json:"city"`
	Telephone string `json:"telephone"`
}

// PetInput is what a client sends to add a pet to an owner.
type PetInput struct {
	Name      string `json:"name"`
	BirthDate string `json:"birthDate"` // DateLayout
	TypeID    int64  `json:"typeId"`
}

// VisitInput is what a client sends to book a visit. An empty Date means today.
type VisitInput struct {
	Date        string `json:"date"` // DateLayout
	Description string `json:"description"`
}

// VisitReport is the clinic statistics report: visits per pet type and month, the
// busiest owners, and bootstrap estimates of visits per pet. Building it is expensive.
type VisitReport struct {
	Owners        int64           `json:"owners"`
	Pets          int64           `json:"pets"`
	Visits        int64           `json:"visits"`
	ByType        []TypeVisits    `json:"byType"`
	ByMonth       []MonthVisits   `json:"byMonth"`
	TopOwners     []OwnerActivity `json:"topOwners"`
	VisitsPerPet  Estimate        `json:"visitsPerPet"`
	MedianGapDays float64         `json:"medianGapDays"` // median days between visits of a pet
}

// TypeVisits counts the visits of the pets of one type.
type TypeVisits struct {
	Type   string  `json:"type"`
	Pets   int64   `json:"pets"`
	Visits int64   `json:"visits"`
	Share  float64 `json:"share"` // of all visits
}

// MonthVisits counts the visits in one calendar month ("2024-03").
type MonthVisits struct {
	Month  string `json:"month"`
	Visits int64  `json:"visits"`
}

// OwnerActivity is an owner and the number of visits of their pets.
type OwnerActivity struct {
	OwnerID int64  `json:"ownerId"`
	Name    string `json:"name"`
	Visits  int64  `json:"visits"`
}

// Estimate is a mean with a 95% bootstrap confidence interval.
type Estimate struct {
	Mean float64 `json:"mean"`
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}
