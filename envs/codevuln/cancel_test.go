package codevuln

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/svbench/svbench/env"
)

// harnessProcesses counts live processes running the Python test harness.
func harnessProcesses() int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && bytes.Contains(b, []byte("svbench_runner.py")) {
			n++
		}
	}
	return n
}

// TestScoreCancellationReleasesEverything cancels a Score while a patch that
// sleeps forever is under test: Score returns the cancellation, no harness
// process survives and no scratch directory is left.
func TestScoreCancellationReleasesEverything(t *testing.T) {
	e := testEnv(t)
	task := e.task("py-089-user-lookup")
	if task == nil {
		t.Skip("task missing")
	}
	var sleeper Files
	for _, p := range probes {
		if p.name == "sleep-until-timeout" {
			sleeper = p.fn(task)
		}
	}
	text := wholeFileAnswer(task, sleeper)
	ex := exampleFor(t, e, task.ID)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := e.Score(ctx, ex, &env.Rollout{Completion: []env.Message{{Role: env.RoleAssistant, Content: text}}}, "")
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for harnessProcesses() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the tests never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Score after cancel: %v", err)
	}
	if n := harnessProcesses(); n != 0 {
		t.Errorf("%d harness processes survived the cancellation", n)
	}
	// The base is shared with other svbench processes (and test
	// binaries): look only for this task's files.
	left, _ := filepath.Glob(filepath.Join(e.sb.ScratchBase(), "run-*", "cand", "accounts.py"))
	if len(left) != 0 {
		t.Errorf("scratch directories left: %v", left)
	}
	// The cancelled result was not memoised: the same answer verifies again.
	s := score(t, e, ex, text, "")
	if s.Parsed["sandbox_kills"] == nil {
		t.Errorf("re-score after cancel did not run the suites: %v", s.Parsed)
	}
}
