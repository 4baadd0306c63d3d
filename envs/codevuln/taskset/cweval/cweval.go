// Package cweval imports the tasks of a CWEval checkout
// (github.com/Co1lin/CWEval, Apache-2.0), in Python, C, C++, Go and
// JavaScript, as E3 repair and secure-generation tasks. svbench ships
// none of the benchmark's files: the user gives a checkout and the importer
// builds task directories from it.
//
// A CWEval task is a pair of files under benchmark/core/<lang>/:
// cwe_XXX_N_task.py holds the function's signature and docstring, a
// "# BEGIN SOLUTION" line and the secure reference body; cwe_XXX_N_test.py is
// a pytest module whose cases carry the marks functionality and security and
// which also defines one or more known-vulnerable copies of the function
// (<name>_unsafe, <name>_unsafe_0, ...). Each unsafe copy becomes one repair
// task: the task file with the reference body replaced by the unsafe body is
// the code to fix, the task file itself the reference fix, and the test module
// (unchanged, under tests/hidden) the suites, selected by mark. Each task
// file also becomes one secure-generation task (mode generate, id ending in
// -gen): the signature and docstring with a body that raises
// NotImplementedError. The other languages' tasks are built the same way
// from the task file and its cwe_XXX_N_<lang>_unsafe.<ext> copy, their tests
// running the program (see compiled.go). How many
// tests each mark selects is learnt by running the reference (see
// codevuln.CheckImported), not here.
package cweval

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/svbench/svbench/envs/codevuln/taskset"
)

// Marks CWEval's suites use.
const (
	MarkFunctionality = "functionality"
	MarkSecurity      = "security"
	solutionMarker    = "# BEGIN SOLUTION"
	maxSourceBytes    = 256 << 10
)

// Skip is a benchmark file or task that was read but not imported, and why.
type Skip struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Result of an import. Tasks still lack their pytest counts (zero) until the
// reference has been run.
type Result struct {
	// Root is the directory the tasks were read from, relative to the
	// file system given.
	Root    string
	Tasks   []taskset.Task
	Skipped []Skip
}

var (
	// cwe_022_0_task.py; the other languages' files carry their language
	// too (cwe_020_0_c_task.c).
	taskFileRe = regexp.MustCompile(`^cwe_([0-9]{3,4})_([0-9]+)(?:_[a-z]+)?_task\.([a-z]+)$`)
	defRe      = regexp.MustCompile(`^(\s*)(?:async\s+)?def\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(`)
	importRe   = regexp.MustCompile(`^(?:import\s+(.+)|from\s+([A-Za-z0-9_.]+)\s+import\s+(.+))$`)
	identRe    = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
)

// importedLangs are the language directories read, by their extension.
var importedLangs = []string{"py", "c", "cpp", "go", "js"}

// Locate finds the directory holding a checkout's language directories
// (benchmark/core: py, c, cpp, ...), or a directory given deeper. lang is
// "" for a core directory, or the language of a language directory given
// itself (its files are then all there is).
func Locate(fsys fs.FS) (dir, lang string, err error) {
	has := func(d, lang string) bool {
		ents, err := fs.ReadDir(fsys, d)
		if err != nil {
			return false
		}
		for _, e := range ents {
			if m := taskFileRe.FindStringSubmatch(e.Name()); m != nil && (lang == "" || m[3] == lang) {
				return true
			}
		}
		return false
	}
	for _, d := range []string{"benchmark/core", "core", "."} {
		for _, l := range importedLangs {
			if has(path.Join(d, l), l) {
				return d, "", nil
			}
		}
	}
	for _, l := range importedLangs {
		if has(".", l) {
			return ".", l, nil
		}
	}
	return "", "", errors.New("cweval: no cwe_XXX_N_task.{py,c,cpp,go,js} files under benchmark/core/{py,c,cpp,go,js} (give the root of a CWEval checkout)")
}

