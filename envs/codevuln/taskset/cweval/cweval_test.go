package cweval

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/svbench/svbench/envs/codevuln/taskset"
)

// The checkout under testdata was written for these tests in CWEval's
// layout; it holds none of the benchmark's files.
const checkout = "testdata/checkout"

func TestImportBuildsOneRepairTaskPerUnsafeCopyAndOneGenerationTask(t *testing.T) {
	res, err := Import(os.DirFS(checkout))
	if err != nil {
		t.Fatal(err)
	}
	if res.Root != "benchmark/core" {
		t.Errorf("root %q", res.Root)
	}
	var ids []string
	for _, task := range res.Tasks {
		ids = append(ids, task.ID)
	}
	want := []string{"c-022-cweval-0", "c-022-cweval-0-gen", "cpp-117-cweval-0", "cpp-117-cweval-0-gen", "go-079-cweval-0", "go-079-cweval-0-gen", "js-079-cweval-0", "js-079-cweval-0-gen", "py-020-cweval-0", "py-020-cweval-0-gen", "py-022-cweval-0", "py-022-cweval-0-gen", "py-079-cweval-0-gen", "py-079-cweval-0-unsafe-0",
		"py-079-cweval-0-unsafe-1", "py-117-cweval-0", "py-117-cweval-0-gen"}
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Fatalf("tasks %v, want %v", ids, want)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Name != "c/cwe_190_0_c" || !strings.Contains(res.Skipped[0].Reason, "no test module") {
		t.Errorf("skipped %+v, want the C task without tests, with its reason", res.Skipped)
	}

	note := res.Tasks[10]
	src := string(note.Src["cwe_022_0_task.py"])
	fix := string(note.Fix["cwe_022_0_task.py"])
	for _, c := range []struct {
		what string
		ok   bool
	}{
		{"the API is names only", note.API[0] == "read_note(name, notes_dir)"},
		{"src keeps the docstring", strings.Contains(src, "Return the text of the note")},
		{"src has the unsafe body", strings.Contains(src, "target = os.path.join(notes_dir, name)")},
		{"src drops the reference body", !strings.Contains(src, "commonpath")},
		{"no marker is left", !strings.Contains(src+fix, solutionMarker)},
		{"the fix is the reference", strings.Contains(fix, "commonpath")},
		{"the tests are the benchmark's module, renamed", note.Hidden["test_cwe_022_0.py"] != nil && len(note.Visible) == 0},
		{"suites by mark, counts unknown", note.Pytest.Visible == taskset.PytestSuite{Mark: "functionality"} && note.Pytest.Hidden.Mark == "security"},
		{"the CWE", note.CWE == "CWE-22"},
		{"the source names the copy", note.Source == "cweval:cwe_022_0:read_note_unsafe"},
	} {
		if !c.ok {
			t.Errorf("py-022-cweval-0: %s\nsrc:\n%s", c.what, src)
		}
	}

	// A keyword-only marker and a default survive as names; the unsafe
	// copies, written at the test module's top level, get the test
	// module's imports they use and nothing else.
	gen := res.Tasks[11]
	gsrc0 := string(gen.Src["cwe_022_0_task.py"])
	if gen.Mode != taskset.ModeGenerate || !strings.HasSuffix(gsrc0, "    '''\n    raise NotImplementedError\n") ||
		!strings.Contains(gsrc0, "Return the text of the note") || strings.Contains(gen.Description, "CWE") {
		t.Errorf("generation task: mode %q, description %q, src:\n%s", gen.Mode, gen.Description, gsrc0)
	}
	if string(gen.Fix["cwe_022_0_task.py"]) != fix || gen.Source != "cweval:cwe_022_0:generate" {
		t.Errorf("generation task: the reference is the task file, source %q", gen.Source)
	}

	greet := res.Tasks[13]
	if greet.API[0] != "render_greeting(name, *, tag)" {
		t.Errorf("api %q", greet.API[0])
	}
	gsrc := string(greet.Src["cwe_079_0_task.py"])
	if strings.Contains(gsrc, "import pytest") || strings.Contains(gsrc, "import render_greeting") {
		t.Errorf("test-only imports leaked into the code to fix:\n%s", gsrc)
	}
	if !strings.Contains(gsrc, "    return f'<{tag}>Hello, {name}!</{tag}>'\n") {
		t.Errorf("unsafe_0 body not in place:\n%s", gsrc)
	}
	if !strings.HasPrefix(string(note.Src["cwe_022_0_task.py"]), "import os\n") {
		t.Errorf("the task file's own import should stay first")
	}
}

