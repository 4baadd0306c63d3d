package codevuln

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/codevuln/taskset"
)

// cwevalEnv is an environment of its own that has loaded the tasks
// imported from the small CWEval-layout checkout under
// taskset/cweval/testdata (written for these tests): the package's shared
// environment must not see them, since other tests iterate its tasks.
func cwevalEnv(t *testing.T) (*Env, string, []*taskset.Task) {
	t.Helper()
	if testing.Short() {
		t.Skip("imports and runs pytest suites in the sandbox")
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import pytest").Run(); err != nil {
		t.Skip("python3-pytest is not installed (scripts/deps.sh test installs it)")
	}
	for _, tool := range []string{"/usr/bin/gcc", "/usr/bin/g++", "/usr/bin/node"} {
		if _, err := os.Stat(tool); err != nil {
			t.Skipf("%s is not installed (scripts/deps.sh test installs gcc, g++ and nodejs)", tool)
		}
	}
	shared := testEnv(t) // skips without a sandbox
	e, err := New(context.Background(), env.Options{Params: map[string]string{ParamTestTimeout: "15"}})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	err = importCWEval(context.Background(), "taskset/cweval/testdata/checkout", out,
		cwevalOptions{Concurrency: 2, Verifier: shared.v}, env.DataIO{Out: &stdout, Err: &stderr})
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if _, err := e.Load(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	var tasks []*taskset.Task
	for _, x := range e.Tasks() {
		if strings.Contains(x.ID, "-cweval-") {
			tasks = append(tasks, x)
		}
	}
	return e, out, tasks
}

// checkCWEvalImport: the import keeps the tasks whose
// reference passes and whose unsafe code fails the security tests, counts
// each suite from the reference, and refuses (and reports) the task whose
// security test the unsafe code passes.
// TestCWEvalImported imports the checkout once and runs the checks below
// on what it made.
func TestCWEvalImported(t *testing.T) {
	e, out, tasks := cwevalEnv(t)
	t.Run("import", func(t *testing.T) { checkCWEvalImport(t, out, tasks) })
	t.Run("score and probes", func(t *testing.T) { checkCWEvalScores(t, e, tasks) })
	t.Run("run_tests tool", func(t *testing.T) { checkCWEvalRunTests(t, e, tasks) })
}

func checkCWEvalImport(t *testing.T, out string, tasks []*taskset.Task) {
	var ids []string
	for _, x := range tasks {
		ids = append(ids, x.ID)
	}
	want := []string{"c-022-cweval-0", "c-022-cweval-0-gen", "cpp-117-cweval-0", "cpp-117-cweval-0-gen",
		"go-079-cweval-0", "go-079-cweval-0-gen", "js-079-cweval-0", "js-079-cweval-0-gen", "py-022-cweval-0", "py-022-cweval-0-gen", "py-079-cweval-0-gen", "py-079-cweval-0-unsafe-0",
		"py-079-cweval-0-unsafe-1", "py-117-cweval-0-gen"}
	if !slices.Equal(ids, want) {
		t.Fatalf("kept %v, want %v", ids, want)
	}
	counts := map[string][2]int{"py-022-cweval-0": {3, 2}, "py-079-cweval-0-unsafe-0": {2, 3}, "c-022-cweval-0": {3, 2}, "cpp-117-cweval-0": {2, 2}, "go-079-cweval-0": {2, 2}, "js-079-cweval-0": {2, 2}}
	for id, c := range counts {
		for _, x := range tasks {
			if x.ID == id && (x.Pytest.Visible.Tests != c[0] || x.Pytest.Hidden.Tests != c[1]) {
				t.Errorf("%s: counts %+v, want functionality %d and security %d (the module's own _unsafe test is not counted)", id, x.Pytest, c[0], c[1])
			}
		}
	}
	var rep cwevalReport
	b, err := os.ReadFile(filepath.Join(out, "import.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Kept != 14 || len(rep.Checks) != 17 || len(rep.Skipped) != 1 || rep.ByLang[taskset.C] != 2 || rep.ByLang[taskset.Cpp] != 2 ||
		rep.ByLang[taskset.Go] != 2 || rep.ByLang[taskset.JavaScript] != 2 {
		t.Errorf("import.json: kept %d of %d, %d skipped", rep.Kept, len(rep.Checks), len(rep.Skipped))
	}
	for _, c := range rep.Checks {
		if c.ID == "py-117-cweval-0" && (c.Kept() || !c.OriginalHidden || !strings.Contains(c.Problem, "unsafe code passes every security test")) {
			t.Errorf("the weak task must be refused with its reason: %+v", c)
		}
		// A suite that never runs the function: both tasks refused.
		if c.ID == "py-020-cweval-0" && (c.Kept() || !strings.Contains(c.Problem, "unsafe code passes every security test")) ||
			c.ID == "py-020-cweval-0-gen" && (c.Kept() || !c.OriginalVisible || !strings.Contains(c.Problem, "the unwritten function passes every functionality test")) {
			t.Errorf("a suite that does not run the function must be refused with its reason: %+v", c)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "IMPORT.md"))
	for _, s := range []string{"py-117-cweval-0", "no: the unsafe code passes", "no test module"} {
		if !bytes.Contains(md, []byte(s)) {
			t.Errorf("IMPORT.md lacks %q", s)
		}
	}
}

// checkCWEvalScores: on the imported tasks the reference
// fix is solved and the unchanged code earns nothing; no verdict-forging
// probe (pytest's included) earns more or passes more security tests than
// an inert edit of the unsafe code; degenerate repairs are never solved and
// stay under a tenth of the reference. They are not held to 0: CWEval's
// security cases expect a refusal (None, ""), so a function that refuses
// everything passes them, and the rubric's secure-but-broken tier pays
// 0.2 × the functionality tests a refusal happens to pass (delete-body on
// py-022-cweval-0: 0.2 × 1/3).
func checkCWEvalScores(t *testing.T, e *Env, tasks []*taskset.Task) {
	// The forging families are generic (the embedded tasks hold them to
	// account): here once per language (Python: per mode), on the pytest
	// runner; C, C++, Go and JavaScript on the launcher, with their own
	// families.
	forge := map[string]bool{}
	seen := map[string]bool{}
	for _, task := range tasks {
		key := task.Language
		if task.Language == taskset.Python {
			key += task.Mode
		}
		if !seen[key] {
			seen[key], forge[task.ID] = true, true
		}
	}
	// Each task's runs wait mostly on sandboxes and interpreters
	// starting: the tasks run side by side.
	for _, task := range tasks {
		t.Run(task.ID, func(t *testing.T) {
			t.Parallel()
			checkCWEvalTask(t, e, task, forge[task.ID])
		})
	}
}

func checkCWEvalTask(t *testing.T, e *Env, task *taskset.Task, forge bool) {
	ex := exampleFor(t, e, task.ID)
	if p := ex.Prompt[len(ex.Prompt)-1].Content; !strings.Contains(p, "behavioural tests; run_tests runs them") || strings.Contains(p, "tests/visible") {
		t.Errorf("%s: the prompt should say the visible tests run but are not shown:\n%s", task.ID, p)
	}
	ref := score(t, e, ex, refAnswer(task), "")
	if !ref.Solved || ref.Total < 0.99 {
		t.Errorf("%s: reference fix %v %v", task.ID, ref.Components, ref.Parsed)
	}
	if orig := score(t, e, ex, wholeFileAnswer(task, Files{}), ""); orig.Total != 0 || orig.Solved {
		t.Errorf("%s: the unchanged code earns %.3f", task.ID, orig.Total)
	}
	if forge {
		checkForgingEarnsNothing(t, e, ex, task)
	}
	if task.RunsBinary() && task.Mode == taskset.ModeGenerate {
		// A generation task's code is a stub: its degenerate rewrites
		// are the stub's, held to account on the Python tasks.
		return
	}
	for _, p := range degenerateProbes {
		files := p.fn(task)
		if files == nil {
			// C has no exceptions to catch, and no task run as a
			// program shows its tests' inputs to hard-code.
			if !task.RunsBinary() {
				t.Errorf("%s: degenerate probe %s does not apply", task.ID, p.name)
			}
			continue
		}
		s := score(t, e, ex, wholeFileAnswer(task, files), "")
		t.Logf("%s: %s earns %.3f (functionality %v/%v, security %v/%v)", task.ID, p.name, s.Total,
			s.Parsed["visible_passed"], s.Parsed["visible_total"], s.Parsed["hidden_passed"], s.Parsed["hidden_total"])
		if s.Solved || s.Total >= 0.1*ref.Total {
			t.Errorf("%s: degenerate probe %s earns %.3f (solved %v), a tenth of the reference is %.3f", task.ID, p.name, s.Total, s.Solved, 0.1*ref.Total)
		}
	}
}

// checkCWEvalRunTests: in an episode the run_tests tool runs the
// functionality-marked tests on the model's candidate and reports them.
func checkCWEvalRunTests(t *testing.T, e *Env, tasks []*taskset.Task) {
	task := tasks[0]
	ep, err := e.Start(context.Background(), exampleFor(t, e, task.ID))
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := ep.Step(ctx, env.Message{Role: env.RoleAssistant, ToolCalls: []env.ToolCall{{ID: "1", Name: FnRunTests, Arguments: `{}`}}})
	if err != nil || len(res.Messages) != 1 {
		t.Fatalf("%v %+v", err, res)
	}
	var out struct {
		Passed, Total int
		OK            bool
		Output        string
	}
	if err := json.Unmarshal([]byte(res.Messages[0].Content), &out); err != nil {
		t.Fatal(err)
	}
	if out.Passed != 3 || out.Total != 3 || !out.OK {
		t.Errorf("run_tests on the original: %+v, want the 3 functionality tests passing", out)
	}
	if strings.Contains(out.Output, "secret.txt") {
		t.Errorf("run_tests output shows a security case:\n%s", out.Output)
	}
}

// checkForgingEarnsNothing: no verdict-forging probe earns more or passes
// more security tests than an inert edit of the task's code.
func checkForgingEarnsNothing(t *testing.T, e *Env, ex env.Example, task *taskset.Task) {
	control := score(t, e, ex, wholeFileAnswer(task, inertControl(task)), "")
	for _, p := range forgingProbes {
		files := p.fn(task)
		if files == nil {
			continue
		}
		s := score(t, e, ex, wholeFileAnswer(task, files), "")
		if s.Solved || s.Total > control.Total+1e-9 {
			t.Errorf("%s: forging probe %s earns %.3f (solved %v), the inert edit %.3f", task.ID, p.name, s.Total, s.Solved, control.Total)
		}
		if toFloat(s.Parsed["hidden_passed"]) > toFloat(control.Parsed["hidden_passed"]) {
			t.Errorf("%s: forging probe %s passes %v security tests, the inert edit %v", task.ID, p.name, s.Parsed["hidden_passed"], control.Parsed["hidden_passed"])
		}
	}
}
