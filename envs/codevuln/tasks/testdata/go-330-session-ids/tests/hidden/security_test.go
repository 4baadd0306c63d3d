package sessions

import (
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
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

// Randomness cannot be told from its output in a unit test: a generator
// seeded from the wall clock (math/rand with time.Now, ChaCha8 keyed by it)
// or math/rand/v2's runtime source yields well-spread, distinct values that
// an attacker who knows the seed, or enough outputs, reproduces. So the
// source is checked structurally: the package's non-test files must not
// import math/rand or math/rand/v2 ("unsuitable for security-sensitive
// work", their documentation says) and must draw from crypto/rand (or read
// /dev/urandom).
func TestRandomnessFromCSPRNG(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	csprng := false
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			switch p, _ := strconv.Unquote(imp.Path.Value); p {
			case "math/rand", "math/rand/v2":
				t.Errorf("%s: imports %s, a non-cryptographic generator", fset.Position(imp.Pos()), p)
			case "crypto/rand":
				csprng = true
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && strings.Contains(lit.Value, "/dev/urandom") {
				csprng = true
			}
			return true
		})
	}
	if !csprng {
		t.Error("nothing draws from crypto/rand")
	}
}