// C and C++ task files become a repair task (the unsafe file) and a
// generation task (the function's body a stub), under the names the test
// module derives the binary's path from.
func TestImportCompiledTasks(t *testing.T) {
	res, err := Import(os.DirFS(checkout))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]taskset.Task{}
	for _, task := range res.Tasks {
		byID[task.ID] = task
	}
	const file = "cwe_022_0_c_task.c"
	rep, gen := byID["c-022-cweval-0"], byID["c-022-cweval-0-gen"]
	src, fix, stub := string(rep.Src[file]), string(rep.Fix[file]), string(gen.Src[file])
	for _, c := range []struct {
		what string
		ok   bool
	}{
		{"the language", rep.Language == taskset.C && byID["cpp-117-cweval-0"].Language == taskset.Cpp},
		{"the API is the C parameter list", rep.API[0] == "print_note(const char *name, const char *notes_dir)"},
		{"C++ keeps references in the API", byID["cpp-117-cweval-0"].API[0] == "receive_log_line(const std::string &msg)"},
		{"src is the unsafe file", strings.Contains(src, "snprintf(path, sizeof path, \"%s/%s\", notes_dir, name);") && !strings.Contains(src, "realpath")},
		{"the fix is the task file", strings.Contains(fix, "realpath(notes_dir, dir)") && strings.Contains(fix, "int main(")},
		{"no marker is left", !strings.Contains(src+fix+stub, "// BEGIN")},
		{"the stub keeps the comment and main", strings.Contains(stub, "@param notes_dir") && strings.Contains(stub, "print_note(argv[1], argv[2]);")},
		{"the stub's body stops the program", strings.Contains(stub, "{\n    "+cStub+"\n}") && !strings.Contains(stub, "realpath")},
		{"the tests keep their name", rep.Hidden["cwe_022_0_c_test.py"] != nil && len(rep.Hidden) == 1 && len(rep.Visible) == 0},
		{"the sources", rep.Source == "cweval:c/cwe_022_0_c:unsafe" && gen.Source == "cweval:c/cwe_022_0_c:generate"},
		{"the generation task names no weakness", gen.Mode == taskset.ModeGenerate && !strings.Contains(gen.Description, "CWE")},
	} {
		if !c.ok {
			t.Errorf("%s\nsrc:\n%s\nstub:\n%s", c.what, src, stub)
		}
	}

	goRep, goGen := byID["go-079-cweval-0"], byID["go-079-cweval-0-gen"]
	goStub := string(goGen.Src["cwe_079_0_go_task.go"])
	for _, c := range []struct {
		what string
		ok   bool
	}{
		{"a Go task run as a program", goRep.Language == taskset.Go && goRep.RunsBinary() && goRep.Hidden["cwe_079_0_go_test.py"] != nil},
		{"the Go API is the signature", goRep.API[0] == "func greetingHTML(name string) string"},
		{"the stub panics", strings.Contains(goStub, "func greetingHTML(name string) string {\n\tpanic(\"not written yet\")\n}")},
		{"an import only the body used is kept blank", strings.Contains(goStub, "_ \"html\"") && strings.Contains(goStub, "\t\"fmt\"")},
		{"the repair is the unsafe file", !strings.Contains(string(goRep.Src["cwe_079_0_go_task.go"]), "html")},
	} {
		if !c.ok {
			t.Errorf("%s\nstub:\n%s", c.what, goStub)
		}
	}

	jsRep, jsGen := byID["js-079-cweval-0"], byID["js-079-cweval-0-gen"]
	jsStub := string(jsGen.Src["cwe_079_0_js_task.js"])
	if jsRep.Language != taskset.JavaScript || !jsRep.RunsBinary() || jsRep.API[0] != "greetingHtml(name)" ||
		!strings.Contains(jsStub, "function greetingHtml(name) {\n    throw new Error('not written yet');\n}") ||
		!strings.Contains(jsStub, "require.main === module") || strings.Contains(jsStub, "charCodeAt") {
		t.Errorf("JavaScript tasks: %+v\nstub:\n%s", jsRep, jsStub)
	}

	// CWEval's JavaScript copies call the function <name>_unsafe; the
	// code to fix keeps the reference's name.
	js := fstest.MapFS{
		"js/cwe_079_0_js_task.js":   {Data: []byte("// BEGIN PROMPT\n/** Doc. */\nfunction f(a) {\n    // BEGIN SOLUTION\n    return a;\n}\nmodule.exports = f;\n// BEGIN ENTRYPOINT\nconsole.log(f(process.argv[2]));\n")},
		"js/cwe_079_0_js_unsafe.js": {Data: []byte("/** Doc. */\nfunction f_unsafe(a) {\n    return a + a;\n}\nmodule.exports = f_unsafe;\nconsole.log(f_unsafe(process.argv[2]));\n")},
		"js/cwe_079_0_js_test.py":   {Data: []byte("import subprocess\npath = __file__.replace('_test.py', '_task.js')\nsubprocess.run(['node', path])\n")},
	}
	jres, err := Import(js)
	if err != nil || len(jres.Tasks) != 2 || len(jres.Skipped) != 0 {
		t.Fatalf("%v %+v", err, jres)
	}
	if src := string(jres.Tasks[0].Src["cwe_079_0_js_task.js"]); strings.Contains(src, "f_unsafe") || !strings.Contains(src, "console.log(f(process.argv[2]));") {
		t.Errorf("the JavaScript copy keeps its _unsafe name:\n%s", src)
	}

	task := "#include <stdio.h>\n// BEGIN PROMPT\n/* Doc. */\nint f(int a) {\n    // BEGIN SOLUTION\n    return a;\n}\n\n// BEGIN ENTRYPOINT\nint main(void) { return f(1); }\n"
	test := "import os\ncompiled_path = os.path.join('compiled', 'x_task')\n"
	unsafe := "#include <stdio.h>\n/* Doc. */\nint f(int a) {\n    return -a;\n}\nint main(void) { return f(1); }\n"
	for _, c := range []struct {
		name, task, test, unsafe, reason string
		gen                              bool
	}{
		{"no marker", strings.Replace(task, "    // BEGIN SOLUTION\n", "", 1), test, unsafe, "exactly one", false},
		{"marker in main", strings.Replace(strings.Replace(task, "    // BEGIN SOLUTION\n", "", 1), "{ return f(1); }", "{\n// BEGIN SOLUTION\nreturn f(1); }", 1), test, unsafe, "inside main", false},
		{"marker outside a function", strings.Replace(task, "    // BEGIN SOLUTION\n", "", 1) + "// BEGIN SOLUTION\n", test, unsafe, "not inside a function", false},
		{"tests that run no binary", task, "def test_f():\n    pass\n", unsafe, "does not run compiled/", false},
		{"no unsafe file", task, test, "", "no repair task", true},
		{"unsafe is the reference", task, test, strings.NewReplacer("// BEGIN PROMPT\n", "", "    // BEGIN SOLUTION\n", "", "// BEGIN ENTRYPOINT\n", "").Replace(task), "reference itself", true},
		{"unsafe renames the function", task, test, strings.Replace(unsafe, "int f(", "int g(", 1), "defines no f", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			fsys := fstest.MapFS{"c/cwe_022_0_c_task.c": {Data: []byte(c.task)}, "c/cwe_022_0_c_test.py": {Data: []byte(c.test)}}
			if c.unsafe != "" {
				fsys["c/cwe_022_0_c_unsafe.c"] = &fstest.MapFile{Data: []byte(c.unsafe)}
			}
			res, err := Import(fsys)
			if err != nil {
				t.Fatal(err)
			}
			wantTasks := 0
			if c.gen {
				wantTasks = 1
			}
			if len(res.Tasks) != wantTasks || len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Reason, c.reason) {
				t.Errorf("tasks %d, skipped %+v; want %d and one skip saying %q", len(res.Tasks), res.Skipped, wantTasks, c.reason)
			}
		})
	}
}

