package codevuln

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path"
	"regexp"
	"strings"

	"github.com/svbench/svbench/envs/codevuln/taskset"
)

// APICheck reports which of a task's public entry points a candidate no
// longer provides with the same name and parameter list.
func APICheck(t *taskset.Task, files Files) (missing []string) {
	for _, entry := range t.API {
		var ok bool
		switch t.Language {
		case taskset.Go:
			ok = goHasAPI(entry, files)
		case taskset.C, taskset.Cpp, taskset.JavaScript:
			ok = cHasAPI(entry, files)
		default:
			ok = pyHasAPI(entry, files)
		}
		if !ok {
			missing = append(missing, entry)
		}
	}
	return missing
}

// --- Python -------------------------------------------------------------

var pyDefRe = regexp.MustCompile(`(?m)^([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*(\(|:)`)

type pyDef struct {
	indent int
	kind   string
	name   string
	params []string
	pos    int
}

func pyDefs(src string) []pyDef {
	var out []pyDef
	for _, m := range pyDefRe.FindAllStringSubmatchIndex(src, -1) {
		d := pyDef{indent: m[3] - m[2], kind: src[m[4]:m[5]], name: src[m[6]:m[7]], pos: m[0]}
		if src[m[8]:m[9]] == "(" {
			inner, ok := taskset.PyBalanced(src[m[8]:])
			if !ok {
				continue
			}
			d.params = taskset.PyParams(inner)
		}
		out = append(out, d)
	}
	return out
}

func pyHasAPI(entry string, files Files) bool {
	open := strings.IndexByte(entry, '(')
	if open < 0 {
		return false
	}
	name := strings.TrimSpace(entry[:open])
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	inner, ok := taskset.PyBalanced(entry[open:])
	if !ok {
		return false
	}
	want := taskset.PyParams(inner)
	for fname, b := range files {
		if !strings.HasSuffix(fname, ".py") {
			continue
		}
		defs := pyDefs(string(b))
		for i, d := range defs {
			if d.name != name {
				continue
			}
			got := d.params
			if d.kind == "class" {
				// A class is called through __init__, minus self.
				got = nil
				for _, m := range defs[i+1:] {
					if m.indent <= d.indent {
						break
					}
					if m.kind == "def" && m.name == "__init__" {
						got = m.params
						if len(got) > 0 {
							got = got[1:]
						}
						break
					}
				}
			} else if len(want) < len(got) && len(got) > 0 && (got[0] == "self" || got[0] == "cls") && (len(want) == 0 || want[0] != got[0]) {
				got = got[1:]
			}
			if equalStrings(got, want) {
				return true
			}
		}
	}
	return false
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// --- Go -----------------------------------------------------------------

type goSig struct {
	recv   string // receiver base type, "" for functions
	name   string
	params []string // parameter types
	named  bool     // the API entry gave types
}

func typeString(fset *token.FileSet, e ast.Expr) string {
	var b bytes.Buffer
	_ = printer.Fprint(&b, fset, e)
	return b.String()
}

func sigOf(fset *token.FileSet, fd *ast.FuncDecl) goSig {
	s := goSig{name: fd.Name.Name, named: true}
	if fd.Recv != nil && len(fd.Recv.List) == 1 {
		t := fd.Recv.List[0].Type
		if st, ok := t.(*ast.StarExpr); ok {
			t = st.X
		}
		if ix, ok := t.(*ast.IndexExpr); ok {
			t = ix.X
		}
		s.recv = typeString(fset, t)
	}
	for _, f := range fd.Type.Params.List {
		n := max(1, len(f.Names))
		for range n {
			s.params = append(s.params, typeString(fset, f.Type))
		}
	}
	return s
}

func parseAPIEntry(entry string) (goSig, error) {
	e := strings.TrimSpace(entry)
	if !strings.HasPrefix(e, "func") {
		e = "func " + e
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "api.go", "package p\n"+e+" {}\n", parser.SkipObjectResolution)
	if err != nil {
		// Entries without types ("Find(db, name)") parse as a call shape.
		open := strings.IndexByte(entry, '(')
		if open < 0 {
			return goSig{}, fmt.Errorf("api entry %q: %w", entry, err)
		}
		inner, _ := taskset.PyBalanced(entry[open:])
		s := goSig{name: strings.TrimSpace(strings.TrimPrefix(entry[:open], "func"))}
		for _, p := range strings.Split(inner, ",") {
			if strings.TrimSpace(p) != "" {
				s.params = append(s.params, strings.TrimSpace(p))
			}
		}
		return s, nil
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			s := sigOf(fset, fd)
			// "Find(db, name)" parses as two unnamed parameters of types
			// db and name: an entry without types, compared by arity.
			untyped := len(fd.Type.Params.List) > 0
			for _, p := range fd.Type.Params.List {
				if len(p.Names) > 0 {
					untyped = false
				}
			}
			s.named = !untyped
			return s, nil
		}
	}
	return goSig{}, fmt.Errorf("api entry %q: no function", entry)
}

func goHasAPI(entry string, files Files) bool {
	want, err := parseAPIEntry(entry)
	if err != nil {
		return false
	}
	for name, b := range files {
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, b, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Name.Name != want.name {
				continue
			}
			got := sigOf(fset, fd)
			if got.recv != want.recv {
				continue
			}
			if !want.named && len(got.params) == len(want.params) || want.named && equalStrings(got.params, want.params) {
				return true
			}
		}
	}
	return false
}

// --- C and C++ ------------------------------------------------------------

// cHasAPI reports whether a C, C++ or JavaScript file defines the entry's function with
// the same parameter list (types and names, white space aside).
func cHasAPI(entry string, files Files) bool {
	open := strings.IndexByte(entry, '(')
	if open < 0 || !strings.HasSuffix(entry, ")") {
		return false
	}
	name, want := strings.TrimSpace(entry[:open]), taskset.CNorm(entry[open+1:len(entry)-1])
	for fname, b := range files {
		if ext := path.Ext(fname); ext != ".c" && ext != ".cpp" && ext != ".js" {
			continue
		}
		for _, d := range taskset.CFuncs(b) {
			if d.Name == name && taskset.CNorm(d.Params) == want {
				return true
			}
		}
	}
	return false
}
