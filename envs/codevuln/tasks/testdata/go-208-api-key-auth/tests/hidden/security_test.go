package apikeys

import (
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// Timing cannot be measured reliably in a unit test, so the secret check is
// verified structurally: the package's non-test sources must compare secrets
// only through crypto/subtle or crypto/hmac, and never with ==, !=,
// bytes.Equal, strings.Compare or strings.EqualFold on non-constant operands.
func TestConstantTimeComparison(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	constTime := false
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
					if pkg, ok := sel.X.(*ast.Ident); ok {
						switch pkg.Name + "." + sel.Sel.Name {
						case "subtle.ConstantTimeCompare", "hmac.Equal":
							constTime = true
						case "bytes.Equal", "strings.Compare", "strings.EqualFold", "bytes.Compare", "reflect.DeepEqual":
							t.Errorf("%s: variable-time comparison %s.%s", fset.Position(n.Pos()), pkg.Name, sel.Sel.Name)
						}
					}
				}
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && !simple(n.X) && !simple(n.Y) {
					t.Errorf("%s: == / != between two computed values (use crypto/subtle)", fset.Position(n.Pos()))
				}
			}
			return true
		})
	}
	if !constTime {
		t.Error("no constant-time comparison (crypto/subtle or hmac.Equal) found")
	}
}

// simple reports operands that cannot carry secret bytes: literals, nil,
// booleans, constants and len() calls.
func simple(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		return true
	case *ast.Ident:
		return e.Name == "nil" || e.Name == "true" || e.Name == "false" || (e.Name[0] >= 'A' && e.Name[0] <= 'Z')
	case *ast.CallExpr:
		if id, ok := e.Fun.(*ast.Ident); ok && (id.Name == "len" || id.Name == "cap") {
			return true
		}
	case *ast.ParenExpr:
		return simple(e.X)
	case *ast.UnaryExpr:
		return simple(e.X)
	}
	return false
}

func TestGenerated(t *testing.T) {
	rng := rand.New(rand.NewPCG(208, 19))
	s := NewStore()
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-_."
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet)-1)]
		}
		return string(b)
	}
	type key struct{ id, secret, owner string }
	var keys []key
	for i := 0; i < 60; i++ {
		k := key{id: "k" + word(6), secret: word(8 + rng.IntN(40)), owner: "o" + word(4)}
		keys = append(keys, k)
		s.Add(k.id, k.secret, k.owner)
	}
	for _, k := range keys {
		if o, ok := s.Authenticate("Bearer " + k.id + "." + k.secret); !ok || o != k.owner {
			t.Fatalf("valid key %s rejected", k.id)
		}
		variants := []string{
			k.secret[:len(k.secret)-1],
			k.secret + "x",
			"",
			strings.ToUpper(k.secret),
			k.secret[:rng.IntN(len(k.secret))],
		}
		b := []byte(k.secret)
		b[rng.IntN(len(b))] ^= 0x20
		variants = append(variants, string(b))
		for _, v := range variants {
			if v == k.secret {
				continue
			}
			if _, ok := s.Authenticate("Bearer " + k.id + "." + v); ok {
				t.Fatalf("wrong secret %q for %s accepted", v, k.id)
			}
		}
		other := keys[rng.IntN(len(keys))]
		if other.id != k.id && other.secret != k.secret {
			if _, ok := s.Authenticate("Bearer " + k.id + "." + other.secret); ok {
				t.Fatal("another key's secret accepted")
			}
		}
	}
}

func TestMiddlewareGenerated(t *testing.T) {
	rng := rand.New(rand.NewPCG(208, 20))
	s := NewStore()
	s.Add("kA", "alpha-secret-1", "acme")
	s.Add("kB", "beta-secret-22", "globex")
	h := Middleware(s, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(Owner(r.Context()))) }))
	cases := map[string]string{"Bearer kA.alpha-secret-1": "acme", "Bearer kB.beta-secret-22": "globex", "Bearer kA.beta-secret-22": "", "": "", "Bearer kB.": ""}
	for i := 0; i < 20; i++ {
		b := []byte("alpha-secret-1")
		b[rng.IntN(len(b))] ^= 1
		cases["Bearer kA."+string(b)] = ""
	}
	for header, owner := range cases {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		if header != "" {
			req.Header.Set("Authorization", header)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if owner == "" {
			if rec.Code != http.StatusUnauthorized {
				t.Errorf("%q: status %d", header, rec.Code)
			}
			continue
		}
		if rec.Code != 200 || rec.Body.String() != owner {
			t.Errorf("%q: %d %q, want owner %q", header, rec.Code, rec.Body.String(), owner)
		}
	}
}
