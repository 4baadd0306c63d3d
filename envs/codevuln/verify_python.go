package codevuln

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/svbench/svbench/envs/codevuln/pyrunner"
	"github.com/svbench/svbench/envs/codevuln/taskset"
	"github.com/svbench/svbench/verify/sandbox"
)

var (
	pyTestDef     = regexp.MustCompile(`(?m)^\s+def (test\w*)\s*\(`)
	pyVerdictLine = regexp.MustCompile(`(?m)^SVBENCH-VERDICT (\{.*\})$`)
)

// pyVerdict is what the trusted runner reports per test module.
type pyVerdict struct {
	Passed []string `json:"passed"`
	Failed []string `json:"failed"`
	Ran    int      `json:"ran"`
	Error  string   `json:"error"`
}

// runPython runs a suite's unittest modules in the trusted runner (the
// tests' process, which never imports the candidate) and the candidate's
// modules in a nested sandbox that sees neither the tests nor the runner.
// The verdict is the runner's stdout, which the candidate has no descriptor
// for; what the candidate prints goes to stderr, shown as test output only.
//
// With sel the suite is the tests of the pytest modules carrying sel.Mark,
// and exactly sel.Tests of them must run and pass (sel.Tests 0 counts them:
// only an importer's check of a reference, never a loaded task, has 0).
//
// With prog the candidate is a program the test module runs (see
// runCompiled): each binary is placed in the candidate's directory and
// reached as compiled/<name> beside the test module, a launcher that runs it
// in the same nested sandbox; scripts are reached through a launcher named
// after their interpreter (node), first on the runner's PATH.
func (v *Verifier) runPython(ctx context.Context, tests map[string][]byte, files Files, sel *taskset.PytestSuite, prog *program) TestRun {
	if v.py == nil {
		return TestRun{Output: v.pyErr.Error()}
	}
	var mods []string
	defined := map[string]map[string]bool{}
	expected := 0
	for name, b := range tests {
		// A pytest suite's files are named in the task; a benchmark's own
		// names (cwe_022_0_c_test.py) are kept.
		if (sel != nil || strings.HasPrefix(path.Base(name), "test_")) && strings.HasSuffix(name, ".py") && !strings.Contains(name, "/") {
			m := strings.TrimSuffix(name, ".py")
			mods = append(mods, m)
			defined[m] = map[string]bool{}
			for _, d := range pyTestDef.FindAllSubmatch(b, -1) {
				defined[m][string(d[1])] = true
			}
			expected += len(defined[m])
		}
	}
	slices.Sort(mods)
	var pytestSpec map[string]any
	if sel != nil {
		files := make([]string, len(mods))
		for i, m := range mods {
			files[i] = m + ".py"
		}
		pytestSpec = map[string]any{"files": files, "mark": sel.Mark}
		expected = sel.Tests
	}
	if len(mods) == 0 || expected == 0 && sel == nil {
		return TestRun{Output: "task has no test_*.py module in this suite"}
	}
	candMods := []string{}
	work := path.Join(sandbox.ScratchMount, "work")
	cand := path.Join(sandbox.ScratchMount, "cand")
	lay := v.layoutProgram(prog, files, cand, work)
	if prog != nil {
		files = lay.cand
	}
	for name := range files {
		if strings.HasSuffix(name, ".py") && !strings.Contains(name, "/") {
			candMods = append(candMods, strings.TrimSuffix(name, ".py"))
		}
	}
	slices.Sort(candMods)
	dir, cleanup, err := v.sb.NewScratch()
	if err != nil {
		return TestRun{Output: err.Error()}
	}
	defer cleanup()
	trusted := map[string][]byte{}
	ents, _ := pyrunner.FS.ReadDir(".")
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".py") {
			continue
		}
		b, err := pyrunner.FS.ReadFile(e.Name())
		if err != nil {
			return TestRun{Output: err.Error()}
		}
		trusted[e.Name()] = b
	}
	for name, b := range lay.sources {
		trusted[name] = b
	}
	for name, b := range tests {
		trusted[name] = b
	}
	for _, w := range []struct {
		sub   string
		files map[string][]byte
	}{{"trusted", trusted}, {"cand", files}, {"work", nil}} {
		if err := os.MkdirAll(filepath.Join(dir, w.sub), 0o755); err != nil {
			return TestRun{Output: err.Error()}
		}
		if err := writeTree(filepath.Join(dir, w.sub), w.files); err != nil {
			return TestRun{Output: err.Error()}
		}
	}
	if err := writeExecutables(dir, lay.execs); err != nil {
		return TestRun{Output: err.Error()}
	}
	cfg, _ := json.Marshal(map[string]any{
		"tests": mods, "modules": candMods, "cand": cand, "work": work,
		"timeout": v.limits.Wall.Seconds(), "pytest": pytestSpec,
	})
	res, err := v.sb.Run(ctx, sandbox.Spec{
		Argv:          []string{v.py.Exe, "-I", "-B", path.Join(sandbox.ScratchMount, "trusted", "svbench_runner.py"), string(cfg)},
		Dir:           dir,
		Subdir:        "work",
		Env:           []string{lay.path, "LANG=C.UTF-8", "HOME=/tmp", "TMPDIR=" + work, "PYTHONDONTWRITEBYTECODE=1", "PYTHONHASHSEED=0"},
		Limits:        v.limits,
		ReadOnlyBinds: v.py.Binds(),
		// The trusted runner starts the candidate's own sandbox with
		// bwrap, which needs namespaces and mounts.
		Nesting: true,
	})
	if err != nil {
		return TestRun{Total: expected, Output: err.Error()}
	}
	out := TestRun{Total: expected, Killed: res.Killed, Output: string(res.Stderr)}
	lines := pyVerdictLine.FindAllSubmatch(res.Stdout, -1)
	if len(lines) != 1 {
		out.Output += fmt.Sprintf("\n(no verdict from the test runner: %d verdict lines, exit %d)", len(lines), res.ExitCode)
		return out
	}
	var verdict map[string]pyVerdict
	if err := json.Unmarshal(lines[0][1], &verdict); err != nil {
		out.Output += "\n(unreadable verdict: " + err.Error() + ")"
		return out
	}
	clean := res.ExitCode == 0 && res.Killed == ""
	if sel != nil {
		pv, ok := verdict["pytest"]
		if expected == 0 {
			// Counting (an import learning its suites' sizes from the
			// reference): every test that ran is the suite.
			expected, out.Total = pv.Ran, pv.Ran
		}
		if !ok || pv.Error != "" || len(pv.Failed) > 0 || pv.Ran != expected {
			clean = false
		}
		if ok && pv.Ran != expected {
			out.Output += fmt.Sprintf("\n(%d tests marked %s ran; the task has %d)", pv.Ran, sel.Mark, expected)
		}
		out.Passed = min(len(pv.Passed), out.Total)
		out.OK = clean && out.Passed == out.Total
		return out
	}
	for _, m := range mods {
		mv, ok := verdict[m]
		if !ok || mv.Error != "" || len(mv.Failed) > 0 || mv.Ran != len(defined[m]) {
			clean = false
		}
		for _, name := range mv.Passed {
			if defined[m][name] {
				out.Passed++
			}
		}
	}
	out.Passed = min(out.Passed, out.Total)
	out.OK = clean && out.Passed == out.Total
	return out
}
