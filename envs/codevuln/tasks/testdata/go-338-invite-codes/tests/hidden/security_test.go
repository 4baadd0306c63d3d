package codes

import (
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/cryptotest"
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

// A code must be fresh output of the OS CSPRNG and nothing else: whoever
// saw other codes, knows the seed, the start-up time or the generator
// learns nothing of the next one. That is tested on the codes themselves:
// crypto/rand's source is pinned to a seeded stream (testing/cryptotest),
// and under the same seed the same generator must issue the same codes
// again, under another seed other codes. A generator with state of its own
// (math/rand, ChaCha8 or splitmix64 seeded from the clock, or once from
// crypto/rand) continues where it stopped instead of repeating; one that
// ignores crypto/rand does not change with the seed. Whatever the imports.
func TestCodesAreFreshCSPRNGOutput(t *testing.T) {
	g := NewGenerator(1_700_000_000)
	draw := func(seed uint64) string {
		cryptotest.SetGlobalRandom(t, seed)
		return g.InviteCode() + " " + strings.Join(g.RecoveryCodes(3), ",")
	}
	a, b, c := draw(338), draw(338), draw(339)
	if a != b {
		t.Errorf("codes %q and %q from the same OS randomness differ: they depend on state or inputs other than fresh crypto/rand output", a, b)
	}
	if a == c {
		t.Errorf("codes %q do not change with the OS randomness", a)
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
