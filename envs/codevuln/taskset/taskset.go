// Package taskset reads and validates E3 (code-vulnerability repair) task
// directories. The on-disk format is described in envs/codevuln/tasks/README.md;
// the engine imports this package so that a malformed task fails at load time
// with an error naming the task, the file and the field, not mid-episode.
package taskset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Languages.
const (
	Python = "python"
	Go     = "go"
	// C and Cpp tasks are imported benchmarks' (CWEval): the candidate is
	// compiled in the sandbox and a pytest module runs the binary.
	C   = "c"
	Cpp = "cpp"
	// JavaScript tasks too are imported (CWEval): the tests run the
	// candidate's script with node, in the sandbox.
	JavaScript = "javascript"
)

// langPrefix is the id prefix and langExt the source extension of each
// language.
var (
	langPrefix = map[string]string{Python: "py", Go: "go", C: "c", Cpp: "cpp", JavaScript: "js"}
	langExt    = map[string]string{Python: ".py", Go: ".go", C: ".c", Cpp: ".cpp", JavaScript: ".js"}
)

// Compiled reports whether a language's tasks are built by a C or C++
// compiler and tested through their binary (always pytest tasks).
func Compiled(lang string) bool { return lang == C || lang == Cpp }

// CLike reports whether a language's functions are read by CFuncs: C, C++
// and JavaScript (function declarations) share braces, comments and
// quoting closely enough.
func CLike(lang string) bool { return Compiled(lang) || lang == JavaScript }

// RunsBinary reports whether the task's tests run its code as a program
// (a C or C++ task, or a Go task imported with a pytest suite) rather than
// importing it.
func (t *Task) RunsBinary() bool {
	return Compiled(t.Language) || t.Language == JavaScript || t.Language == Go && t.Pytest != nil
}

// Modes. A tested task ships behavioural and hidden security tests; a
// static-only task (imported before/after pairs) has none, and its scores
// must be reported apart from tested ones.
//
// A generate task (secure code generation, as CWEval measures it) is
// tested too, but its src/ is only the function's signature and docstring:
// the model writes the code, and the report counts functionality and
// security apart (func@k, sec@k, func-sec@k), never with repairs.
const (
	ModeTested     = "tested"
	ModeStaticOnly = "static-only"
	ModeGenerate   = "generate"
)

// GoMod is the go.mod every Go task builds with. It is not stored on disk: the
// go tool treats a directory holding go.mod as a nested module, and go:embed
// silently drops nested modules, so Load adds it to Src.
const GoMod = "module example.com/task\n\ngo 1.22\n"

// Bounds keep a hostile or corrupted task directory from exhausting memory.
const (
	MaxFileBytes  = 256 << 10
	MaxTaskBytes  = 2 << 20
	MaxTaskFiles  = 64
	maxMetaBytes  = 64 << 10
	maxDescLength = 4000
)

// Task is one E3 task with every file it owns loaded into memory. Map keys are
// slash-separated paths relative to src/, fix/, tests/visible/ and
// tests/hidden/ respectively.
type Task struct {
	ID          string   `json:"id"`
	Title       string   `json:"title"`
	Language    string   `json:"language"`
	CWE         string   `json:"cwe"`
	Severity    string   `json:"severity"`
	Description string   `json:"description"`
	Files       []string `json:"files"`
	API         []string `json:"api"`
	Difficulty  string   `json:"difficulty"`
	// Mode is ModeTested or ModeStaticOnly; task.json may omit it for tested tasks.
	Mode string `json:"mode,omitempty"`
	// Source records where an imported or generated task came from
	// (e.g. "cvefixes:CVE-2021-1234", "mutate:sqli-format seed=7").
	Source string `json:"source,omitempty"`
	// Pytest, when set, makes the task's tests pytest modules under
	// tests/hidden whose marks select each suite (imported benchmarks such
	// as CWEval keep functionality and security cases in one file, so no
	// test file can be shown to the model).
	Pytest *Pytest `json:"pytest,omitempty"`

	Src     map[string][]byte `json:"-"`
	Fix     map[string][]byte `json:"-"`
	Visible map[string][]byte `json:"-"`
	Hidden  map[string][]byte `json:"-"`
	// NearMiss holds plausible partial fixes, variant name to editable file
	// to whole content (nearmiss/<variant>/<file>): each keeps the weakness
	// while passing the visible tests, so the hidden tests must fail it.
	// They are the mutants that test the tests (TestNearMissContract); a
	// model never sees them.
	NearMiss map[string]map[string][]byte `json:"-"`
}

