package sessions

import (
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/cryptotest"
	"time"
)

var idRe = regexp.MustCompile(`^[0-9a-f]{32}$`)

// Two managers started at the same instant (an attacker replaying the login
// time) must not issue the same ids.
func TestNotDerivedFromClock(t *testing.T) {
	rng := rand.New(rand.NewPCG(330, 5))
	for i := 0; i < 20; i++ {
		at := time.Unix(1_700_000_000+int64(rng.IntN(1_000_000)), int64(rng.IntN(1e9)))
		clock := func() time.Time { return at }
		a, b := NewManager(time.Hour, clock), NewManager(time.Hour, clock)
		for j := 0; j < 3; j++ {
			if x, y := a.Create("victim"), b.Create("attacker"); x == y {
				t.Fatalf("identical session ids %q from two managers at %v", x, at)
			}
		}
	}
}

func TestGeneratedProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(330, 6))
	now := time.Unix(1_700_000_000, 0)
	m := NewManager(time.Minute, func() time.Time { return now })
	seen := map[string]string{}
	var bits [128]int
	for i := 0; i < 2000; i++ {
		user := string(rune('a' + rng.IntN(26)))
		id := m.Create(user)
		if !idRe.MatchString(id) {
			t.Fatalf("id %q", id)
		}
		if _, dup := seen[id]; dup {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = user
		for j := 0; j < 32; j++ {
			v := int(id[j]-'0') & 0xf
			if id[j] >= 'a' {
				v = int(id[j]-'a') + 10
			}
			for k := 0; k < 4; k++ {
				bits[j*4+k] += v >> k & 1
			}
		}
	}
	for i, n := range bits {
		if n < 850 || n > 1150 {
			t.Errorf("bit %d set in %d of 2000 ids", i, n)
		}
	}
	for id, user := range seen {
		if u, ok := m.Lookup(id); !ok || u != user {
			t.Fatalf("Lookup(%q) = %q %v", id, u, ok)
		}
	}
	// Logging out ends exactly the deleted sessions.
	deleted := map[string]bool{}
	for id := range seen {
		if rng.IntN(4) == 0 {
			m.Delete(id)
			deleted[id] = true
		}
	}
	for id, user := range seen {
		if u, ok := m.Lookup(id); ok == deleted[id] || ok && u != user {
			t.Fatalf("after Delete: Lookup(%q) = %q %v, deleted=%v", id, u, ok, deleted[id])
		}
	}
	now = now.Add(time.Minute)
	for id := range seen {
		if _, ok := m.Lookup(id); ok {
			t.Fatal("session outlived its ttl")
		}
	}
}

// An id must be fresh output of the OS CSPRNG and nothing else: whoever
// saw earlier ids, knows the clock, the start-up time or the generator
// learns nothing of the next one. That is tested on the ids themselves:
// crypto/rand's source is pinned to a seeded stream (testing/cryptotest),
// and under the same seed the same manager must issue the same ids again,
// under another seed other ids. A generator with state of its own
// (math/rand, ChaCha8 or splitmix64 seeded from the clock, or once from
// crypto/rand) continues where it stopped instead of repeating; one that
// ignores crypto/rand does not change with the seed. Whatever the imports.
func TestIDsAreFreshCSPRNGOutput(t *testing.T) {
	at := time.Unix(1_700_000_000, 0)
	m := NewManager(time.Hour, func() time.Time { return at })
	draw := func(seed uint64) []string {
		cryptotest.SetGlobalRandom(t, seed)
		ids := make([]string, 3)
		for i := range ids {
			ids[i] = m.Create("u")
		}
		for _, id := range ids {
			m.Delete(id) // the next draw may issue them again
		}
		return ids
	}
	a, b, c := draw(330), draw(330), draw(331)
	if !slices.Equal(a, b) {
		t.Errorf("ids %v and %v from the same OS randomness differ: they depend on state or inputs other than fresh crypto/rand output", a, b)
	}
	for i := range a {
		if a[i] == c[i] {
			t.Errorf("id %q does not change with the OS randomness", a[i])
		}
	}
}

// math/rand and math/rand/v2 are "unsuitable for security-sensitive work",
// their documentation says: none in the package's non-test files.
func TestNoMathRand(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "math/rand" || p == "math/rand/v2" {
				t.Errorf("%s: imports %s, a non-cryptographic generator", fset.Position(imp.Pos()), p)
			}
		}
	}
}