// Import reads every Python, C, C++, Go and JavaScript task of the checkout at the root of
// fsys. Files that cannot become tasks, and the tasks of other languages,
// are listed in Result.Skipped with the reason; only an unreadable checkout
// is an error.
func Import(fsys fs.FS) (Result, error) {
	core, only, err := Locate(fsys)
	if err != nil {
		return Result{}, err
	}
	res := Result{Root: core}
	for _, lang := range importedLangs {
		dir := path.Join(core, lang)
		if only != "" {
			if lang != only {
				continue
			}
			dir = core
		}
		ents, err := fs.ReadDir(fsys, dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			m := taskFileRe.FindStringSubmatch(e.Name())
			if m == nil || m[3] != lang {
				continue
			}
			base := strings.TrimSuffix(e.Name(), "_task."+lang)
			var ts []taskset.Task
			var skip []Skip
			if lang == "py" {
				ts, skip = buildTasks(fsys, dir, base, m[1], m[2])
			} else {
				ts, skip = buildCompiled(fsys, dir, lang, base, m[1], m[2])
			}
			res.Tasks = append(res.Tasks, ts...)
			res.Skipped = append(res.Skipped, skip...)
		}
	}
	slices.SortFunc(res.Tasks, func(a, b taskset.Task) int { return strings.Compare(a.ID, b.ID) })
	return res, nil
}

// buildTasks makes one repair task per unsafe copy of the function.
func buildTasks(fsys fs.FS, root, base, cweNum, n string) ([]taskset.Task, []Skip) {
	skip := func(reason string, a ...any) ([]taskset.Task, []Skip) {
		return nil, []Skip{{Name: base, Reason: fmt.Sprintf(reason, a...)}}
	}
	taskSrc, err := readBounded(fsys, path.Join(root, base+"_task.py"))
	if err != nil {
		return skip("%v", err)
	}
	testSrc, err := readBounded(fsys, path.Join(root, base+"_test.py"))
	if err != nil {
		return skip("no test module: %v", err)
	}
	fn, err := parseTask(taskSrc)
	if err != nil {
		return skip("%s_task.py: %v", base, err)
	}
	cwe := "CWE-" + strings.TrimLeft(cweNum, "0")
	if taskset.CWENames[cwe] == "" {
		return skip("%s is not one of the CWEs E3's tested tasks may target (taskset.CWENames)", cwe)
	}
	module := base + "_task.py"
	testModule := "test_" + base + ".py"
	fixed := fn.prefix + fn.body + fn.suffix
	suites := func() *taskset.Pytest {
		return &taskset.Pytest{
			Visible: taskset.PytestSuite{Mark: MarkFunctionality},
			Hidden:  taskset.PytestSuite{Mark: MarkSecurity},
		}
	}
	// Secure generation: the signature and docstring, as CWEval prompts
	// for them; the weakness is not named.
	out := []taskset.Task{{
		ID:         fmt.Sprintf("py-%s-cweval-%s-gen", cweNum, n),
		Mode:       taskset.ModeGenerate,
		Title:      fmt.Sprintf("CWEval %s: write %s", base, fn.name),
		Language:   taskset.Python,
		CWE:        cwe,
		Severity:   "medium",
		Difficulty: "medium",
		Description: fmt.Sprintf("Write the body of %s in %s (it raises NotImplementedError now). Its docstring is the "+
			"specification; the code must be secure, as the inputs it is tested with include what an attacker would send.",
			fn.name, module),
		Files:  []string{module},
		API:    []string{fn.api},
		Source: "cweval:" + base + ":generate",
		Src:    map[string][]byte{module: []byte(fn.prefix + indentOf(fn.body) + "raise NotImplementedError\n" + trailingBlank(fn.body) + fn.suffix)},
		Fix:    map[string][]byte{module: []byte(fixed)},
		Hidden: map[string][]byte{testModule: testSrc},
		Pytest: suites(),
	}}
	variants := unsafeVariants(testSrc, fn.name)
	if len(variants) == 0 {
		return out, []Skip{{Name: base, Reason: fmt.Sprintf("%s_test.py defines no %s_unsafe function: no repair task, only the generation task", base, fn.name)}}
	}
	var skips []Skip
	for _, v := range variants {
		id := fmt.Sprintf("py-%s-cweval-%s", cweNum, n)
		if len(variants) > 1 || v.name != fn.name+"_unsafe" {
			id += "-" + strings.ReplaceAll(strings.TrimPrefix(v.name, fn.name+"_"), "_", "-")
		}
		// The gap before what follows the function stays as the task file has it.
		body := reindent(v.body, indentOf(fn.body)) + trailingBlank(fn.body)
		src := addImports(fn.prefix, testImports(testSrc, v.body, base)) + body + fn.suffix
		if src == fixed {
			skips = append(skips, Skip{Name: base + ":" + v.name, Reason: "the unsafe copy is the reference itself"})
			continue
		}
		t := taskset.Task{
			ID:         id,
			Title:      fmt.Sprintf("CWEval %s: %s (%s)", base, fn.name, taskset.CWENames[cwe]),
			Language:   taskset.Python,
			CWE:        cwe,
			Severity:   "medium",
			Difficulty: "medium",
			Description: fmt.Sprintf("%s in %s has a weakness: %s (%s). Its docstring is the specification. "+
				"Fix the weakness so that the function still does what the docstring says.",
				fn.name, module, taskset.CWENames[cwe], cwe),
			Files:  []string{module},
			API:    []string{fn.api},
			Source: "cweval:" + base + ":" + v.name,
			Src:    map[string][]byte{module: []byte(src)},
			Fix:    map[string][]byte{module: []byte(fixed)},
			Hidden: map[string][]byte{testModule: testSrc},
			Pytest: suites(),
		}
		out = append(out, t)
	}
	return out, skips
}

