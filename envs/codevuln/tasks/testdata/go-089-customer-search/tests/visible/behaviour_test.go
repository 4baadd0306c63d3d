package customers

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeDriver is a tiny in-memory SQL engine understanding only the statements
// this store issues, with either bound parameters or inline literals. It logs
// every statement so tests can check what reached the database.
type fakeDriver struct {
	mu   sync.Mutex
	rows []Customer
	log  []fakeCall
}

type fakeCall struct {
	query string
	args  []any
}

func (d *fakeDriver) Open(string) (driver.Conn, error) { return &fakeConn{d}, nil }

type fakeConn struct{ d *fakeDriver }

func (c *fakeConn) Prepare(q string) (driver.Stmt, error) {
	return nil, errors.New("prepare unsupported")
}
func (c *fakeConn) Close() error              { return nil }
func (c *fakeConn) Begin() (driver.Tx, error) { return nil, errors.New("tx unsupported") }

var (
	stmtRe = regexp.MustCompile(`^SELECT id, name, email, country, orders FROM customers WHERE (.+?)(?: ORDER BY (name|email|orders)( DESC)?)?$`)
	condRe = regexp.MustCompile(`^(email|country|orders) (=|>=) (\?|'[^']*'|-?[0-9]+)$`)
)

func (c *fakeConn) QueryContext(_ context.Context, q string, named []driver.NamedValue) (driver.Rows, error) {
	args := make([]any, len(named))
	for i, n := range named {
		args[i] = n.Value
	}
	c.d.mu.Lock()
	defer c.d.mu.Unlock()
	c.d.log = append(c.d.log, fakeCall{q, args})
	m := stmtRe.FindStringSubmatch(q)
	if m == nil {
		return nil, fmt.Errorf("fakesql: syntax error in %q", q)
	}
	type cond struct {
		col, op string
		val     any
	}
	var conds []cond
	next := 0
	for _, part := range strings.Split(m[1], " AND ") {
		cm := condRe.FindStringSubmatch(part)
		if cm == nil {
			return nil, fmt.Errorf("fakesql: syntax error near %q", part)
		}
		var v any
		switch {
		case cm[3] == "?":
			if next >= len(args) {
				return nil, errors.New("fakesql: missing argument")
			}
			v = args[next]
			next++
		case strings.HasPrefix(cm[3], "'"):
			v = strings.Trim(cm[3], "'")
		default:
			n, _ := strconv.ParseInt(cm[3], 10, 64)
			v = n
		}
		conds = append(conds, cond{cm[1], cm[2], v})
	}
	if next != len(args) {
		return nil, errors.New("fakesql: too many arguments")
	}
	var out []Customer
	for _, r := range c.d.rows {
		ok := true
		for _, cd := range conds {
			switch cd.col {
			case "email":
				ok = ok && fmt.Sprint(cd.val) == r.Email
			case "country":
				ok = ok && fmt.Sprint(cd.val) == r.Country
			case "orders":
				n, err := strconv.ParseInt(fmt.Sprint(cd.val), 10, 64)
				ok = ok && err == nil && r.Orders >= n
			}
		}
		if ok {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		switch m[2] {
		case "email":
			return out[i].Email < out[j].Email
		case "orders":
			return out[i].Orders > out[j].Orders
		default:
			return out[i].Name < out[j].Name
		}
	})
	return &fakeRows{rows: out}, nil
}

type fakeRows struct {
	rows []Customer
	i    int
}

func (r *fakeRows) Columns() []string { return []string{"id", "name", "email", "country", "orders"} }
func (r *fakeRows) Close() error      { return nil }
func (r *fakeRows) Next(dest []driver.Value) error {
	if r.i >= len(r.rows) {
		return io.EOF
	}
	c := r.rows[r.i]
	r.i++
	dest[0], dest[1], dest[2], dest[3], dest[4] = c.ID, c.Name, c.Email, c.Country, c.Orders
	return nil
}

var fakeSeq atomic.Int64

func openFake(t *testing.T, rows []Customer) (*Store, *fakeDriver) {
	t.Helper()
	d := &fakeDriver{rows: rows}
	name := fmt.Sprintf("fakesql-%d", fakeSeq.Add(1))
	sql.Register(name, d)
	db, err := sql.Open(name, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return New(db), d
}

var people = []Customer{
	{1, "Ann", "ann@example.com", "DE", 12},
	{2, "Bob", "bob@example.com", "DE", 3},
	{3, "Cy", "cy@example.com", "FR", 7},
	{4, "Dee", "dee@example.com", "DE", 30},
}

func TestFindByEmail(t *testing.T) {
	s, _ := openFake(t, people)
	c, err := s.FindByEmail(context.Background(), "cy@example.com")
	if err != nil || c.Name != "Cy" || c.Orders != 7 {
		t.Fatalf("FindByEmail = %+v, %v", c, err)
	}
	if _, err := s.FindByEmail(context.Background(), "zed@example.com"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing customer: %v", err)
	}
}

func TestSearch(t *testing.T) {
	s, _ := openFake(t, people)
	got, err := s.Search(context.Background(), "DE", 5, "orders")
	if err != nil || len(got) != 2 || got[0].Name != "Dee" || got[1].Name != "Ann" {
		t.Fatalf("Search = %+v, %v", got, err)
	}
	got, err = s.Search(context.Background(), "DE", 0, "name")
	if err != nil || len(got) != 3 || got[0].Name != "Ann" {
		t.Fatalf("Search by name = %+v, %v", got, err)
	}
	if _, err := s.Search(context.Background(), "DE", 0, "id; DROP TABLE customers"); err == nil {
		t.Fatal("bad sort column accepted")
	}
}