// Pytest selects a task's two suites from its pytest modules by mark.
type Pytest struct {
	Visible PytestSuite `json:"visible"`
	Hidden  PytestSuite `json:"hidden"`
}

// PytestSuite is one suite: the tests carrying Mark, of which there must be
// exactly Tests (the count the importer saw the reference collect: a
// candidate that makes collection shrink fails rather than passing fewer
// tests).
type PytestSuite struct {
	Mark  string `json:"mark"`
	Tests int    `json:"tests"`
}

// Tested reports whether the task has executable tests.
func (t Task) Tested() bool { return t.Mode != ModeStaticOnly }

// APINames returns the function or method name of each API entry, e.g.
// "find_user" for "find_user(conn, username)" and "Get" for
// "func (s *Store) Get(key string) ([]byte, error)".
func (t Task) APINames() []string {
	out := make([]string, 0, len(t.API))
	for _, a := range t.API {
		if n, err := apiName(a); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// NearMissed returns the source tree with near-miss variant applied (nil
// for an unknown variant).
func (t Task) NearMissed(variant string) map[string][]byte {
	files, ok := t.NearMiss[variant]
	if !ok {
		return nil
	}
	out := make(map[string][]byte, len(t.Src))
	for k, v := range t.Src {
		out[k] = v
	}
	for k, v := range files {
		out[k] = v
	}
	return out
}

// Fixed returns the source tree with the reference fix applied.
func (t Task) Fixed() map[string][]byte {
	out := make(map[string][]byte, len(t.Src))
	for k, v := range t.Src {
		out[k] = v
	}
	for k, v := range t.Fix {
		out[k] = v
	}
	return out
}

// meta is task.json; unknown fields are rejected so typos do not silently
// drop metadata.
type meta struct {
	ID          string   `json:"id"`
	Title       string   `json:"title"`
	Language    string   `json:"language"`
	CWE         string   `json:"cwe"`
	Severity    string   `json:"severity"`
	Description string   `json:"description"`
	Files       []string `json:"files"`
	API         []string `json:"api"`
	Difficulty  string   `json:"difficulty"`
	Mode        string   `json:"mode,omitempty"`
	Source      string   `json:"source,omitempty"`
	Pytest      *Pytest  `json:"pytest,omitempty"`
}

var (
	idRe      = regexp.MustCompile(`^(py|go|c|cpp|js)-([0-9]{3,4})-[a-z0-9]+(-[a-z0-9]+)*$`)
	cweRe     = regexp.MustCompile(`^CWE-([1-9][0-9]{0,4})$`)
	variantRe = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	markRe    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
	// An API entry: optional "func", optional Go receiver, a name, a parameter list.
	apiRe = regexp.MustCompile(`^(?:func\s+)?(?:\([^()]*\)\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*\(`)
)

// Severities, difficulties.
var (
	Severities   = []string{"low", "medium", "high", "critical"}
	Difficulties = []string{"easy", "medium", "hard"}
)

// CWENames names the weaknesses tested tasks may target. Static-only imported
// tasks may carry any syntactically valid CWE id.
var CWENames = map[string]string{
	"CWE-20":   "Improper Input Validation",
	"CWE-22":   "Path Traversal",
	"CWE-78":   "OS Command Injection",
	"CWE-79":   "Cross-site Scripting",
	"CWE-89":   "SQL Injection",
	"CWE-94":   "Code Injection",
	"CWE-95":   "Eval Injection",
	"CWE-113":  "HTTP Response Splitting",
	"CWE-117":  "Improper Output Neutralization for Logs",
	"CWE-190":  "Integer Overflow or Wraparound",
	"CWE-191":  "Integer Underflow",
	"CWE-208":  "Observable Timing Discrepancy",
	"CWE-209":  "Information Exposure Through an Error Message",
	"CWE-295":  "Improper Certificate Validation",
	"CWE-326":  "Inadequate Encryption Strength",
	"CWE-327":  "Broken or Risky Cryptographic Algorithm",
	"CWE-330":  "Use of Insufficiently Random Values",
	"CWE-329":  "Generation of Predictable IV with CBC Mode",
	"CWE-338":  "Cryptographically Weak PRNG",
	"CWE-347":  "Improper Verification of Cryptographic Signature",
	"CWE-352":  "Cross-Site Request Forgery",
	"CWE-367":  "Time-of-check Time-of-use Race Condition",
	"CWE-377":  "Insecure Temporary File",
	"CWE-400":  "Uncontrolled Resource Consumption",
	"CWE-434":  "Unrestricted Upload of File with Dangerous Type",
	"CWE-502":  "Deserialization of Untrusted Data",
	"CWE-601":  "Open Redirect",
	"CWE-611":  "XML External Entity Reference",
	"CWE-643":  "XPath Injection",
	"CWE-732":  "Incorrect Permission Assignment for Critical Resource",
	"CWE-760":  "Use of a One-Way Hash with a Predictable Salt",
	"CWE-776":  "XML Entity Expansion",
	"CWE-798":  "Use of Hard-coded Credentials",
	"CWE-918":  "Server-Side Request Forgery",
	"CWE-943":  "Improper Neutralization of Special Elements in Data Query Logic",
	"CWE-1333": "Inefficient Regular Expression Complexity",
}

// Load reads every task directory at the root of fsys (one directory per
// task; other entries are ignored), validates each and returns them sorted by
// id. All validation errors are returned together, each naming the task
// directory, file and field.
func Load(fsys fs.FS) ([]Task, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("taskset: reading task root: %w", err)
	}
	var tasks []Task
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), "_") {
			continue
		}
		sub, err := fs.Sub(fsys, e.Name())
		if err != nil {
			errs = append(errs, fmt.Errorf("task %s: %w", e.Name(), err))
			continue
		}
		t, err := LoadDir(sub, e.Name())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		tasks = append(tasks, t)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(tasks) == 0 {
		return nil, errors.New("taskset: no task directories found (expected <task-id>/task.json)")
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].ID < tasks[j].ID })
	return tasks, nil
}

