package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/svbench/svbench/"

// TestNoImportRunsBackUp keeps the house's floors: base/ (ground helpers)
// imports nothing of svbench's but base/; the contract env/ builds only on
// base/; nothing outside internal/ and cmd/ (tests included) reaches into
// internal/, which holds the CLI. A new arrow up is named with its file.
func TestNoImportRunsBackUp(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if name := d.Name(); rel != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(p, module) {
				continue
			}
			dep := strings.TrimPrefix(p, module)
			switch {
			case strings.HasPrefix(rel, "base/") && !strings.HasPrefix(dep, "base/"):
				t.Errorf("%s imports %s: base/ imports only base/", rel, dep)
			case strings.HasPrefix(rel, "env/") && !strings.HasPrefix(dep, "base/") && !strings.HasPrefix(dep, "env"):
				t.Errorf("%s imports %s: the contract builds only on base/", rel, dep)
			case strings.HasPrefix(rel, "env/") && strings.HasPrefix(dep, "envs/") || strings.HasPrefix(rel, "env/") && strings.HasPrefix(dep, "envtest"):
				t.Errorf("%s imports %s: the contract builds only on base/", rel, dep)
			case strings.HasPrefix(dep, "internal/") && !strings.HasPrefix(rel, "internal/") && !strings.HasPrefix(rel, "cmd/"):
				t.Errorf("%s imports %s: internal/ holds the CLI, a floor above every package outside it", rel, dep)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 300 {
		t.Fatalf("read %d Go files under %s: not the repository", files, root)
	}
}
