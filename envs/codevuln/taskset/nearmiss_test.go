package taskset_test

import (
	"context"
	"maps"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/svbench/svbench/envs/codevuln/tasks"
	"github.com/svbench/svbench/envs/codevuln/taskset"
	"github.com/svbench/svbench/envs/codevuln/taskset/internal/trustedrun"
)

// nearMissRequired lists the tasks whose near-miss corpus must not shrink
// to nothing: each had a partial fix that earned full credit before its
// hidden tests pinned the property (issues 33 and 41).
var nearMissRequired = []string{
	"go-330-session-ids", "go-338-invite-codes", "go-918-webhook-test",
	"py-327-password-hash", "py-330-reset-token", "py-918-avatar-fetch",
	// issue 41: the tests measured the call, the imports or payloads
	// instead of the property of what the code stores, returns or runs.
	"go-078-grep-search", "go-327-api-token-store", "py-078-line-count",
}

// TestNearMissContract is mutation testing of the hidden tests: every
// near-miss variant of a task (a plausible partial fix that keeps the
// weakness) passes the visible tests, so it is a working program a grader
// could be fooled by, and fails the hidden tests. TestCorpusContract
// proves the other half, that the reference fix passes them.
func TestNearMissContract(t *testing.T) {
	all, err := taskset.Load(tasks.FS())
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, task := range all {
		if len(task.NearMiss) > 0 {
			have[task.ID] = true
		}
	}
	for _, id := range nearMissRequired {
		if !have[id] {
			t.Errorf("%s: no nearmiss/ variants", id)
		}
	}
	runner := trustedrun.New(runtime.NumCPU())
	for _, task := range all {
		if len(task.NearMiss) == 0 {
			continue
		}
		t.Run(task.ID, func(t *testing.T) {
			t.Parallel()
			if msg := trustedrun.Toolchain(task.Language); msg != "" {
				t.Skip(msg)
			}
			variants := slices.Sorted(maps.Keys(task.NearMiss))
			type outcome struct {
				res trustedrun.Result
				err error
			}
			visible, hidden := make([]outcome, len(variants)), make([]outcome, len(variants))
			var wg sync.WaitGroup
			for i, v := range variants {
				src := task.NearMissed(v)
				wg.Go(func() {
					res, err := runner.Run(context.Background(), task.Language, src, task.Visible)
					visible[i] = outcome{res, err}
				})
				wg.Go(func() {
					res, err := runner.Run(context.Background(), task.Language, src, task.Hidden)
					hidden[i] = outcome{res, err}
				})
			}
			wg.Wait()
			for i, v := range variants {
				switch {
				case visible[i].err != nil:
					t.Errorf("%s: visible run: %v", v, visible[i].err)
				case !visible[i].res.Passed:
					t.Errorf("%s: fails the visible tests, so it is no near miss:\n%s", v, tailOf(visible[i].res.Output))
				}
				switch {
				case hidden[i].err != nil:
					t.Errorf("%s: hidden run: %v", v, hidden[i].err)
				case hidden[i].res.Passed:
					t.Errorf("%s: keeps the weakness yet passes every hidden test:\n%s", v, tailOf(hidden[i].res.Output))
				}
			}
		})
	}
}

func tailOf(s string) string {
	const n = 2000
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