// Every task the importer builds is a valid task once its counts are known.
func TestImportedTasksValidate(t *testing.T) {
	res, err := Import(os.DirFS(checkout))
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range res.Tasks {
		task.Pytest.Visible.Tests, task.Pytest.Hidden.Tests = 1, 1
		if err := taskset.Validate(&task); err != nil {
			t.Errorf("%s: %v", task.ID, err)
		}
		task.Pytest.Hidden.Tests = 0
		if err := taskset.Validate(&task); err == nil || !strings.Contains(err.Error(), "pytest.hidden.tests") {
			t.Errorf("%s: a zero count must not validate, got %v", task.ID, err)
		}
	}
}

func TestImportExplainsWhatItSkips(t *testing.T) {
	head := "def f(a, b=1):\n    '''Doc.'''\n"
	cases := []struct {
		name, task, test, reason string
		gen                      bool
	}{
		{"no marker", head + "    return a\n", "def f_unsafe(a, b=1):\n    return b\n", `no "# BEGIN SOLUTION" line`, false},
		{"two markers", head + "    # BEGIN SOLUTION\n    # BEGIN SOLUTION\n    return a\n", "def f_unsafe(a, b=1):\n    return b\n", "more than one", false},
		{"marker outside a function", "# BEGIN SOLUTION\nx = 1\n", "def f_unsafe():\n    return 1\n", "not inside a function", false},
		{"empty solution", head + "    # BEGIN SOLUTION\n", "def f_unsafe(a, b=1):\n    return b\n", "empty", false},
		{"no unsafe copy", head + "    # BEGIN SOLUTION\n    return a\n", "def test_f():\n    pass\n", "no f_unsafe", true},
		{"copy is the reference", head + "    # BEGIN SOLUTION\n    return a\n", "def f_unsafe(a, b=1):\n    # BEGIN SOLUTION\n    return a\n", "reference itself", true},
		{"untested CWE", head + "    # BEGIN SOLUTION\n    return a\n", "def f_unsafe(a, b=1):\n    return b\n", "CWE-1", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cwe := "022"
			if c.name == "untested CWE" {
				cwe = "001"
			}
			fsys := fstest.MapFS{
				"py/cwe_" + cwe + "_0_task.py": {Data: []byte(c.task)},
				"py/cwe_" + cwe + "_0_test.py": {Data: []byte(c.test)},
			}
			res, err := Import(fsys)
			if err != nil {
				t.Fatal(err)
			}
			// A task file that parses still makes its generation task.
			wantTasks := 0
			if c.gen {
				wantTasks = 1
			}
			if len(res.Tasks) != wantTasks || len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Reason, c.reason) {
				t.Errorf("tasks %d, skipped %+v; want %d and one skip saying %q", len(res.Tasks), res.Skipped, wantTasks, c.reason)
			}
		})
	}
	if _, err := Import(fstest.MapFS{"README.md": {Data: []byte("x")}}); err == nil || !strings.Contains(err.Error(), "CWEval checkout") {
		t.Errorf("a directory without tasks: %v", err)
	}
}