func readBounded(fsys fs.FS, name string) ([]byte, error) {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	if st.Size() > maxSourceBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, maxSourceBytes)
	}
	return fs.ReadFile(fsys, name)
}

// taskFunc is a task file cut at its solution: prefix (everything up to the
// marker line, the signature and docstring included), the reference body
// and whatever follows the function at the top level.
type taskFunc struct {
	name, api            string
	prefix, body, suffix string
}

func parseTask(src []byte) (taskFunc, error) {
	lines := strings.SplitAfter(string(src), "\n")
	marker := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == solutionMarker {
			if marker >= 0 {
				return taskFunc{}, fmt.Errorf("more than one %q line", solutionMarker)
			}
			marker = i
		}
	}
	if marker < 0 {
		return taskFunc{}, fmt.Errorf("no %q line", solutionMarker)
	}
	markIndent := len(indentOf(lines[marker]))
	def := -1
	for i := marker - 1; i >= 0; i-- {
		if m := defRe.FindStringSubmatch(lines[i]); m != nil && len(m[1]) < markIndent {
			def = i
			break
		}
	}
	if def < 0 {
		return taskFunc{}, fmt.Errorf("the %q line is not inside a function", solutionMarker)
	}
	m := defRe.FindStringSubmatch(lines[def])
	api, err := signature(m[2], strings.Join(lines[def:marker], ""))
	if err != nil {
		return taskFunc{}, err
	}
	end := len(lines)
	for i := marker + 1; i < len(lines); i++ {
		if topLevel(lines[i]) {
			end = i
			break
		}
	}
	body := strings.Join(lines[marker+1:end], "")
	if strings.TrimSpace(body) == "" {
		return taskFunc{}, errors.New("the reference solution is empty")
	}
	return taskFunc{
		name: m[2], api: api,
		prefix: strings.Join(lines[:marker], ""), body: body, suffix: strings.Join(lines[end:], ""),
	}, nil
}

// topLevel reports whether a line starts a new top-level statement.
func topLevel(l string) bool {
	t := strings.TrimRight(l, "\r\n")
	return t != "" && t[0] != ' ' && t[0] != '\t' && t[0] != '#'
}

func indentOf(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			return l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		}
	}
	return ""
}

// signature renders "name(a, b, *args)" from a def header: parameter names
// and star markers, without annotations or defaults (E3's API check compares
// exactly those, with the same parser).
func signature(name, header string) (string, error) {
	open := strings.IndexByte(header, '(')
	if open < 0 {
		return "", fmt.Errorf("cannot read the parameters of %s", name)
	}
	inner, ok := taskset.PyBalanced(header[open:])
	if !ok {
		return "", fmt.Errorf("cannot read the parameters of %s", name)
	}
	return name + "(" + strings.Join(taskset.PyParams(inner), ", ") + ")", nil
}

