package database

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/tigrisgo/tigris/examples/petclinic/internal/model"
)

// SeedOptions says how much sample data [Seed] writes. The zero value means the
// defaults: 10 vets, 6 specialties, 6 pet types, 200 owners, 400 pets, 1000 visits,
// RNG seed 1.
type SeedOptions struct {
	Seed    uint64 // RNG seed; the same seed writes the same data
	Vets    int
	Owners  int
	Pets    int // at least Owners: every owner gets one pet, the rest are spread
	Visits  int
	BaseDay time.Time // visits fall in the three years before it; default 2026-01-01
}

func (o SeedOptions) withDefaults() SeedOptions {
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Vets <= 0 {
		o.Vets = 10
	}
	if o.Owners <= 0 {
		o.Owners = 200
	}
	if o.Pets <= 0 {
		o.Pets = 2 * o.Owners
	}
	if o.Pets < o.Owners {
		o.Pets = o.Owners
	}
	if o.Visits <= 0 {
		o.Visits = 1000
	}
	if o.BaseDay.IsZero() {
		o.BaseDay = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return o
}

// Specialties are the vet specialties the sample data uses, with ids 1..6.
var Specialties = []string{"radiology", "surgery", "dentistry", "cardiology", "dermatology", "oncology"}

// PetTypes are the pet types the sample data uses, with ids 1..6.
var PetTypes = []string{"bird", "cat", "dog", "hamster", "lizard", "snake"}

var firstNames = []string{
	"George", "Betty", "Eduardo", "Harold", "Peter", "Jean", "Jeff", "Maria", "David",
	"Carlos", "James", "Helen", "Linda", "Rafael", "Henry", "Sharon", "Ana", "Tomás",
	"Yuki", "Amara", "Oskar", "Priya", "Liam", "Noor", "Chen", "Fatima", "Igor", "Zoe",
}

// lastNames are drawn with a Zipf distribution, so a few names (and the prefixes they
// start with) are very common and most are rare: searches by prefix return anything
// from nothing to a large part of the owners.
var lastNames = []string{
	"Davis", "Franklin", "Black", "Rodriquez", "Coleman", "Douglas", "Escobito",
	"McTavish", "Schroeder", "Estaban", "Carter", "Leary", "Ortega", "Stevens", "Jenkins",
	"Sharp", "Daniels", "Brown", "Dawson", "Murphy", "Nakamura", "Okafor", "Petrov",
	"Quinn", "Underwood", "Vasquez", "Wagner", "Xu", "Young", "Zimmermann", "Abbott",
	"Irving", "Kowalski", "Lindqvist", "Gallagher", "Haddad", "Tanaka", "Fischer",
}

var streets = []string{"Main St.", "Oak Ave.", "Maple Ln.", "Cedar Rd.", "Elm St.", "Pine Ct.", "Lake Dr."}

var cities = []string{"Madison", "Sun Prairie", "McFarland", "Windsor", "Monona", "Waunakee", "Middleton"}

var petNames = []string{
	"Leo", "Basil", "Rosy", "Jewel", "Iggy", "George", "Samantha", "Max", "Lucky",
	"Mulligan", "Freddy", "Sly", "Bella", "Coco", "Milo", "Luna", "Nala", "Oreo",
	"Pepper", "Rocky", "Simba", "Toby", "Willow", "Ziggy",
}

var visitReasons = []string{
	"rabies shot", "neutered", "spayed", "annual checkup", "dental cleaning",
	"skin rash", "limping", "vaccination", "x-ray", "weight check", "ear infection",
	"follow-up", "allergy test", "blood work",
}

// Seed writes the sample data into an empty database with the schema in place, in one
// transaction. The same options always write the same rows.
func Seed(ctx context.Context, db *sql.DB, opts SeedOptions) (err error) {
	o := opts.withDefaults()
	rng := rand.New(rand.NewPCG(o.Seed, 0x7e1e_c11c))
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	exec := func(query string, args ...any) error {
		_, err := tx.ExecContext(ctx, query, args...)
		if err != nil {
			return fmt.Errorf("%s: %w", strings.Fields(query)[2], err)
		}
		return nil
	}

	for i, name := range Specialties {
		if err := exec(`INSERT INTO specialties (id, name) VALUES (?, ?)`, i+1, name); err != nil {
			return err
		}
	}
	for i, name := range PetTypes {
		if err := exec(`INSERT INTO types (id, name) VALUES (?, ?)`, i+1, name); err != nil {
			return err
		}
	}
	for id := 1; id <= o.Vets; id++ {
		first := firstNames[rng.IntN(len(firstNames))]
		last := lastNames[rng.IntN(len(lastNames))]
		if err := exec(`INSERT INTO vets (id, first_name, last_name) VALUES (?, ?, ?)`, id, first, last); err != nil {
			return err
		}
		// Zero to three distinct specialties.
		for _, s := range rng.Perm(len(Specialties))[:rng.IntN(4)] {
			if err := exec(`INSERT INTO vet_specialties (vet_id, specialty_id) VALUES (?, ?)`, id, s+1); err != nil {
				return err
			}
		}
	}

	zipf := rand.NewZipf(rng, 1.3, 2, uint64(len(lastNames)-1))
	for id := 1; id <= o.Owners; id++ {
		first := firstNames[rng.IntN(len(firstNames))]
		last := lastNames[zipf.Uint64()]
		addr := fmt.Sprintf("%d %s", 1+rng.IntN(999), streets[rng.IntN(len(streets))])
		city := cities[rng.IntN(len(cities))]
		phone := fmt.Sprintf("608%07d", rng.IntN(10_000_000))
		if err := exec(`INSERT INTO owners (id, first_name, last_name, address, city, telephone) VALUES (?, ?, ?, ?, ?, ?)`,
			id, first, last, addr, city, phone); err != nil {
			return err
		}
	}

	// Every owner has one pet; the others go to random owners. Pet names are unique
	// per owner.
	ownerPets := make(map[int]map[string]bool, o.Owners)
	for id := 1; id <= o.Pets; id++ {
		owner := id
		if id > o.Owners {
			owner = 1 + rng.IntN(o.Owners)
		}
		if ownerPets[owner] == nil {
			ownerPets[owner] = map[string]bool{}
		}
		name := petNames[rng.IntN(len(petNames))]
		for n := 2; ownerPets[owner][name]; n++ {
			name = fmt.Sprintf("%s %d", petNames[rng.IntN(len(petNames))], n)
		}
		ownerPets[owner][name] = true
		birth := o.BaseDay.AddDate(-3-rng.IntN(13), 0, -rng.IntN(365)) // before every visit
		typ := 1 + rng.IntN(len(PetTypes))
		if err := exec(`INSERT INTO pets (id, name, birth_date, type_id, owner_id) VALUES (?, ?, ?, ?, ?)`,
			id, name, birth.Format(model.DateLayout), typ, owner); err != nil {
			return err
		}
	}

	for id := 1; id <= o.Visits; id++ {
		pet := 1 + rng.IntN(o.Pets)
		day := o.BaseDay.AddDate(0, 0, -1-rng.IntN(3*365))
		reason := visitReasons[rng.IntN(len(visitReasons))]
		if err := exec(`INSERT INTO visits (id, pet_id, visit_date, description) VALUES (?, ?, ?, ?)`,
			id, pet, day.Format(model.DateLayout), reason); err != nil {
			return err
		}
	}
	return tx.Commit()
}
