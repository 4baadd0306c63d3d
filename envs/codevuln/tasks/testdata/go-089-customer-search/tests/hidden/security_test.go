package customers

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
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

var payloads = []string{
	"' OR '1'='1",
	"x' OR 1=1 --",
	"' UNION SELECT id, name, email, country, orders FROM customers --",
	"'; DROP TABLE customers; --",
	"ann@example.com' --",
	"' OR email >= '",
	"DE' AND orders >= 0 ORDER BY name --",
}

func seed() []Customer {
	return []Customer{
		{1, "Ann", "ann@example.com", "DE", 12},
		{2, "Bob", "bob@example.com", "DE", 3},
		{3, "Cy", "cy@example.com", "FR", 7},
	}
}

// checkLog asserts that no logged statement contains the user's text and that
// the text travelled as an argument instead.
func checkLog(t *testing.T, d *fakeDriver, input string) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.log) == 0 {
		t.Fatalf("no query issued for %q", input)
	}
	for _, c := range d.log {
		if strings.Contains(c.query, input) || strings.Contains(c.query, strings.ReplaceAll(input, "'", "''")) {
			t.Errorf("user input reached the SQL text: %q", c.query)
		}
		found := false
		for _, a := range c.args {
			if fmt.Sprint(a) == input {
				found = true
			}
		}
		if !found {
			t.Errorf("input %q was not passed as a bound argument (args %v)", input, c.args)
		}
	}
	d.log = nil
}

func TestInjectionFind(t *testing.T) {
	for _, p := range payloads {
		s, d := openFake(t, seed())
		c, err := s.FindByEmail(context.Background(), p)
		if err == nil {
			t.Errorf("FindByEmail(%q) = %+v", p, c)
		}
		checkLog(t, d, p)
	}
}

func TestInjectionSearch(t *testing.T) {
	for _, p := range payloads {
		s, d := openFake(t, seed())
		got, err := s.Search(context.Background(), p, 0, "name")
		if err != nil || len(got) != 0 {
			t.Errorf("Search(%q) = %+v, %v", p, got, err)
		}
		checkLog(t, d, p)
	}
}

func TestGenerated(t *testing.T) {
	rng := rand.New(rand.NewPCG(89, 1))
	const alphabet = "abcXYZ019'\"-;%_ "
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	var rows []Customer
	for i := 0; i < 40; i++ {
		rows = append(rows, Customer{int64(i + 1), word(5), fmt.Sprintf("%s-%d@x.test", word(4), i), []string{"Genovia", "Narnia", "O'Land"}[rng.IntN(3)], int64(rng.IntN(20))})
	}
	s, d := openFake(t, rows)
	for _, r := range rows {
		c, err := s.FindByEmail(context.Background(), r.Email)
		if err != nil || c.ID != r.ID {
			t.Fatalf("FindByEmail(%q) = %+v, %v", r.Email, c, err)
		}
		checkLog(t, d, r.Email)
	}
	for _, country := range []string{"Genovia", "Narnia", "O'Land"} {
		min := rng.IntN(15)
		got, err := s.Search(context.Background(), country, min, "orders")
		if err != nil {
			t.Fatalf("Search(%q): %v", country, err)
		}
		want := 0
		for _, r := range rows {
			if r.Country == country && r.Orders >= int64(min) {
				want++
			}
		}
		if len(got) != want {
			t.Errorf("Search(%q, %d) returned %d rows, want %d", country, min, len(got), want)
		}
		for i := 1; i < len(got); i++ {
			if got[i-1].Orders < got[i].Orders {
				t.Errorf("not sorted by orders: %+v", got)
			}
		}
		checkLog(t, d, country)
	}
}
