package repository

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tigrisgo/tigris/examples/petclinic/internal/model"
)

// VisitRepository reads and writes visits.
type VisitRepository struct{ db *sql.DB }

// FindByOwner returns the visits of every pet of one owner, newest first.
func (r *VisitRepository) FindByOwner(ctx context.Context, ownerID int64) ([]model.Visit, error) {
	visits := []model.Visit{}
	err := scanAll(ctx, r.db, func(rows *sql.Rows) error {
		var v model.Visit
		if err := rows.Scan(&v.ID, &v.PetID, &v.Date, &v.Description); err != nil {
			return err
		}
		visits = append(visits, v)
		return nil
	}, `SELECT v.id, v.pet_id, v.visit_date, v.description
		FROM visits v JOIN pets p ON p.id = v.pet_id
		WHERE p.owner_id = ? ORDER BY v.visit_date DESC, v.id DESC`, ownerID)
	if err != nil {
		return nil, fmt.Errorf("finding visits of owner %d: %w", ownerID, err)
	}
	return visits, nil
}

// Insert stores a new visit of pet petID and returns its id.
func (r *VisitRepository) Insert(ctx context.Context, petID int64, in model.VisitInput) (int64, error) {
	res, err := r.db.ExecContext(ctx,
		`INSERT INTO visits (pet_id, visit_date, description) VALUES (?, ?, ?)`,
		petID, in.Date, in.Description)
	if err != nil {
		return 0, fmt.Errorf("inserting visit of pet %d: %w", petID, err)
	}
	return res.LastInsertId()
}
