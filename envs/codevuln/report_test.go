package codevuln

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/report"
)

// TestReportFromScoredRows scores real rollouts (reference fix, no-op, a
// rejected answer) and builds the report from them as artifacts would hold
// them (JSON round trip).
func TestReportFromScoredRows(t *testing.T) {
	e := testEnv(t)
	var rows []artifact.Result
	add := func(id, text string) {
		ex := exampleFor(t, e, id)
		s, err := e.Score(context.Background(), ex, &env.Rollout{Completion: []env.Message{{Role: env.RoleAssistant, Content: text}}}, "")
		if err != nil {
			t.Fatal(err)
		}
		solved := s.Solved
		r := artifact.Result{Index: len(rows), ExampleID: id, Meta: ex.Meta, Reward: s.Total, Components: s.Components, Parsed: s.Parsed, Solved: &solved}
		b, _ := json.Marshal(r)
		var back artifact.Result
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, back)
	}
	task := e.task("py-089-user-lookup")
	if task == nil {
		t.Skip("task missing")
	}
	add(task.ID, refAnswer(task))
	add(task.ID, answerMsg("", false, "").Content)
	add(task.ID, "no patch here")
	rep, err := report.Build(ID, rows, nil, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tb := rep.Summary["tested"].(ReportBlock)
	if tb.Rows != 3 || tb.PatchSuccess < 0.33 || tb.PatchSuccess > 0.34 || tb.Rejected != 1 || tb.NoOp != 1 || tb.SignatureKept != 1 {
		t.Errorf("tested block = %+v", tb)
	}
	if rep.Key[0].Name != "patch_success_rate" || !strings.Contains(rep.Markdown, "By CWE") || !strings.Contains(rep.Markdown, "CWE-89") {
		t.Errorf("key %v / markdown:\n%s", rep.Key, rep.Markdown)
	}
	if modes := rep.Summary["sandbox_modes"].(map[string]int); modes[string(e.v.Mode())] != 3 {
		t.Errorf("sandbox modes %v", modes)
	}
}
