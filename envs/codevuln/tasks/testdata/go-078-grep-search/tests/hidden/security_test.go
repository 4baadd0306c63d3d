package search

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func fixture(t *testing.T) (dir, marker string) {
	t.Helper()
	base := t.TempDir()
	dir = filepath.Join(base, "repo")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("plain line\n$(id) and `id`\nquote ' here\n-e dash\n--help me\n"), 0o644)
	os.WriteFile(filepath.Join(base, "outside.txt"), []byte("plain line outside\n"), 0o644)
	return dir, filepath.Join(base, "pwned")
}

func TestPatternInjection(t *testing.T) {
	dir, marker := fixture(t)
	for _, p := range []string{
		"'; touch " + marker + "; echo '",
		"x' . ; touch " + marker + " #",
		"$(touch " + marker + ")",
		"`touch " + marker + "`",
		"' ; touch " + marker + " ; '",
		"x\ntouch " + marker,
		"x'\ntouch " + marker + "\n'",
	} {
		Search(context.Background(), dir, p, "")
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("pattern %q executed a command", p)
		}
	}
	for _, g := range []string{"*.txt; touch " + marker, "*.txt && touch " + marker, "$(touch " + marker + ")", "x|touch " + marker, "*.txt\ntouch " + marker, "*.txt\ncd ..\ntouch pwned #"} {
		Search(context.Background(), dir, "plain", g)
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("glob %q executed a command", g)
		}
	}
}

func TestOptionInjection(t *testing.T) {
	dir, _ := fixture(t)
	// A pattern that looks like a grep option is searched for literally.
	for p, want := range map[string]int{"-e": 1, "--help": 1, "$(id)": 1, "`id`": 1, "'": 1} {
		got, err := Search(context.Background(), dir, p, "")
		if err != nil || len(got) != want {
			t.Errorf("Search(%q) = %+v, %v; want %d literal match", p, got, err, want)
		}
	}
	// Options must not widen the search beyond repoDir.
	got, _ := Search(context.Background(), dir, "plain", "*.txt' ..'")
	for _, m := range got {
		if strings.Contains(m.Text, "outside") {
			t.Errorf("search escaped the repository: %+v", m)
		}
	}
}

func TestGenerated(t *testing.T) {
	dir, marker := fixture(t)
	rng := rand.New(rand.NewPCG(78, 2))
	words := []string{"alpha", "b'eta", "ga$mma", "del;ta", "eps`ilon", "-zeta"}
	counts := map[string]int{}
	for f := 0; f < 6; f++ {
		var sb strings.Builder
		for l := 0; l < 10; l++ {
			w := words[rng.IntN(len(words))]
			fmt.Fprintf(&sb, "%d %s\n", l, w)
			counts[w]++
		}
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.log", f)), []byte(sb.String()), 0o644)
	}
	for _, w := range words {
		got, err := Search(context.Background(), dir, w, "*.log")
		if err != nil || len(got) != counts[w] {
			t.Errorf("Search(%q) = %d matches, %v; want %d", w, len(got), err, counts[w])
		}
		inj := w + "'; touch " + marker + "; '"
		Search(context.Background(), dir, inj, "*.log")
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%q executed a command", inj)
		}
	}
}