// LoadDir reads and validates one task directory; dirName is the directory's
// name, which must equal the task id.
func LoadDir(fsys fs.FS, dirName string) (Task, error) {
	fail := func(format string, a ...any) (Task, error) {
		return Task{}, fmt.Errorf("task %s: "+format, append([]any{dirName}, a...)...)
	}
	raw, err := readBounded(fsys, "task.json", maxMetaBytes)
	if err != nil {
		return fail("task.json: %w", err)
	}
	var m meta
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return fail("task.json: %w (fields: id, title, language, cwe, severity, description, files, api, difficulty, mode, source, pytest)", err)
	}
	if dec.More() {
		return fail("task.json: trailing data after the JSON object")
	}
	t := Task{
		ID: m.ID, Title: m.Title, Language: m.Language, CWE: m.CWE, Severity: m.Severity,
		Description: m.Description, Files: m.Files, API: m.API, Difficulty: m.Difficulty,
		Mode: m.Mode, Source: m.Source, Pytest: m.Pytest,
	}
	if t.Mode == "" {
		t.Mode = ModeTested
	}
	budget := MaxTaskBytes
	count := 0
	for _, part := range []struct {
		dir string
		dst *map[string][]byte
	}{{"src", &t.Src}, {"fix", &t.Fix}, {"tests/visible", &t.Visible}, {"tests/hidden", &t.Hidden}} {
		files, err := readTree(fsys, part.dir, &budget, &count)
		if err != nil {
			return fail("%w", err)
		}
		*part.dst = files
	}
	near, err := readTree(fsys, "nearmiss", &budget, &count)
	if err != nil {
		return fail("%w", err)
	}
	for p, body := range near {
		variant, file, ok := strings.Cut(p, "/")
		if !ok {
			return fail("nearmiss/%s: expected nearmiss/<variant>/<file>", p)
		}
		if t.NearMiss == nil {
			t.NearMiss = map[string]map[string][]byte{}
		}
		if t.NearMiss[variant] == nil {
			t.NearMiss[variant] = map[string][]byte{}
		}
		t.NearMiss[variant][file] = body
	}
	if err := validate(&t, dirName); err != nil {
		return fail("%w", err)
	}
	return t, nil
}

