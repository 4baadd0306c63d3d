package customers

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ErrNotFound is returned when no customer matches.
var ErrNotFound = errors.New("customers: not found")

// Customer is one row of the customers table.
type Customer struct {
	ID      int64
	Name    string
	Email   string
	Country string
	Orders  int64
}

// Store reads customers from a SQL database.
type Store struct{ db *sql.DB }

// New returns a Store using db.
func New(db *sql.DB) *Store { return &Store{db: db} }

var sortColumns = map[string]string{"name": "name", "orders": "orders DESC", "email": "email"}

const columns = "SELECT id, name, email, country, orders FROM customers"

// FindByEmail returns the customer with exactly this e-mail address.
func (s *Store) FindByEmail(ctx context.Context, email string) (*Customer, error) {
	rows, err := s.db.QueryContext(ctx, columns+" WHERE email = ?", email)
	if err != nil {
		return nil, fmt.Errorf("customers: find %q: %w", email, err)
	}
	list, err := scan(rows)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, ErrNotFound
	}
	return &list[0], nil
}

// Search lists customers of country with at least minOrders orders.
func (s *Store) Search(ctx context.Context, country string, minOrders int, sortBy string) ([]Customer, error) {
	order, ok := sortColumns[sortBy]
	if !ok {
		return nil, fmt.Errorf("customers: cannot sort by %q", sortBy)
	}
	// order comes from the fixed sortColumns map, never from the caller's text.
	rows, err := s.db.QueryContext(ctx, columns+" WHERE country = ? AND orders >= ? ORDER BY "+order, country, minOrders)
	if err != nil {
		return nil, fmt.Errorf("customers: search: %w", err)
	}
	return scan(rows)
}

func scan(rows *sql.Rows) ([]Customer, error) {
	defer rows.Close()
	var out []Customer
	for rows.Next() {
		var c Customer
		if err := rows.Scan(&c.ID, &c.Name, &c.Email, &c.Country, &c.Orders); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
