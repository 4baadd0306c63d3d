package codevuln

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svbench/svbench/env"
)

// harnessProcesses returns the live processes running the Python test
// harness. Other test binaries (go test runs packages in parallel) share the
// machine and run the same harness, so only those descending from this
// process, or named in also, are counted: a harness that outlived its
// sandbox and was reparented is still caught when it was seen before.
func harnessProcesses(also map[int]bool) map[int]bool {
	parent := map[int]int{}
	isHarness := map[int]bool{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && bytes.Contains(b, []byte("svbench_runner.py")) {
			isHarness[pid] = true
		}
		// stat is "pid (comm) state ppid ...": comm may hold spaces and parentheses.
		if b, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if i := bytes.LastIndexByte(b, ')'); i >= 0 {
				if f := strings.Fields(string(b[i+1:])); len(f) >= 2 {
					parent[pid], _ = strconv.Atoi(f[1])
				}
			}
		}
	}
	self := os.Getpid()
	ours := map[int]bool{}
	for pid := range isHarness {
		if also[pid] {
			ours[pid] = true
			continue
		}
		for p, hops := parent[pid], 0; p > 1 && hops < 64; p, hops = parent[p], hops+1 {
			if p == self {
				ours[pid] = true
				break
			}
		}
	}
	return ours
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
	var started map[int]bool
	for started = harnessProcesses(nil); len(started) == 0; started = harnessProcesses(nil) {
		if time.Now().After(deadline) {
			t.Fatal("the tests never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Score after cancel: %v", err)
	}
	if left := harnessProcesses(started); len(left) != 0 {
		t.Errorf("harness processes %v survived the cancellation", slices.Sorted(maps.Keys(left)))
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
