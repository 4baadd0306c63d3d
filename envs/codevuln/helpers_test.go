package codevuln

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/codevuln/taskset"
	"github.com/svbench/svbench/verify/sandbox"
)

var (
	envOnce sync.Once
	envVal  *Env
	envErr  error
)

// testEnv is one environment shared by the package's tests: the verifier's
// memo then spares re-running identical candidates across tests.
func testEnv(t testing.TB) *Env {
	t.Helper()
	envOnce.Do(func() {
		envVal, envErr = New(context.Background(), env.Options{Params: map[string]string{ParamTestTimeout: "15"}})
	})
	if envErr != nil {
		t.Fatal(envErr)
	}
	if err := envVal.Ready(); errors.Is(err, sandbox.ErrNoIsolation) {
		t.Skipf("no sandbox on this host: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	return envVal
}

func exampleFor(t testing.TB, e *Env, id string) env.Example {
	t.Helper()
	ex, err := e.ParseExample([]byte(`{"task_id":"` + id + `"}`))
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

func score(t testing.TB, e *Env, ex env.Example, text, rubric string) env.Score {
	t.Helper()
	s, err := e.Score(context.Background(), ex, &env.Rollout{Completion: []env.Message{{Role: env.RoleAssistant, Content: text}}}, rubric)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func refAnswer(task *taskset.Task) string {
	return answerMsg(ApplyableDiff(Files(task.Src), Files(task.Fixed()), task.Files), true, "Reference fix.").Content
}

// firstTestedTask is the first task of lang with tests; the test skips when
// there is none.
func firstTestedTask(t testing.TB, e *Env, lang string) *taskset.Task {
	t.Helper()
	for _, x := range e.Tasks() {
		if x.Language == lang && x.Tested() {
			return x
		}
	}
	t.Skipf("no tested %s task", lang)
	return nil
}