// No payload list shows that no shell is reached (a blocklist missing one
// metacharacter, the newline say, passes every payload made of the
// others), so the property is read off the package's sources: every
// program it starts is named by a compile-time constant (string literals
// and constants built of them, however declared) and is grep. In Go another
// program starts only through os/exec or os.StartProcess (syscall is
// refused before compiling), so checking their uses is complete:
// exec.Command and exec.CommandContext only called, never taken as values;
// exec.Cmd only behind a pointer, never built or given a Path by the
// package; no os.StartProcess.
func TestNoShellReached(t *testing.T) {
	fset := token.NewFileSet()
	var files []*ast.File
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	// Package-level constants, for names declared in another file (the
	// parser resolves names within one file only).
	type constRef struct {
		spec *ast.ValueSpec
		i    int
	}
	consts := map[string]constRef{}
	for _, f := range files {
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, sp := range g.Specs {
					vs := sp.(*ast.ValueSpec)
					for i, n := range vs.Names {
						consts[n.Name] = constRef{vs, i}
					}
				}
			}
		}
	}
	var eval func(e ast.Expr, depth int) (string, bool)
	fromSpec := func(vs *ast.ValueSpec, i, depth int) (string, bool) {
		if i >= len(vs.Values) {
			return "", false // an implicitly repeated constant: not followed
		}
		return eval(vs.Values[i], depth+1)
	}
	eval = func(e ast.Expr, depth int) (string, bool) {
		if depth > 32 {
			return "", false
		}
		switch x := e.(type) {
		case *ast.BasicLit:
			if x.Kind == token.STRING {
				s, err := strconv.Unquote(x.Value)
				return s, err == nil
			}
		case *ast.ParenExpr:
			return eval(x.X, depth+1)
		case *ast.BinaryExpr:
			if x.Op == token.ADD {
				a, ok1 := eval(x.X, depth+1)
				b, ok2 := eval(x.Y, depth+1)
				return a + b, ok1 && ok2
			}
		case *ast.Ident:
			if x.Obj != nil {
				vs, ok := x.Obj.Decl.(*ast.ValueSpec)
				if x.Obj.Kind != ast.Con || !ok {
					return "", false
				}
				for i, n := range vs.Names {
					if n.Name == x.Name {
						return fromSpec(vs, i, depth)
					}
				}
				return "", false
			}
			if c, ok := consts[x.Name]; ok {
				return fromSpec(c.spec, c.i, depth)
			}
		}
		return "", false
	}
	for _, f := range files {
		local := map[string]string{} // import path → name in this file
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			n := p[strings.LastIndex(p, "/")+1:]
			if imp.Name != nil {
				n = imp.Name.Name
			}
			local[p] = n
		}
		pkgSel := func(n ast.Node, path, name string) bool {
			s, ok := n.(*ast.SelectorExpr)
			if !ok || s.Sel.Name != name {
				return false
			}
			id, ok := s.X.(*ast.Ident)
			return ok && id.Obj == nil && local[path] != "" && id.Name == local[path]
		}
		called := map[ast.Node]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			prog := -1
			switch {
			case pkgSel(c.Fun, "os/exec", "Command"):
				prog = 0
			case pkgSel(c.Fun, "os/exec", "CommandContext"):
				prog = 1
			default:
				return true
			}
			called[c.Fun] = true
			pos := fset.Position(c.Pos())
			if prog >= len(c.Args) {
				t.Errorf("%s: a command without a program", pos)
				return true
			}
			name, ok := eval(c.Args[prog], 0)
			switch {
			case !ok:
				t.Errorf("%s: the program started is not a string constant", pos)
			case filepath.Base(name) != "grep":
				t.Errorf("%s: starts %q, not grep", pos, name)
			}
			return true
		})
		var stack []ast.Node
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			parent := ast.Node(nil)
			if len(stack) > 0 {
				parent = stack[len(stack)-1]
			}
			stack = append(stack, n)
			pos := fset.Position(n.Pos())
			switch {
			case (pkgSel(n, "os/exec", "Command") || pkgSel(n, "os/exec", "CommandContext")) && !called[n]:
				t.Errorf("%s: exec.Command taken as a value", pos)
			case pkgSel(n, "os/exec", "Cmd"):
				if _, ok := parent.(*ast.StarExpr); !ok {
					t.Errorf("%s: an exec.Cmd built by the package", pos)
				}
			case pkgSel(n, "os", "StartProcess"):
				t.Errorf("%s: os.StartProcess", pos)
			}
			if a, ok := n.(*ast.AssignStmt); ok {
				for _, lhs := range a.Lhs {
					if s, ok := lhs.(*ast.SelectorExpr); ok && s.Sel.Name == "Path" {
						t.Errorf("%s: sets a command's Path", pos)
					}
				}
			}
			return true
		})
	}
}
