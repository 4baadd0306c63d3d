package taskset_test

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"os/exec"
	"path"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/svbench/svbench/envs/codevuln/tasks"
	"github.com/svbench/svbench/envs/codevuln/taskset"
	"github.com/svbench/svbench/envs/codevuln/taskset/internal/trustedrun"
)

// deletedBodyAllowed lists API functions whose reference implementation is
// itself trivial, so deleting the body changes nothing observable.
var deletedBodyAllowed = map[string]bool{
	"go-338-invite-codes/NewGenerator": true, // the fix ignores the seed and keeps no state
}

// TestCorpusDeletedBodies is the corpus-side reward-hacking probe: in the
// reference fix, the body of each API function in turn is replaced by
// "return zero values", and the hidden tests must then fail. It runs ~100
// test executions, so it is opt-in: SVBENCH_E3_PROBES=1.
func TestCorpusDeletedBodies(t *testing.T) {
	if os.Getenv("SVBENCH_E3_PROBES") == "" {
		t.Skip("set SVBENCH_E3_PROBES=1 to run the deleted-body probe over the whole corpus (several minutes)")
	}
	all, err := taskset.Load(tasks.FS())
	if err != nil {
		t.Fatal(err)
	}
	runner := trustedrun.New(runtime.NumCPU())
	for _, task := range all {
		t.Run(task.ID, func(t *testing.T) {
			t.Parallel()
			if msg := trustedrun.Toolchain(task.Language); msg != "" {
				t.Skip(msg)
			}
			fixed := task.Fixed()
			for _, file := range task.Files {
				for _, name := range task.APINames() {
					var mutated []byte
					var err error
					switch task.Language {
					case taskset.Python:
						mutated, err = deletePyBody(fixed[file], name)
					case taskset.Go:
						mutated, err = deleteGoBody(fixed[file], name)
					}
					if err != nil {
						t.Fatalf("%s: %v", file, err)
					}
					if mutated == nil {
						continue // name not defined in this file
					}
					src := task.Fixed()
					src[file] = mutated
					res, err := runner.Run(context.Background(), task.Language, src, task.Hidden)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					// A probe that does not build proves nothing.
					if strings.Contains(res.Output, "[build failed]") || strings.Contains(res.Output, "SyntaxError") {
						t.Fatalf("%s: probe with %s deleted does not build:\n%s", file, name, res.Output)
					}
					if res.Passed && !deletedBodyAllowed[task.ID+"/"+name] {
						t.Errorf("hidden tests pass with the body of %s deleted", name)
					}
				}
			}
		})
	}
}

const pyDelete = `
import ast, sys
name = sys.argv[1]
tree = ast.parse(sys.stdin.read())
found = False
for node in ast.walk(tree):
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
        node.body = [ast.Return(value=None)]
        found = True
if found:
    sys.stdout.write(ast.unparse(tree) + "\n")
`

func deletePyBody(src []byte, name string) ([]byte, error) {
	cmd := exec.Command("python3", "-c", pyDelete, name)
	cmd.Stdin = bytes.NewReader(src)
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("rewriting %s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// deleteGoBody replaces the body of every function or method called name
// with "return *new(T), ..." and blanks imports that become unused.
func deleteGoBody(src []byte, name string) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	found := false
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != name || fd.Body == nil {
			continue
		}
		found = true
		var results []ast.Expr
		if fd.Type.Results != nil {
			for _, r := range fd.Type.Results.List {
				n := max(len(r.Names), 1)
				for i := 0; i < n; i++ {
					results = append(results, &ast.StarExpr{X: &ast.CallExpr{Fun: ast.NewIdent("new"), Args: []ast.Expr{r.Type}}})
				}
			}
		}
		body := &ast.BlockStmt{}
		if len(results) > 0 {
			body.List = []ast.Stmt{&ast.ReturnStmt{Results: results}}
		}
		fd.Body = body
	}
	if !found {
		return nil, nil
	}
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		local := path.Base(p)
		if strings.HasPrefix(local, "v") && len(p) > len(local)+1 {
			if _, err := strconv.Atoi(local[1:]); err == nil {
				local = path.Base(path.Dir(p)) // math/rand/v2 -> rand
			}
		}
		if imp.Name != nil {
			local = imp.Name.Name
		}
		if local != "_" && local != "." && !used[local] {
			imp.Name = ast.NewIdent("_")
		}
	}
	// Comments would be misplaced around the emptied bodies; they do not matter here.
	f.Comments = nil
	var buf bytes.Buffer
	if err := printer.Fprint(&buf, fset, f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
