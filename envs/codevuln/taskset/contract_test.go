package taskset_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/svbench/svbench/envs/codevuln/tasks"
	"github.com/svbench/svbench/envs/codevuln/taskset"
	"github.com/svbench/svbench/envs/codevuln/taskset/internal/trustedrun"
)

// TestCorpusContract proves the contract for every embedded task: the
// vulnerable original passes its visible tests and fails its hidden tests,
// and the reference fix passes both.
func TestCorpusContract(t *testing.T) {
	all, err := taskset.Load(tasks.FS())
	if err != nil {
		t.Fatal(err)
	}
	runner := trustedrun.New(runtime.NumCPU())
	for _, task := range all {
		t.Run(task.ID, func(t *testing.T) {
			t.Parallel()
			if msg := trustedrun.Toolchain(task.Language); msg != "" {
				t.Skip(msg)
			}
			if err := runner.Contract(context.Background(), task); err != nil {
				t.Fatal(err)
			}
		})
	}
}
