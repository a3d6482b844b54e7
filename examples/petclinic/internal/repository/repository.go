// Package repository is the SQL layer of PetClinic: one repository type per aggregate,
// each a thin set of queries over a *sql.DB. Repositories are safe for concurrent use.
//
// Every method reads its result set to the end before it runs the next query, so the
// repositories also work over a one-connection pool (the in-memory database).
package repository

import (
	"context"
	"database/sql"
	"errors"
	"strings"
)

// ErrNotFound is returned (wrapped) when a row looked up by id does not exist.
var ErrNotFound = errors.New("not found")

// Store groups the repositories over one database.
type Store struct {
	Owners  *OwnerRepository
	Pets    *PetRepository
	Visits  *VisitRepository
	Vets    *VetRepository
	Reports *ReportRepository

	db *sql.DB
}

// New returns the repositories over db.
func New(db *sql.DB) *Store {
	return &Store{
		Owners:  &OwnerRepository{db: db},
		Pets:    &PetRepository{db: db},
		Visits:  &VisitRepository{db: db},
		Vets:    &VetRepository{db: db},
		Reports: &ReportRepository{db: db},
		db:      db,
	}
}

// Ping checks that the database answers a query.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	return s.db.QueryRowContext(ctx, `SELECT 1`).Scan(&one)
}

// likePrefix turns a user-typed prefix into a LIKE pattern matching it literally.
func likePrefix(prefix string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(prefix) + "%"
}

// scanAll runs query and calls scan for every row, closing the rows before it returns.
func scanAll(ctx context.Context, db *sql.DB, scan func(*sql.Rows) error, query string, args ...any) error {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