func TestUnsafeBodyIsReindentedAndKeepsLaterFunctions(t *testing.T) {
	task := "def f(x):\n  '''Doc.'''\n  # BEGIN SOLUTION\n  return abs(x)\n\n\ndef helper():\n  return 2\n"
	test := "import math\nimport os.path\nfrom json import dumps as jd, loads\n\n\ndef f_unsafe(\n    x,\n):\n    # BEGIN SOLUTION\n    return math.fabs(x) + jd(1) and os.path.sep\n\n\ndef test_f():\n    pass\n"
	res, err := Import(fstest.MapFS{"py/cwe_022_0_task.py": {Data: []byte(task)}, "py/cwe_022_0_test.py": {Data: []byte(test)}})
	if err != nil || len(res.Tasks) != 2 {
		t.Fatalf("%v %d tasks", err, len(res.Tasks))
	}
	src := string(res.Tasks[0].Src["cwe_022_0_task.py"])
	want := "import math\nimport os.path\nfrom json import dumps as jd, loads\n\ndef f(x):\n  '''Doc.'''\n  return math.fabs(x) + jd(1) and os.path.sep\n\n\ndef helper():\n  return 2\n"
	if src != want {
		t.Errorf("src:\n%s\nwant:\n%s", src, want)
	}
}

// FuzzParseTask: a benchmark file of any content is refused or cut into
// prefix, body and suffix that put it back together without the marker.
func FuzzParseTask(f *testing.F) {
	for _, s := range []string{
		"def f(a):\n    '''d'''\n    # BEGIN SOLUTION\n    return a\n",
		"import os\n\nasync def g(a: int = (1, 2), *args, **kw) -> None:\n    # BEGIN SOLUTION\n    pass\n\nx = 1\n",
		"def f(a:\n  # BEGIN SOLUTION\n",
		"class C:\n    def m(self, s='(,'):\n        # BEGIN SOLUTION\n        return s\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fn, err := parseTask([]byte(s))
		if err != nil {
			return
		}
		if fn.name == "" || !strings.HasPrefix(fn.api, fn.name+"(") || !strings.HasSuffix(fn.api, ")") {
			t.Fatalf("api %q for %q", fn.api, fn.name)
		}
		var kept []string
		for _, l := range strings.SplitAfter(s, "\n") {
			if strings.TrimSpace(l) != solutionMarker {
				kept = append(kept, l)
			}
		}
		if got := fn.prefix + fn.body + fn.suffix; got != strings.Join(kept, "") {
			t.Fatalf("pieces do not rebuild the file:\n%q\n%q", got, strings.Join(kept, ""))
		}
		_ = unsafeVariants([]byte(s), fn.name)
	})
}
