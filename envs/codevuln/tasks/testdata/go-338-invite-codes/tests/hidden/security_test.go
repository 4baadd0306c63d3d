package codes

import (
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Knowing the seed (the process start time) must not reproduce codes.
func TestSeedDoesNotDetermineCodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(338, 17))
	for i := 0; i < 20; i++ {
		seed := rng.Int64()
		a, b := NewGenerator(seed), NewGenerator(seed)
		if a.InviteCode() == b.InviteCode() {
			t.Fatalf("same seed %d, same invite code", seed)
		}
		if strings.Join(a.RecoveryCodes(3), ",") == strings.Join(b.RecoveryCodes(3), ",") {
			t.Fatalf("same seed %d, same recovery codes", seed)
		}
	}
	for _, seed := range []int64{0, 1, 1_700_000_000, 1_700_000_000_000_000_000} {
		if NewGenerator(seed).InviteCode() == NewGenerator(seed).InviteCode() {
			t.Fatalf("seed %d reproduces codes", seed)
		}
	}
}

func TestGeneratedDistribution(t *testing.T) {
	g := NewGenerator(42)
	counts := map[rune]int{}
	seen := map[string]bool{}
	const n = 3000
	for i := 0; i < n; i++ {
		c := g.InviteCode()
		if len(c) != 10 || seen[c] {
			t.Fatalf("invite %q (duplicate=%v)", c, seen[c])
		}
		seen[c] = true
		for _, r := range c {
			if !strings.ContainsRune(Alphabet, r) {
				t.Fatalf("character %q outside the alphabet", r)
			}
			counts[r]++
		}
	}
	exp := float64(n*10) / float64(len(Alphabet))
	for _, r := range Alphabet {
		if f := float64(counts[r]); f < exp*0.8 || f > exp*1.2 {
			t.Errorf("character %q appears %v times, expected about %v", r, f, exp)
		}
	}
	rc := g.RecoveryCodes(50)
	uniq := map[string]bool{}
	for _, c := range rc {
		if len(c) != 9 || c[4] != '-' {
			t.Fatalf("recovery code %q", c)
		}
		uniq[c] = true
	}
	if len(uniq) != 50 {
		t.Fatal("recovery codes repeat")
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
