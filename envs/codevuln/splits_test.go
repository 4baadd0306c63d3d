package codevuln

import (
	"context"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/codevuln/taskset"
)

// splitTasks is every tested task each split serves, in the split's order.
func splitTasks(t *testing.T, e *Env) map[string][]*taskset.Task {
	t.Helper()
	out := map[string][]*taskset.Task{}
	for _, split := range env.SplitNames() {
		ds, err := e.LoadSplit(context.Background(), split)
		if err != nil {
			t.Fatalf("split %s: %v", split, err)
		}
		for _, ex := range ds.Examples {
			task, err := e.taskOf(ex)
			if err != nil {
				t.Fatalf("split %s: %v", split, err)
			}
			if task.Tested() {
				out[split] = append(out[split], task)
			}
		}
	}
	return out
}

// family is the generated family of a task id ("py-089-gen-sqli" for
// py-089-gen-sqli-3f2a1c), or the id itself for a hand-written task.
func family(id string) string {
	i := strings.Index(id, "-gen-")
	if i < 0 {
		return id
	}
	if j := strings.LastIndex(id, "-"); j > i+len("-gen-") {
		return id[:j]
	}
	return id
}

// sample keeps, in order, the first per tasks of each generated family
// and the hand-written tasks that have near misses (the others' reference
// fixes are scored by TestReferenceFixSolvesAndNoopScoresZero).
func sample(tasks []*taskset.Task, per int) []*taskset.Task {
	seen := map[string]int{}
	var out []*taskset.Task
	for _, task := range tasks {
		f := family(task.ID)
		if f == task.ID && len(task.NearMiss) == 0 || f != task.ID && seen[f] >= per {
			continue
		}
		seen[f]++
		out = append(out, task)
	}
	return out
}

func TestFamily(t *testing.T) {
	for id, want := range map[string]string{
		"py-089-gen-sqli-3f2a1c":   "py-089-gen-sqli",
		"go-338-gen-gorand-00aa11": "go-338-gen-gorand",
		"py-089-user-lookup":       "py-089-user-lookup",
		"py-089-gen-":              "py-089-gen-",
	} {
		if got := family(id); got != want {
			t.Errorf("family(%q) = %q, want %q", id, got, want)
		}
	}
}

// TestEverySplitSolvedByItsReference plays the reference fix of every task
// each split serves (train and dev are generated from the mutation
// templates, test is the hand-written corpus) through Score: a trainer on
// the train split would punish the correct fix wherever it is not solved.
// An inert edit of the vulnerable source must fail the hidden tests (so it
// cannot be solved), and every near miss of a task (a plausible partial fix
// that keeps the weakness) must score below the reference and unsolved.
//
// Every task of every split takes about 30 minutes on two cores, so by
// default the test takes a deterministic sample: the first task of each
// generated family per split (the families share templates, so a
// template's fault shows on its first instance) and the hand-written tasks
// with near misses. SVBENCH_E3_ALL_SPLITS=1 runs every task of every
// split; near misses are played on the sample either way.
func TestEverySplitSolvedByItsReference(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every split's tasks in the sandbox")
	}
	testEnv(t) // skips where there is no sandbox
	// Not the package's shortened test_timeout (15 s), and twice the served
	// default (30 s): the question is whether a task is solvable, and a
	// work factor at OWASP's bound is slow by design. At load 40 on two
	// cores one PBKDF2 at 600,000 iterations takes 3-5 s and py-327's
	// reference fix was killed by the wall clock at 30 s with every test
	// passed, which says nothing of the fix.
	e, err := New(context.Background(), env.Options{Params: map[string]string{ParamTestTimeout: "60"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if err := e.Ready(); err != nil {
		t.Fatal(err)
	}
	all := os.Getenv("SVBENCH_E3_ALL_SPLITS") == "1"
	splits := splitTasks(t, e)
	type job struct {
		split     string
		task      *taskset.Task
		nearMiss  bool
		reference float64
		solved    bool
		ran       bool
	}
	var jobs []*job
	for _, split := range env.SplitNames() {
		sampled := map[string]bool{}
		for _, task := range sample(splits[split], 1) {
			sampled[task.ID] = true
		}
		for _, task := range splits[split] {
			if all || sampled[task.ID] {
				jobs = append(jobs, &job{split: split, task: task, nearMiss: sampled[task.ID]})
			}
		}
	}
	start := time.Now()
	sem := make(chan struct{}, max(runtime.NumCPU(), 2))
	t.Run("tasks", func(t *testing.T) {
		for _, j := range jobs {
			t.Run(j.split+"/"+j.task.ID, func(t *testing.T) {
				t.Parallel()
				sem <- struct{}{}
				defer func() { <-sem }()
				ex := exampleFor(t, e, j.task.ID)
				ref := score(t, e, ex, refAnswer(j.task), "")
				j.reference, j.solved, j.ran = ref.Total, ref.Solved, true
				if !ref.Solved {
					t.Errorf("reference fix not solved: reward %.3f components %v parsed %v", ref.Total, ref.Components, ref.Parsed)
				}
				if r := e.Verifier().RunSuite(context.Background(), j.task, SuiteHidden, inertControl(j.task)); r.OK {
					t.Errorf("an inert edit of the vulnerable source passes every hidden test (%d/%d):\n%s", r.Passed, r.Total, r.Output)
				}
				if !j.nearMiss {
					return
				}
				for _, variant := range slices.Sorted(maps.Keys(j.task.NearMiss)) {
					s := score(t, e, ex, wholeFileAnswer(j.task, Files(j.task.NearMiss[variant])), "")
					t.Logf("near miss %s: reward %.3f (hidden %v/%v)", variant, s.Total, s.Parsed["hidden_passed"], s.Parsed["hidden_total"])
					if s.Solved || s.Total >= ref.Total {
						t.Errorf("near miss %s keeps the weakness yet earns %.3f (solved %v), reference %.3f: %v", variant, s.Total, s.Solved, ref.Total, s.Components)
					}
				}
			})
		}
	})
	type tally struct {
		solved, n int
		sum       float64
	}
	per := map[string]*tally{}
	for _, j := range jobs {
		if !j.ran {
			continue // filtered out by -run
		}
		if per[j.split] == nil {
			per[j.split] = &tally{}
		}
		c := per[j.split]
		c.n++
		c.sum += j.reference
		if j.solved {
			c.solved++
		}
	}
	for _, split := range slices.Sorted(maps.Keys(per)) {
		c := per[split]
		t.Logf("%s: reference solved %d/%d, mean reward %.3f", split, c.solved, c.n, c.sum/float64(c.n))
	}
	t.Logf("%d tasks in %s (every task: %v)", len(jobs), time.Since(start).Round(time.Second), all)
}
