package repository

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tigrisgo/tigris/examples/petclinic/internal/model"
)

// OwnerRepository reads and writes owners.
type OwnerRepository struct{ db *sql.DB }

const ownerColumns = `id, first_name, last_name, address, city, telephone`

func scanOwner(s interface{ Scan(...any) error }, o *model.Owner) error {
	return s.Scan(&o.ID, &o.FirstName, &o.LastName, &o.Address, &o.City, &o.Telephone)
}

// FindByID returns the owner with the given id, without pets, or an error wrapping
// ErrNotFound.
func (r *OwnerRepository) FindByID(ctx context.Context, id int64) (model.Owner, error) {
	var o model.Owner
	row := r.db.QueryRowContext(ctx, `SELECT `+ownerColumns+` FROM owners WHERE id = ?`, id)
	if err := scanOwner(row, &o); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return o, fmt.Errorf("owner %d: %w", id, ErrNotFound)
		}
		return o, fmt.Errorf("finding owner %d: %w", id, err)
	}
	return o, nil
}

// FindByLastName returns the owners whose last name starts with prefix (ignoring ASCII
// case), ordered by last name and id, without pets. An empty prefix returns every owner.
func (r *OwnerRepository) FindByLastName(ctx context.Context, prefix string) ([]model.Owner, error) {
	owners := []model.Owner{}
	err := scanAll(ctx, r.db, func(rows *sql.Rows) error {
		var o model.Owner
		if err := scanOwner(rows, &o); err != nil {
			return err
		}
		owners = append(owners, o)
		return nil
	}, `SELECT `+ownerColumns+` FROM owners WHERE last_name LIKE ? ESCAPE '\' ORDER BY last_name, id`,
		likePrefix(prefix))
	if err != nil {
		return nil, fmt.Errorf("finding owners by last name %q: %w", prefix, err)
	}
	return owners, nil
}

// Insert stores a new owner and returns its id.
func (r *OwnerRepository) Insert(ctx context.Context, in model.OwnerInput) (int64, error) {
	res, err := r.db.ExecContext(ctx,
		`INSERT INTO owners (first_name, last_name, address, city, telephone) VALUES (?, ?, ?, ?, ?)`,
		in.FirstName, in.LastName, in.Address, in.City, in.Telephone)
	if err != nil {
		return 0, fmt.Errorf("inserting owner: %w", err)
	}
	return res.LastInsertId()
}

// Update replaces the fields of owner id, or returns an error wrapping ErrNotFound.
func (r *OwnerRepository) Update(ctx context.Context, id int64, in model.OwnerInput) error {
	res, err := r.db.ExecContext(ctx,
		`UPDATE owners SET first_name = ?, last_name = ?, address = ?, city = ?, telephone = ? WHERE id = ?`,
		in.FirstName, in.LastName, in.Address, in.City, in.Telephone, id)
	if err != nil {
		return fmt.Errorf("updating owner %d: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("updating owner %d: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("owner %d: %w", id, ErrNotFound)
	}
	return nil
}
