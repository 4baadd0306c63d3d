package codevuln

import (
	"context"
	"runtime"
	"testing"

	"github.com/svbench/svbench/envs/codevuln/taskset"
)

// inertEdits are changes to a task's vulnerable source that keep its
// behaviour: scored through the engine they must fail the hidden tests
// exactly as the unmodified source does. A hidden test that the vulnerable
// code passes once it is edited at all depended on state it shared with the
// code under test (py-330 seeded `random` in the runner, which no longer
// reaches the candidate's interpreter).
func inertEdits(t *taskset.Task) map[string]Files {
	f := t.Files[0]
	src := string(t.Src[f])
	if t.Language == taskset.Go {
		// Each Go variant is a compile: one inert edit is enough there.
		return map[string]Files{
			"unmodified":     Files(t.Src),
			"inert-function": {f: []byte(src + "\nfunc svbenchInert() {}\n")},
		}
	}
	return map[string]Files{
		"unmodified":      Files(t.Src),
		"inert-function":  {f: []byte(src + "\n\ndef _svbench_inert():\n    return None\n")},
		"inert-statement": {f: []byte(src + "\n_svbench_inert = None\n")},
	}
}

// TestEngineContract proves the task contract through the engine that
// scores models (the sandbox and, for Python, the data-only bridge), not
// through the plain toolchain the corpus tests use: on every tested task
// the vulnerable source, unmodified or inertly edited, fails the hidden
// tests, and the reference fix passes both suites.
func TestEngineContract(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every task's suites in the sandbox")
	}
	e := testEnv(t)
	sem := make(chan struct{}, max(runtime.NumCPU(), 2))
	for _, task := range e.Tasks() {
		if !task.Tested() {
			continue
		}
		t.Run(task.ID, func(t *testing.T) {
			t.Parallel()
			sem <- struct{}{}
			defer func() { <-sem }()
			ctx := context.Background()
			v := e.Verifier()
			for name, files := range inertEdits(task) {
				r := v.RunSuite(ctx, task, SuiteHidden, files)
				if r.Killed != "" {
					t.Logf("%s: killed by %s (a loaded machine); a kill is still a failure", name, r.Killed)
				}
				if r.OK {
					t.Errorf("%s vulnerable source passes every hidden test (%d/%d):\n%s", name, r.Passed, r.Total, r.Output)
				}
			}
			fixed := Files(task.Fixed())
			for _, suite := range []Suite{SuiteVisible, SuiteHidden} {
				if r := v.RunSuite(ctx, task, suite, fixed); !r.OK {
					t.Errorf("reference fix fails the %s tests (%d/%d, killed %q):\n%s", suite, r.Passed, r.Total, r.Killed, r.Output)
				}
			}
			if r := v.RunSuite(ctx, task, SuiteVisible, Files(task.Src)); !r.OK {
				t.Errorf("vulnerable source fails the visible tests (%d/%d):\n%s", r.Passed, r.Total, r.Output)
			}
		})
	}
}
