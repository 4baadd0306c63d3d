package sessions

import (
	"regexp"
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestLifecycle(t *testing.T) {
	c := &fakeClock{time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)}
	m := NewManager(time.Hour, c.now)
	id := m.Create("ann")
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(id) {
		t.Fatalf("id %q", id)
	}
	if u, ok := m.Lookup(id); !ok || u != "ann" {
		t.Fatalf("Lookup = %q %v", u, ok)
	}
	c.t = c.t.Add(time.Hour)
	if _, ok := m.Lookup(id); ok {
		t.Fatal("expired session still valid")
	}
	id2 := m.Create("bob")
	m.Delete(id2)
	if _, ok := m.Lookup(id2); ok {
		t.Fatal("deleted session still valid")
	}
}