// Validate checks an in-memory task (e.g. one produced by a generator or an
// importer) against the format, exactly as Load checks a directory. For Go
// tasks without src/go.mod it adds GoMod to Src.
func Validate(t *Task) error {
	if t.Mode == "" {
		t.Mode = ModeTested
	}
	if t.Src == nil {
		t.Src = map[string][]byte{}
	}
	if err := validate(t, t.ID); err != nil {
		return fmt.Errorf("task %s: %w", t.ID, err)
	}
	return nil
}

func validate(t *Task, dirName string) error {
	var p problems
	p.fields(t, dirName)
	seen := p.files(t)
	p.tests(t)
	p.goModule(t, seen)
	return errors.Join(p...)
}

// problems collects everything wrong with a task, so one run of the
// checker names them all.
type problems []error

func (p *problems) add(format string, a ...any) { *p = append(*p, fmt.Errorf(format, a...)) }

// fields checks task.json's own fields.
func (p *problems) fields(t *Task, dirName string) {
	add := p.add
	idm := idRe.FindStringSubmatch(t.ID)
	switch {
	case t.ID == "":
		add("task.json: field id is empty")
	case t.ID != dirName:
		add("task.json: field id %q differs from the directory name %q", t.ID, dirName)
	case idm == nil:
		add("task.json: field id %q must look like py-089-user-lookup or go-022-static-files (prefix, zero-padded CWE number, lower-case slug)", t.ID)
	}
	if strings.TrimSpace(t.Title) == "" {
		add("task.json: field title is empty")
	}
	switch prefix, ok := langPrefix[t.Language]; {
	case !ok:
		add("task.json: field language %q must be %q, %q, %q, %q or %q", t.Language, Python, Go, C, Cpp, JavaScript)
	case idm != nil && idm[1] != prefix:
		add("task.json: field id %q: prefix %q does not match language %q", t.ID, idm[1], t.Language)
	case (Compiled(t.Language) || t.Language == JavaScript) && t.Pytest == nil:
		add("task.json: language %q: C, C++ and JavaScript tasks are tested by a pytest module (field pytest) running the program", t.Language)
	}
	cm := cweRe.FindStringSubmatch(t.CWE)
	switch {
	case cm == nil:
		add("task.json: field cwe %q must look like CWE-89", t.CWE)
	case t.Mode != ModeStaticOnly && CWENames[t.CWE] == "":
		add("task.json: field cwe %q is not one of the CWEs tested tasks may target (see taskset.CWENames)", t.CWE)
	case idm != nil && strings.TrimLeft(idm[2], "0") != cm[1]:
		add("task.json: field id %q encodes CWE %s but field cwe is %s", t.ID, idm[2], t.CWE)
	}
	if !slices.Contains(Severities, t.Severity) {
		add("task.json: field severity %q must be one of %s", t.Severity, strings.Join(Severities, ", "))
	}
	if !slices.Contains(Difficulties, t.Difficulty) {
		add("task.json: field difficulty %q must be one of %s", t.Difficulty, strings.Join(Difficulties, ", "))
	}
	if t.Mode != ModeTested && t.Mode != ModeStaticOnly && t.Mode != ModeGenerate {
		add("task.json: field mode %q must be %q, %q or %q", t.Mode, ModeTested, ModeStaticOnly, ModeGenerate)
	}
	if d := strings.TrimSpace(t.Description); d == "" {
		add("task.json: field description is empty")
	} else if len(d) > maxDescLength {
		add("task.json: field description is %d bytes, more than %d", len(d), maxDescLength)
	}
}