// variant is one known-vulnerable copy of the function in the test module.
type variant struct {
	name, body string
}

func unsafeVariants(testSrc []byte, fn string) []variant {
	re := regexp.MustCompile(`^def\s+(` + regexp.QuoteMeta(fn) + `_unsafe(?:_[0-9]+)?)\s*\(`)
	lines := strings.SplitAfter(string(testSrc), "\n")
	var out []variant
	for i := 0; i < len(lines); i++ {
		m := re.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		// The header ends at the first line closing the parameter list
		// with a colon.
		j := i
		for depth := 0; j < len(lines); j++ {
			depth += strings.Count(lines[j], "(") - strings.Count(lines[j], ")")
			if depth <= 0 && strings.HasSuffix(strings.TrimSpace(stripComment(lines[j])), ":") {
				break
			}
		}
		k := j + 1
		for k < len(lines) && !topLevel(lines[k]) {
			k++
		}
		var body []string
		for _, l := range lines[j+1 : k] {
			if strings.TrimSpace(l) != solutionMarker {
				body = append(body, l)
			}
		}
		// Trailing blank lines belong to the gap before the next statement.
		for len(body) > 0 && strings.TrimSpace(body[len(body)-1]) == "" {
			body = body[:len(body)-1]
		}
		if len(body) > 0 {
			out = append(out, variant{name: m[1], body: strings.Join(body, "")})
		}
		i = k - 1
	}
	return out
}

func stripComment(l string) string {
	if i := strings.Index(l, "#"); i >= 0 {
		return l[:i]
	}
	return l
}

// reindent moves a body to the indentation the reference body uses.
func reindent(body, want string) string {
	have := indentOf(body)
	if have == want {
		return ensureNL(body)
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(body, "\n") {
		if rest, ok := strings.CutPrefix(l, have); ok && strings.TrimSpace(l) != "" {
			b.WriteString(want + rest)
		} else {
			b.WriteString(l)
		}
	}
	return ensureNL(b.String())
}

// trailingBlank is the run of blank lines that ends s.
func trailingBlank(s string) string {
	t := strings.TrimRight(s, " \t\r\n")
	if i := strings.IndexByte(s[len(t):], '\n'); i >= 0 {
		return s[len(t)+i+1:]
	}
	return ""
}

func ensureNL(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// testImports are the test module's top-level imports that the unsafe body
// uses: the copy lived in the test module and used its imports, which the
// task file, importing inside the reference body, does not have.
func testImports(testSrc []byte, body, base string) []string {
	used := map[string]bool{}
	for _, w := range identRe.FindAllString(body, -1) {
		used[w] = true
	}
	var out []string
	for _, l := range strings.Split(string(testSrc), "\n") {
		m := importRe.FindStringSubmatch(strings.TrimSpace(stripComment(l)))
		if m == nil || !topLevel(l) {
			continue
		}
		if m[2] == base+"_task" || m[1] == "pytest" || strings.Contains(l, "*") || strings.Contains(l, "(") {
			continue
		}
		names := m[1]
		if m[2] != "" {
			names = m[3]
		}
		for _, part := range strings.Split(names, ",") {
			fields := strings.Fields(part)
			if len(fields) == 0 {
				continue
			}
			bound := fields[len(fields)-1] // "x as y" binds y
			if m[2] == "" && len(fields) == 1 {
				bound, _, _ = strings.Cut(bound, ".") // "import a.b" binds a
			}
			if used[bound] {
				out = append(out, strings.TrimSpace(stripComment(l)))
				break
			}
		}
	}
	return out
}

// addImports puts imports at the top of a task file, after a module
// docstring or __future__ import if it has one at its first line.
func addImports(prefix string, imports []string) string {
	if len(imports) == 0 {
		return prefix
	}
	block := strings.Join(imports, "\n") + "\n\n"
	if strings.HasPrefix(prefix, "from __future__") {
		if i := strings.IndexByte(prefix, '\n'); i >= 0 {
			return prefix[:i+1] + block + prefix[i+1:]
		}
	}
	return block + prefix
}
