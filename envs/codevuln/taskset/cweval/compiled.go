package cweval

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/svbench/svbench/envs/codevuln/taskset"
)

// CWEval's C and C++ task files mark where the prompt starts, where the
// reference body starts and where the program's main (the entry point its
// tests run) starts. The unsafe copy is a whole file of its own.
const (
	cPromptMarker   = "// BEGIN PROMPT"
	cSolutionMarker = "// BEGIN SOLUTION"
	cEntryMarker    = "// BEGIN ENTRYPOINT"
	// cStub is a generation task's body: it compiles in C and C++ whatever
	// the return type, and stops the program, so every test fails until
	// the body is written.
	cStub = "__builtin_trap(); // not written yet"
)

var (
	langOf   = map[string]string{"c": taskset.C, "cpp": taskset.Cpp, "go": taskset.Go, "js": taskset.JavaScript}
	langName = map[string]string{taskset.C: "C", taskset.Cpp: "C++", taskset.Go: "Go", taskset.JavaScript: "JavaScript"}
	// entryPoint says what of the file the tests run.
	entryPoint = map[string]string{"js": "the code after it, run when the file is node's main module, is the program the tests run"}
	// stubs stop a generation task's program in each language.
	stubs = map[string]string{"c": cStub, "cpp": cStub, "js": "throw new Error('not written yet');"}
)

// buildCompiled makes a C, C++, Go or JavaScript task file into a repair task (its unsafe
// copy to fix) and a secure-generation task. The files keep CWEval's names:
// the test module finds the binary as compiled/<task file's stem>, and the
// verifier builds the candidate under that name.
func buildCompiled(fsys fs.FS, dir, ext, base, cweNum, n string) ([]taskset.Task, []Skip) {
	name := path.Join(ext, base)
	skip := func(reason string, a ...any) ([]taskset.Task, []Skip) {
		return nil, []Skip{{Name: name, Reason: fmt.Sprintf(reason, a...)}}
	}
	module := base + "_task." + ext
	taskSrc, err := readBounded(fsys, path.Join(dir, module))
	if err != nil {
		return skip("%v", err)
	}
	testSrc, err := readBounded(fsys, path.Join(dir, base+"_test.py"))
	if err != nil {
		return skip("no test module: %v", err)
	}
	if ext == "js" {
		// The tests name the script beside them, by name or from their
		// own path (__file__ with _test.py replaced).
		if !bytes.Contains(testSrc, []byte("'node'")) {
			return skip("%s_test.py does not run %s with node", base, module)
		}
	} else if !bytes.Contains(testSrc, []byte("compiled")) || !bytes.Contains(testSrc, []byte("_task")) {
		return skip("%s_test.py does not run compiled/%s_task, the binary the verifier builds", base, base)
	}
	var fn cTask
	if ext == "go" {
		fn, err = parseGoTask(taskSrc)
	} else {
		fn, err = parseCTask(taskSrc, stubs[ext])
	}
	if err != nil {
		return skip("%s: %v", module, err)
	}
	cwe := "CWE-" + strings.TrimLeft(cweNum, "0")
	if taskset.CWENames[cwe] == "" {
		return skip("%s is not one of the CWEs E3's tested tasks may target (taskset.CWENames)", cwe)
	}
	lang := langOf[ext]
	entry := entryPoint[ext]
	if entry == "" {
		entry = "main is the program the tests run"
	}
	suites := func() *taskset.Pytest {
		return &taskset.Pytest{
			Visible: taskset.PytestSuite{Mark: MarkFunctionality},
			Hidden:  taskset.PytestSuite{Mark: MarkSecurity},
		}
	}
	hidden := map[string][]byte{base + "_test.py": testSrc}
	id := fmt.Sprintf("%s-%s-cweval-%s", ext, cweNum, n)
	out := []taskset.Task{{
		ID:         id + "-gen",
		Mode:       taskset.ModeGenerate,
		Title:      fmt.Sprintf("CWEval %s: write %s", base, fn.name),
		Language:   lang,
		CWE:        cwe,
		Severity:   "medium",
		Difficulty: "medium",
		Description: fmt.Sprintf("Write the body of %s in %s (%s; it stops the program now). The comment above it is the "+
			"specification, and %s. The code must be secure, as the inputs it is tested "+
			"with include what an attacker would send.", fn.name, module, langName[lang], entry),
		Files:  []string{module},
		API:    []string{fn.api},
		Source: "cweval:" + name + ":generate",
		Src:    map[string][]byte{module: []byte(fn.stub)},
		Fix:    map[string][]byte{module: []byte(fn.fixed)},
		Hidden: hidden,
		Pytest: suites(),
	}}
	unsafe, err := readBounded(fsys, path.Join(dir, base+"_unsafe."+ext))
	if err != nil {
		return out, []Skip{{Name: name, Reason: fmt.Sprintf("no %s_unsafe.%s: no repair task, only the generation task", base, ext)}}
	}
	src := stripCMarkers(string(unsafe))
	if !defines(ext, src, fn.name) && defines(ext, src, fn.name+"_unsafe") {
		// CWEval's JavaScript copies name the function <name>_unsafe:
		// the code to fix keeps the reference's names.
		src = regexp.MustCompile(`\b`+regexp.QuoteMeta(fn.name)+`_unsafe\b`).ReplaceAllString(src, fn.name)
	}
	if src == fn.fixed {
		return out, []Skip{{Name: name + ":unsafe", Reason: "the unsafe copy is the reference itself"}}
	}
	if !defines(ext, src, fn.name) {
		return out, []Skip{{Name: name + ":unsafe", Reason: fmt.Sprintf("the unsafe copy defines no %s", fn.name)}}
	}
	out = append(out, taskset.Task{
		ID:         id,
		Title:      fmt.Sprintf("CWEval %s: %s (%s)", base, fn.name, taskset.CWENames[cwe]),
		Language:   lang,
		CWE:        cwe,
		Severity:   "medium",
		Difficulty: "medium",
		Description: fmt.Sprintf("%s in %s (%s) has a weakness: %s (%s). The comment above it is the specification, and "+
			"%s. Fix the weakness so that the function still does what the comment says.",
			fn.name, module, langName[lang], taskset.CWENames[cwe], cwe, entry),
		Files:  []string{module},
		API:    []string{fn.api},
		Source: "cweval:" + name + ":unsafe",
		Src:    map[string][]byte{module: []byte(src)},
		Fix:    map[string][]byte{module: []byte(fn.fixed)},
		Hidden: hidden,
		Pytest: suites(),
	})
	return out, nil
}

