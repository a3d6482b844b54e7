package repository

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tigrisgo/tigris/examples/petclinic/internal/model"
)

// VetRepository reads vets and their specialties.
type VetRepository struct{ db *sql.DB }

// FindAll returns every vet with its specialties, ordered by last and first name.
//
// Like the lazily loaded collection of the original Spring PetClinic, it runs one query
// for the vets and then one per vet for its specialties: the result hardly ever
// changes, but reading it costs 1+N queries every time. It is the clinic's cacheable
// hot spot.
func (r *VetRepository) FindAll(ctx context.Context) ([]model.Vet, error) {
	vets := []model.Vet{}
	err := scanAll(ctx, r.db, func(rows *sql.Rows) error {
		var v model.Vet
		if err := rows.Scan(&v.ID, &v.FirstName, &v.LastName); err != nil {
			return err
		}
		vets = append(vets, v)
		return nil
	}, `SELECT id, first_name, last_name FROM vets ORDER BY last_name, first_name, id`)
	if err != nil {
		return nil, fmt.Errorf("finding vets: %w", err)
	}
	for i := range vets {
		specs, err := r.FindSpecialties(ctx, vets[i].ID)
		if err != nil {
			return nil, err
		}
		vets[i].Specialties = specs
	}
	return vets, nil
}

// FindSpecialties returns the specialties of one vet, ordered by name.
func (r *VetRepository) FindSpecialties(ctx context.Context, vetID int64) ([]model.Specialty, error) {
	specs := []model.Specialty{}
	err := scanAll(ctx, r.db, func(rows *sql.Rows) error {
		var s model.Specialty
		if err := rows.Scan(&s.ID, &s.Name); err != nil {
			return err
		}
		specs = append(specs, s)
		return nil
	}, `SELECT s.id, s.name FROM specialties s
		JOIN vet_specialties vs ON vs.specialty_id = s.id
		WHERE vs.vet_id = ? ORDER BY s.name`, vetID)
	if err != nil {
		return nil, fmt.Errorf("finding specialties of vet %d: %w", vetID, err)
	}
	return specs, nil
}
