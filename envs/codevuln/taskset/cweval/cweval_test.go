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
	if res.Root != "benchmark/core/py" {
		t.Errorf("root %q", res.Root)
	}
	var ids []string
	for _, task := range res.Tasks {
		ids = append(ids, task.ID)
	}
	want := []string{"py-022-cweval-0", "py-022-cweval-0-gen", "py-079-cweval-0-gen", "py-079-cweval-0-unsafe-0",
		"py-079-cweval-0-unsafe-1", "py-117-cweval-0", "py-117-cweval-0-gen"}
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Fatalf("tasks %v, want %v", ids, want)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Name != "c/cwe_190_0_c_task.c" || !strings.Contains(res.Skipped[0].Reason, "C tasks") {
		t.Errorf("skipped %+v, want the C task with its reason", res.Skipped)
	}

	note := res.Tasks[0]
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
	gen := res.Tasks[1]
	gsrc0 := string(gen.Src["cwe_022_0_task.py"])
	if gen.Mode != taskset.ModeGenerate || !strings.HasSuffix(gsrc0, "    '''\n    raise NotImplementedError\n") ||
		!strings.Contains(gsrc0, "Return the text of the note") || strings.Contains(gen.Description, "CWE") {
		t.Errorf("generation task: mode %q, description %q, src:\n%s", gen.Mode, gen.Description, gsrc0)
	}
	if string(gen.Fix["cwe_022_0_task.py"]) != fix || gen.Source != "cweval:cwe_022_0:generate" {
		t.Errorf("generation task: the reference is the task file, source %q", gen.Source)
	}

	greet := res.Tasks[3]
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
