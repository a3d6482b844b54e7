// Package database opens the PetClinic SQLite database, creates its schema and fills it
// with deterministic sample data.
//
// The driver is modernc.org/sqlite, a pure-Go SQLite: no cgo is needed.
//
// # Locations
//
// [Open] takes a location:
//
//   - ":memory:" (or "") — a private in-memory database. It lives in one connection, so
//     the pool is limited to that connection and every query waits for the previous
//     one: code must read a result set to the end before it starts the next query.
//   - "temp" — a new file in the system temp directory, removed by [DB.Close].
//   - any other value — a file path. The schema is created if it is missing and the
//     sample data is loaded only when the database has no owners yet, so a file keeps
//     what was written to it across runs.
//
// File databases use WAL journaling, a busy timeout and immediate transactions, and
// allow several connections.
package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Memory is the location of a private in-memory database.
const Memory = ":memory:"

// Temp is the location of a fresh temporary file database.
const Temp = "temp"

// DB is an open clinic database. Its embedded *sql.DB is safe for concurrent use.
type DB struct {
	*sql.DB
	// Location is where the database lives: ":memory:" or a file path.
	Location string

	removeFile string // set for Temp: deleted by Close
	closed     bool
}

// Open opens the database at location (see the package documentation), creates the
// schema and, when the database holds no owners, loads the sample data described by
// seed. The caller must Close the DB.
func Open(ctx context.Context, location string, seed SeedOptions) (*DB, error) {
	d := &DB{Location: location}
	var dsn string
	switch location {
	case "", Memory:
		d.Location = Memory
		dsn = "file::memory:?_pragma=foreign_keys(1)"
	case Temp:
		f, err := os.CreateTemp("", "petclinic-*.db")
		if err != nil {
			return nil, fmt.Errorf("creating temp database: %w", err)
		}
		f.Close()
		d.Location, d.removeFile = f.Name(), f.Name()
		dsn = fileDSN(f.Name())
	default:
		dsn = fileDSN(location)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		d.cleanup()
		return nil, fmt.Errorf("opening %s: %w", d.Location, err)
	}
	d.DB = db
	if d.Location == Memory {
		// Every connection to :memory: is a database of its own: keep one.
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
	} else {
		db.SetMaxOpenConns(4)
		db.SetMaxIdleConns(4)
	}
	if err := d.prepare(ctx, seed); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

func fileDSN(path string) string {
	return "file:" + path +
		"?_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)" +
		"&_pragma=synchronous(NORMAL)&_txlock=immediate"
}

func (d *DB) prepare(ctx context.Context, seed SeedOptions) error {
	if _, err := d.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("creating schema in %s: %w", d.Location, err)
	}
	var owners int64
	if err := d.QueryRowContext(ctx, `SELECT count(*) FROM owners`).Scan(&owners); err != nil {
		return fmt.Errorf("counting owners in %s: %w", d.Location, err)
	}
	if owners > 0 {
		return nil
	}
	if err := Seed(ctx, d.DB, seed); err != nil {
		return fmt.Errorf("seeding %s: %w", d.Location, err)
	}
	return nil
}

// Close closes the database and removes a temporary file. A second call does nothing.
// Close must not be called concurrently with itself.
func (d *DB) Close() error {
	if d.closed {
		return nil
	}
	d.closed = true
	var err error
	if d.DB != nil {
		err = d.DB.Close()
	}
	return errors.Join(err, d.cleanup())
}

func (d *DB) cleanup() error {
	if d.removeFile == "" {
		return nil
	}
	name := d.removeFile
	d.removeFile = ""
	var errs []error
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(name + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

const schema = `
CREATE TABLE IF NOT EXISTS vets (
	id         INTEGER PRIMARY KEY,
	first_name TEXT NOT NULL,
	last_name  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS specialties (
	id   INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS vet_specialties (
	vet_id       INTEGER NOT NULL REFERENCES vets(id),
	specialty_id INTEGER NOT NULL REFERENCES specialties(id),
	PRIMARY KEY (vet_id, specialty_id)
);
CREATE TABLE IF NOT EXISTS types (
	id   INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS owners (
	id         INTEGER PRIMARY KEY,
	first_name TEXT NOT NULL,
	last_name  TEXT NOT NULL,
	address    TEXT NOT NULL,
	city       TEXT NOT NULL,
	telephone  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS owners_last_name ON owners(last_name);
CREATE TABLE IF NOT EXISTS pets (
	id         INTEGER PRIMARY KEY,
	name       TEXT NOT NULL,
	birth_date TEXT NOT NULL,
	type_id    INTEGER NOT NULL REFERENCES types(id),
	owner_id   INTEGER NOT NULL REFERENCES owners(id)
);
CREATE INDEX IF NOT EXISTS pets_owner_id ON pets(owner_id);
CREATE TABLE IF NOT EXISTS visits (
	id          INTEGER PRIMARY KEY,
	pet_id      INTEGER NOT NULL REFERENCES pets(id),
	visit_date  TEXT NOT NULL,
	description TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS visits_pet_id ON visits(pet_id);
`
