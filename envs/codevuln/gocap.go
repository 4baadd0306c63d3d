package codevuln

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Go tests run in the same process as the code under test, so what decides
// a Go verdict (see runGo) holds only while that code cannot reach below the
// language: no raw memory, no system calls, no process exit of its own
// choosing, no test flags, no reach into svbench's trusted package. In Go
// those capabilities are only reachable through named packages and
// package-qualified identifiers (there is no eval and no lookup of a package
// function by a string), so a syntactic check of the imports and of the
// selectors on them is sound: an alias (`exit := os.Exit`) still spells
// `os.Exit` once, and dot imports are refused. This is what makes the
// runtime walls of runGo hold; it is not a list of known exploits.

// forbiddenImports are packages the code under test may not import at all.
var forbiddenImports = map[string]string{
	"unsafe":      "raw memory access",
	"syscall":     "raw system calls (exit, close or duplicate descriptors)",
	"C":           "cgo",
	"plugin":      "loading code",
	"reflect":     "reflect reaches memory through Value.UnsafePointer and NewAt",
	"flag":        "the test binary's flags decide which tests run",
	"runtime/cgo": "cgo",
	"os/signal":   "signal handling of the test process",
}

// forbiddenPrefixes are import path prefixes refused likewise.
var forbiddenPrefixes = []string{"testing", "internal/", "vendor/", "golang.org/x/sys", "runtime/internal"}

// forbiddenSelectors are package members the code under test may not name.
var forbiddenSelectors = map[string]map[string]string{
	"os": {
		"Exit":    "ends the test process with a code of its choosing",
		"NewFile": "opens a descriptor by number (the verdict channel)",
		"Args":    "the test binary's flags decide which tests run",
	},
	"runtime": {"Goexit": "ends the test goroutine without a verdict"},
}

// goCapabilityViolations lists what the candidate's Go files use that the
// verdict's walls rely on them not using, "file:line: what (why)".
func goCapabilityViolations(files Files, trustPkg string) []string {
	var out []string
	fset := token.NewFileSet()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if !strings.HasSuffix(name, ".go") {
			if path.Ext(name) == ".s" || path.Ext(name) == ".c" || path.Ext(name) == ".syso" {
				out = append(out, fmt.Sprintf("%s: non-Go source file (assembly, C and object files run below the language)", name))
			}
			continue
		}
		f, err := parser.ParseFile(fset, name, files[name], parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			// The compiler rejects the file anyway; its imports are still
			// checked, so the refusal does not hang on a syntax error.
			if f, err = parser.ParseFile(fset, name, files[name], parser.ImportsOnly|parser.ParseComments); err != nil {
				continue
			}
		}
		local := map[string]string{} // local name -> import path
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				continue
			}
			pos := fset.Position(imp.Pos())
			at := fmt.Sprintf("%s:%d", name, pos.Line)
			if why, bad := forbiddenImports[p]; bad {
				out = append(out, fmt.Sprintf("%s: import of %q (%s)", at, p, why))
				continue
			}
			if p == trustPkg || strings.Contains(p, "svbenchtrust") {
				out = append(out, fmt.Sprintf("%s: import of svbench's trusted package %q", at, p))
				continue
			}
			for _, pre := range forbiddenPrefixes {
				if p == strings.TrimSuffix(pre, "/") || strings.HasPrefix(p, pre) {
					out = append(out, fmt.Sprintf("%s: import of %q (test machinery and internals are off limits)", at, p))
				}
			}
			ln := path.Base(p)
			if imp.Name != nil {
				ln = imp.Name.Name
			}
			if ln == "." {
				out = append(out, fmt.Sprintf("%s: dot import of %q (hides which package a name comes from)", at, p))
				continue
			}
			local[ln] = p
		}
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if strings.HasPrefix(c.Text, "//go:") && !strings.HasPrefix(c.Text, "//go:build") {
					d, _, _ := strings.Cut(c.Text, " ")
					out = append(out, fmt.Sprintf("%s:%d: compiler directive %s", name, fset.Position(c.Pos()).Line, d))
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			if why, bad := forbiddenSelectors[local[id.Name]][sel.Sel.Name]; bad {
				out = append(out, fmt.Sprintf("%s:%d: %s.%s (%s)", name, fset.Position(sel.Pos()).Line, local[id.Name], sel.Sel.Name, why))
			}
			return true
		})
	}
	return out
}
