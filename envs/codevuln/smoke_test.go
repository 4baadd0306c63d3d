package codevuln

import (
	"testing"
)

// TestReferenceFixSolvesAndNoopScoresZero runs every embedded task through
// the sandboxed verifiers twice: the reference fix must be solved with full
// reward, the unchanged original must score 0.
func TestReferenceFixSolvesAndNoopScoresZero(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every task's suites in the sandbox")
	}
	e := testEnv(t)
	for _, task := range e.Tasks() {
		if !task.Tested() {
			continue
		}
		t.Run(task.ID, func(t *testing.T) {
			ex := exampleFor(t, e, task.ID)
			ref := score(t, e, ex, refAnswer(task), "")
			if !ref.Solved || ref.Total < 0.99 {
				t.Errorf("reference fix: reward %.3f solved %v components %v parsed %v", ref.Total, ref.Solved, ref.Components, ref.Parsed)
			}
			noop := score(t, e, ex, answerMsg("", false, "x").Content, "")
			if noop.Solved || noop.Total != 0 || noop.Parsed["no_op"] != true {
				t.Errorf("no-op: reward %.3f solved %v parsed %v", noop.Total, noop.Solved, noop.Parsed)
			}
		})
	}
}