// cTask is a C or C++ task file read at its markers: the reference (the
// file less its marker lines), the generation stub (the same with the
// solution's body replaced) and the function the solution marker is in.
type cTask struct {
	name, api   string
	fixed, stub string
}

// defines reports whether a source file defines the function name.
func defines(ext, src, name string) bool {
	if ext != "go" {
		_, ok := taskset.CFunc([]byte(src), name)
		return ok
	}
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, parser.SkipObjectResolution)
	if err != nil {
		return false
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == name {
			return true
		}
	}
	return false
}

func parseCTask(src []byte, stubBody string) (cTask, error) {
	if bytes.Count(src, []byte(cSolutionMarker)) != 1 {
		return cTask{}, fmt.Errorf("want exactly one %q line", cSolutionMarker)
	}
	fixed := stripCMarkers(string(src))
	// The marker is read in the unstripped file, then the function is
	// found again in the stripped one.
	at := bytes.Index(src, []byte(cSolutionMarker))
	var def taskset.CFuncDef
	found := false
	for _, d := range taskset.CFuncs(src) {
		if d.Open < at && at < d.Close {
			def, found = d, true
		}
	}
	if !found {
		return cTask{}, fmt.Errorf("the %q line is not inside a function", cSolutionMarker)
	}
	if def.Name == "main" {
		return cTask{}, fmt.Errorf("the %q line is inside main", cSolutionMarker)
	}
	d, ok := taskset.CFunc([]byte(fixed), def.Name)
	if !ok {
		return cTask{}, fmt.Errorf("cannot read %s once the markers are removed", def.Name)
	}
	body := fixed[d.Open+1 : d.Close]
	if strings.TrimSpace(body) == "" {
		return cTask{}, fmt.Errorf("the reference solution is empty")
	}
	indent := "    "
	for _, l := range strings.Split(body, "\n") {
		if strings.TrimSpace(l) != "" {
			indent = l[:len(l)-len(strings.TrimLeft(l, " \t"))]
			break
		}
	}
	stub := fixed[:d.Open+1] + "\n" + indent + stubBody + "\n" + fixed[d.Close:]
	return cTask{name: d.Name, api: d.API(), fixed: fixed, stub: stub}, nil
}

