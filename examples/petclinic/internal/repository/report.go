package repository

import (
	"context"
	"database/sql"
	"fmt"
)

// ReportRepository runs the aggregate queries behind the statistics report.
type ReportRepository struct{ db *sql.DB }

// Totals counts the owners, pets and visits.
type Totals struct{ Owners, Pets, Visits int64 }

// TypeMonthCount is the number of visits of pets of one type in one month.
type TypeMonthCount struct {
	Type   string
	Month  string // "2024-03"
	Visits int64
}

// PetVisits is one pet with its owner and the dates of its visits, oldest first.
type PetVisits struct {
	PetID     int64
	OwnerID   int64
	OwnerName string
	Type      string
	Dates     []string // model.DateLayout
}

// Totals returns the number of owners, pets and visits.
func (r *ReportRepository) Totals(ctx context.Context) (Totals, error) {
	var t Totals
	err := r.db.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM owners), (SELECT count(*) FROM pets), (SELECT count(*) FROM visits)`).
		Scan(&t.Owners, &t.Pets, &t.Visits)
	if err != nil {
		return t, fmt.Errorf("counting rows: %w", err)
	}
	return t, nil
}

// VisitsByTypeAndMonth groups every visit by pet type and month.
func (r *ReportRepository) VisitsByTypeAndMonth(ctx context.Context) ([]TypeMonthCount, error) {
	var out []TypeMonthCount
	err := scanAll(ctx, r.db, func(rows *sql.Rows) error {
		var c TypeMonthCount
		if err := rows.Scan(&c.Type, &c.Month, &c.Visits); err != nil {
			return err
		}
		out = append(out, c)
		return nil
	}, `SELECT t.name, substr(v.visit_date, 1, 7) AS month, count(*)
		FROM visits v JOIN pets p ON p.id = v.pet_id JOIN types t ON t.id = p.type_id
		GROUP BY t.name, month ORDER BY t.name, month`)
	if err != nil {
		return nil, fmt.Errorf("grouping visits: %w", err)
	}
	return out, nil
}

// PetVisits returns every pet with its owner and visit dates (pets without visits
// included, with no dates), ordered by pet id.
func (r *ReportRepository) PetVisits(ctx context.Context) ([]PetVisits, error) {
	var out []PetVisits
	err := scanAll(ctx, r.db, func(rows *sql.Rows) error {
		var (
			pv   PetVisits
			date sql.NullString
		)
		if err := rows.Scan(&pv.PetID, &pv.OwnerID, &pv.OwnerName, &pv.Type, &date); err != nil {
			return err
		}
		if n := len(out); n > 0 && out[n-1].PetID == pv.PetID {
			out[n-1].Dates = append(out[n-1].Dates, date.String)
			return nil
		}
		if date.Valid {
			pv.Dates = []string{date.String}
		}
		out = append(out, pv)
		return nil
	}, `SELECT p.id, o.id, o.first_name || ' ' || o.last_name, t.name, v.visit_date
		FROM pets p JOIN owners o ON o.id = p.owner_id JOIN types t ON t.id = p.type_id
		LEFT JOIN visits v ON v.pet_id = p.id
		ORDER BY p.id, v.visit_date, v.id`)
	if err != nil {
		return nil, fmt.Errorf("listing visits per pet: %w", err)
	}
	return out, nil
}
