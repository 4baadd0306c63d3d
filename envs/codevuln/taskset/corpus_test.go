package taskset_test

import (
	"testing"

	"github.com/svbench/svbench/envs/codevuln/tasks"
	"github.com/svbench/svbench/envs/codevuln/taskset"
)

// TestCorpusCoverage holds the embedded corpus to the coverage bar.
func TestCorpusCoverage(t *testing.T) {
	all, err := taskset.Load(tasks.FS())
	if err != nil {
		t.Fatal(err)
	}
	langs := map[string]int{}
	cwes := map[string]int{}
	diff := map[string]int{}
	for _, task := range all {
		if !task.Tested() {
			t.Errorf("%s: embedded corpus tasks must be tested, not %s", task.ID, task.Mode)
		}
		langs[task.Language]++
		cwes[task.CWE]++
		diff[task.Difficulty]++
	}
	if len(all) < 40 {
		t.Errorf("%d tasks, want at least 40", len(all))
	}
	for _, lang := range []string{taskset.Python, taskset.Go} {
		if langs[lang] < 12 {
			t.Errorf("%d %s tasks, want at least 12", langs[lang], lang)
		}
	}
	if len(cwes) < 12 {
		t.Errorf("%d distinct CWEs, want at least 12: %v", len(cwes), cwes)
	}
	for _, d := range taskset.Difficulties {
		if diff[d] == 0 {
			t.Errorf("no %s task", d)
		}
	}
	t.Logf("%d tasks: %v; %d CWEs; difficulties %v", len(all), langs, len(cwes), diff)
}