// files checks the editable files, the API they keep, the reference fix
// and the near misses; it returns the set of editable files.
func (p *problems) files(t *Task) map[string]bool {
	add := p.add
	ext := langExt[t.Language]
	if len(t.Files) == 0 {
		add("task.json: field files is empty (list the editable files under src/)")
	}
	seen := map[string]bool{}
	for i, f := range t.Files {
		switch {
		case !fs.ValidPath(f) || f == ".":
			add("task.json: files[%d] %q is not a clean relative path", i, f)
		case seen[f]:
			add("task.json: files[%d] %q is listed twice", i, f)
		case t.Src[f] == nil:
			add("task.json: files[%d] %q does not exist under src/", i, f)
		case ext != "" && path.Ext(f) != ext:
			add("task.json: files[%d] %q is not a %s file", i, f, ext)
		}
		seen[f] = true
	}

	if len(t.API) == 0 {
		add("task.json: field api is empty (list the public functions whose signatures must be preserved)")
	}
	for i, a := range t.API {
		name, err := apiName(a)
		if err != nil {
			add("task.json: api[%d]: %v", i, err)
			continue
		}
		if !definedIn(t.Language, name, t.Src, t.Files) {
			add("task.json: api[%d] %q: no definition of %s in the editable src/ files", i, a, name)
		}
	}

	if len(t.Src) == 0 {
		add("src/: no files")
	}
	if len(t.Fix) == 0 {
		add("fix/: no files (the reference fix holds the changed files in full)")
	}
	for f, body := range t.Fix {
		switch {
		case t.Src[f] == nil:
			add("fix/%s: no file of the same name under src/", f)
		case !seen[f]:
			add("fix/%s: not listed in task.json files, so a model could not make this change", f)
		case bytes.Equal(body, t.Src[f]):
			add("fix/%s: identical to src/%s", f, f)
		}
	}

	for variant, files := range t.NearMiss {
		switch {
		case !variantRe.MatchString(variant):
			add("nearmiss/%s: variant names are lower-case words joined by '-'", variant)
		case t.Mode == ModeStaticOnly:
			add("nearmiss/%s: a static-only task has no tests to fail a near miss", variant)
		}
		for f, body := range files {
			switch {
			case !seen[f]:
				add("nearmiss/%s/%s: not listed in task.json files", variant, f)
			case bytes.Equal(body, t.Src[f]) || t.Fix[f] != nil && bytes.Equal(body, t.Fix[f]):
				add("nearmiss/%s/%s: identical to the original or the reference fix", variant, f)
			}
		}
	}
	return seen
}

// tests checks the visible and hidden test files.
func (p *problems) tests(t *Task) {
	add := p.add
	if t.Mode == ModeStaticOnly {
		if len(t.Visible)+len(t.Hidden) > 0 {
			add("tests/: a static-only task must not ship tests (drop mode or the tests)")
		}
	} else {
		checkTests := func(dir string, files map[string][]byte) {
			if len(files) == 0 {
				add("%s/: no test files", dir)
			}
			for f := range files {
				base := path.Base(f)
				switch {
				case t.RunsBinary():
					// The benchmark's module under its own name: its
					// tests derive the binary's path from it.
					if path.Ext(f) != ".py" || strings.Contains(f, "/") {
						add("%s/%s: the tests of a task run as a program are pytest modules at the top of the test directory", dir, f)
					}
				case t.Language == Python:
					if strings.HasSuffix(f, ".py") && !strings.HasPrefix(base, "test_") {
						add("%s/%s: Python test modules must be named test_*.py", dir, f)
					}
				case t.Language == Go:
					if !strings.HasSuffix(f, "_test.go") || strings.Contains(f, "/") {
						add("%s/%s: Go tests must be *_test.go files at the top of the test directory", dir, f)
					}
				}
				if t.Src[f] != nil {
					add("%s/%s: shadows a file of the same name under src/", dir, f)
				}
			}
		}
		if t.Pytest != nil {
			p.pytest(t)
			checkTests("tests/hidden", t.Hidden)
			return
		}
		checkTests("tests/visible", t.Visible)
		checkTests("tests/hidden", t.Hidden)
	}
}

