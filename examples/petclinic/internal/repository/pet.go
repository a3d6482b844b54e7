package repository

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tigrisgo/tigris/examples/petclinic/internal/model"
)

// PetRepository reads and writes pets and reads pet types.
type PetRepository struct{ db *sql.DB }

const petSelect = `SELECT p.id, p.owner_id, p.name, p.birth_date, t.id, t.name
	FROM pets p JOIN types t ON t.id = p.type_id`

func scanPet(s interface{ Scan(...any) error }, p *model.Pet) error {
	return s.Scan(&p.ID, &p.OwnerID, &p.Name, &p.BirthDate, &p.Type.ID, &p.Type.Name)
}

func (r *PetRepository) list(ctx context.Context, what string, query string, args ...any) ([]model.Pet, error) {
	pets := []model.Pet{}
	err := scanAll(ctx, r.db, func(rows *sql.Rows) error {
		var p model.Pet
		if err := scanPet(rows, &p); err != nil {
			return err
		}
		pets = append(pets, p)
		return nil
	}, query, args...)
	if err != nil {
		return nil, fmt.Errorf("finding pets of %s: %w", what, err)
	}
	return pets, nil
}

// FindByOwner returns the pets of one owner, ordered by name, without visits.
func (r *PetRepository) FindByOwner(ctx context.Context, ownerID int64) ([]model.Pet, error) {
	return r.list(ctx, fmt.Sprintf("owner %d", ownerID),
		petSelect+` WHERE p.owner_id = ? ORDER BY p.name, p.id`, ownerID)
}

// FindByOwnerLastName returns the pets of every owner whose last name starts with
// prefix (the owners [OwnerRepository.FindByLastName] returns), without visits.
func (r *PetRepository) FindByOwnerLastName(ctx context.Context, prefix string) ([]model.Pet, error) {
	return r.list(ctx, fmt.Sprintf("owners %q", prefix),
		petSelect+` JOIN owners o ON o.id = p.owner_id
		WHERE o.last_name LIKE ? ESCAPE '\' ORDER BY p.owner_id, p.name, p.id`, likePrefix(prefix))
}

// FindByID returns a pet, or an error wrapping ErrNotFound.
func (r *PetRepository) FindByID(ctx context.Context, id int64) (model.Pet, error) {
	var p model.Pet
	if err := scanPet(r.db.QueryRowContext(ctx, petSelect+` WHERE p.id = ?`, id), &p); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return p, fmt.Errorf("pet %d: %w", id, ErrNotFound)
		}
		return p, fmt.Errorf("finding pet %d: %w", id, err)
	}
	return p, nil
}

// Insert stores a new pet of owner ownerID and returns its id.
func (r *PetRepository) Insert(ctx context.Context, ownerID int64, in model.PetInput) (int64, error) {
	res, err := r.db.ExecContext(ctx,
		`INSERT INTO pets (name, birth_date, type_id, owner_id) VALUES (?, ?, ?, ?)`,
		in.Name, in.BirthDate, in.TypeID, ownerID)
	if err != nil {
		return 0, fmt.Errorf("inserting pet of owner %d: %w", ownerID, err)
	}
	return res.LastInsertId()
}

// FindPetTypes returns every pet type, ordered by name.
func (r *PetRepository) FindPetTypes(ctx context.Context) ([]model.PetType, error) {
	types := []model.PetType{}
	err := scanAll(ctx, r.db, func(rows *sql.Rows) error {
		var t model.PetType
		if err := rows.Scan(&t.ID, &t.Name); err != nil {
			return err
		}
		types = append(types, t)
		return nil
	}, `SELECT id, name FROM types ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("finding pet types: %w", err)
	}
	return types, nil
}