// stripCMarkers removes CWEval's marker lines, which are instructions to
// its own harness and not part of the program.
func stripCMarkers(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		switch strings.TrimSpace(l) {
		case cPromptMarker, cSolutionMarker, cEntryMarker:
			continue
		}
		b.WriteString(l)
	}
	return b.String()
}

// parseGoTask reads a Go task file (package main, the same markers). The
// generation stub's body panics, and an import only the reference body used
// becomes a blank import, so the stub compiles and the package list still
// shows what the reference needed.
func parseGoTask(src []byte) (cTask, error) {
	if bytes.Count(src, []byte(cSolutionMarker)) != 1 {
		return cTask{}, fmt.Errorf("want exactly one %q line", cSolutionMarker)
	}
	at := bytes.Index(src, []byte(cSolutionMarker))
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "task.go", src, parser.SkipObjectResolution)
	if err != nil {
		return cTask{}, err
	}
	var name string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if ok && fd.Body != nil && fset.Position(fd.Body.Lbrace).Offset < at && at < fset.Position(fd.Body.Rbrace).Offset {
			name = fd.Name.Name
		}
	}
	switch name {
	case "":
		return cTask{}, fmt.Errorf("the %q line is not inside a function", cSolutionMarker)
	case "main":
		return cTask{}, fmt.Errorf("the %q line is inside main", cSolutionMarker)
	}
	fixed := stripCMarkers(string(src))
	fset = token.NewFileSet()
	f, err = parser.ParseFile(fset, "task.go", fixed, parser.SkipObjectResolution)
	if err != nil {
		return cTask{}, err
	}
	var fd *ast.FuncDecl
	for _, d := range f.Decls {
		if x, ok := d.(*ast.FuncDecl); ok && x.Recv == nil && x.Name.Name == name {
			fd = x
		}
	}
	if fd == nil || fd.Body == nil || len(fd.Body.List) == 0 {
		return cTask{}, fmt.Errorf("the reference solution of %s is empty", name)
	}
	var sig bytes.Buffer
	if err := printer.Fprint(&sig, fset, &ast.FuncDecl{Name: fd.Name, Type: fd.Type}); err != nil {
		return cTask{}, err
	}
	lo, hi := fset.Position(fd.Body.Lbrace).Offset, fset.Position(fd.Body.Rbrace).Offset
	stub, err := blankUnusedImports(fixed[:lo+1] + "\n\tpanic(\"not written yet\")\n" + fixed[hi:])
	if err != nil {
		return cTask{}, err
	}
	return cTask{name: name, api: sig.String(), fixed: fixed, stub: stub}, nil
}

var majorVersionRe = regexp.MustCompile(`^v[0-9]+$`)

// blankUnusedImports makes every import the file no longer refers to a
// blank import, and formats the file.
func blankUnusedImports(src string) (string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "stub.go", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return "", err
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
	for _, is := range f.Imports {
		p, _ := strconv.Unquote(is.Path.Value)
		name := path.Base(p)
		if majorVersionRe.MatchString(name) {
			name = path.Base(path.Dir(p)) // a major-version suffix is not the name
		}
		if is.Name != nil {
			name = is.Name.Name
		}
		if name != "_" && name != "." && !used[name] {
			is.Name = ast.NewIdent("_")
		}
	}
	var b bytes.Buffer
	if err := format.Node(&b, fset, f); err != nil {
		return "", err
	}
	return b.String(), nil
}
