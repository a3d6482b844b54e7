package database_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tigrisgo/tigris/examples/petclinic/internal/database"
)

// digest hashes every row of every table.
func digest(t *testing.T, db *sql.DB) string {
	t.Helper()
	h := sha256.New()
	for _, q := range []string{
		`SELECT id, first_name, last_name FROM vets ORDER BY id`,
		`SELECT vet_id, specialty_id, 0 FROM vet_specialties ORDER BY vet_id, specialty_id`,
		`SELECT id, first_name || last_name || address || city, telephone FROM owners ORDER BY id`,
		`SELECT id, name || birth_date || type_id, owner_id FROM pets ORDER BY id`,
		`SELECT id, pet_id, visit_date || description FROM visits ORDER BY id`,
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var a, b, c any
			if err := rows.Scan(&a, &b, &c); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(h, a, b, c)
		}
		rows.Close()
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func counts(t *testing.T, db *sql.DB) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"vets", "specialties", "vet_specialties", "types", "owners", "pets", "visits"} {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[table] = n
	}
	return out
}

func TestSeedIsDeterministic(t *testing.T) {
	ctx := context.Background()
	open := func(seed uint64) *database.DB {
		db, err := database.Open(ctx, database.Memory, database.SeedOptions{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	a, b, c := open(1), open(1), open(2)
	n := counts(t, a.DB)
	for table, want := range map[string]int{"vets": 10, "specialties": 6, "types": 6, "owners": 200, "pets": 400, "visits": 1000} {
		if n[table] != want {
			t.Errorf("%s: %d rows, want %d", table, n[table], want)
		}
	}
	if n["vet_specialties"] == 0 {
		t.Error("no vet has a specialty")
	}
	if digest(t, a.DB) != digest(t, b.DB) {
		t.Error("the same seed wrote different data")
	}
	if digest(t, a.DB) == digest(t, c.DB) {
		t.Error("different seeds wrote the same data")
	}
}

func TestTempDatabaseIsRemoved(t *testing.T) {
	db, err := database.Open(context.Background(), database.Temp, database.SeedOptions{Owners: 5, Pets: 5, Visits: 5, Vets: 2})
	if err != nil {
		t.Fatal(err)
	}
	path := db.Location
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("temp database %s: %v", path, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if _, err := os.Stat(path + suffix); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still there after Close: %v", path+suffix, err)
		}
	}
}

func TestFileDatabaseKeepsItsData(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "clinic.db")
	db, err := database.Open(ctx, path, database.SeedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO owners (first_name, last_name, address, city, telephone) VALUES ('a', 'b', 'c', 'd', '1')`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = database.Open(ctx, path, database.SeedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n := counts(t, db.DB); n["owners"] != 201 || n["visits"] != 1000 {
		t.Errorf("reopened file has %d owners and %d visits, want 201 and 1000 (no second seeding)", n["owners"], n["visits"])
	}
}

func TestForeignKeysAreEnforced(t *testing.T) {
	for _, loc := range []string{database.Memory, database.Temp} {
		db, err := database.Open(context.Background(), loc, database.SeedOptions{Owners: 3, Vets: 1})
		if err != nil {
			t.Fatal(err)
		}
		_, err = db.Exec(`INSERT INTO pets (name, birth_date, type_id, owner_id) VALUES ('x', '2020-01-01', 1, 9999)`)
		if err == nil {
			t.Errorf("%s: a pet of a missing owner was inserted", loc)
		}
		db.Close()
	}
}