// pytest checks a task whose suites are marks of its pytest modules.
func (p *problems) pytest(t *Task) {
	add := p.add
	if _, ok := langPrefix[t.Language]; !ok {
		add("task.json: field pytest: a %q task cannot run pytest", t.Language)
	}
	if len(t.Visible) > 0 {
		add("tests/visible/: a pytest task keeps its tests under tests/hidden (the marks select each suite, and a file shown to the model would show the security cases too)")
	}
	for _, s := range []struct {
		name  string
		suite PytestSuite
	}{{"visible", t.Pytest.Visible}, {"hidden", t.Pytest.Hidden}} {
		if !markRe.MatchString(s.suite.Mark) {
			add("task.json: field pytest.%s.mark %q must be a pytest mark name (letters, digits, underscores)", s.name, s.suite.Mark)
		}
		if s.suite.Tests <= 0 {
			add("task.json: field pytest.%s.tests must be the number of tests the mark selects, got %d", s.name, s.suite.Tests)
		}
	}
	if t.Pytest.Visible.Mark == t.Pytest.Hidden.Mark {
		add("task.json: field pytest: the visible and hidden suites use the same mark %q", t.Pytest.Visible.Mark)
	}
}

// goModule supplies a Go task's go.mod when it has none, and checks one it
// has.
func (p *problems) goModule(t *Task, seen map[string]bool) {
	add := p.add
	if t.Language == Go {
		if mod, ok := t.Src["go.mod"]; ok {
			if !bytes.HasPrefix(bytes.TrimSpace(mod), []byte("module example.com/task")) {
				add("src/go.mod: must declare module example.com/task")
			}
		} else {
			t.Src["go.mod"] = []byte(GoMod)
		}
		if seen["go.mod"] {
			add("task.json: files lists go.mod, which is not editable")
		}
	}
}

func apiName(a string) (string, error) {
	m := apiRe.FindStringSubmatch(strings.TrimSpace(a))
	if m == nil {
		return "", fmt.Errorf("%q is not a signature like name(arg, ...) or func (r *T) Name(arg T) error", a)
	}
	return m[1], nil
}

func definedIn(lang, name string, src map[string][]byte, files []string) bool {
	var re *regexp.Regexp
	q := regexp.QuoteMeta(name)
	switch lang {
	case Python:
		re = regexp.MustCompile(`(?m)^\s*(?:async\s+)?(?:def|class)\s+` + q + `\b`)
	case Go:
		re = regexp.MustCompile(`(?m)^func\s+(?:\([^)]*\)\s*)?` + q + `\b`)
	case C, Cpp, JavaScript:
		for _, f := range files {
			if _, ok := CFunc(src[f], name); ok {
				return true
			}
		}
		return false
	default:
		return true
	}
	for _, f := range files {
		if re.Match(src[f]) {
			return true
		}
	}
	return false
}

// readTree reads every regular file under dir (which may be absent). Paths are
// relative to dir.
func readTree(fsys fs.FS, dir string, budget, count *int) (map[string][]byte, error) {
	out := map[string][]byte{}
	if _, err := fs.Stat(fsys, dir); errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if d.IsDir() {
			if p != dir && (strings.HasPrefix(d.Name(), ".") || d.Name() == "__pycache__") {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file (symlinks and devices are refused)", p)
		}
		if strings.HasSuffix(p, ".pyc") {
			return nil
		}
		*count++
		if *count > MaxTaskFiles {
			return fmt.Errorf("%s: more than %d files in the task", p, MaxTaskFiles)
		}
		body, err := readBounded(fsys, p, MaxFileBytes)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		*budget -= len(body)
		if *budget < 0 {
			return fmt.Errorf("%s: task files exceed %d bytes in total", p, MaxTaskBytes)
		}
		out[strings.TrimPrefix(p, dir+"/")] = body
		return nil
	})
	return out, err
}

func readBounded(fsys fs.FS, name string, limit int) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if n > int64(limit) {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return buf.Bytes(), nil
}
