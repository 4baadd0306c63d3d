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

// TestReportSecureGenerationBlock: generation rows are reported apart, with
// CWEval's func, sec and func-sec rates and their @k over rollouts.
func TestReportSecureGenerationBlock(t *testing.T) {
	row := func(index int, fn, sec bool) artifact.Result {
		pass := func(ok bool) float64 {
			if ok {
				return 3
			}
			return 1
		}
		solved := fn && sec
		return artifact.Result{Index: index, Reward: map[bool]float64{true: 1}[solved], Solved: &solved, Parsed: map[string]any{
			"mode": "generate", "applied": true, "cwe": "CWE-22", "language": "python",
			"visible_passed": pass(fn), "visible_total": 3.0, "hidden_passed": pass(sec), "hidden_total": 3.0,
		}}
	}
	rows := []artifact.Result{row(0, true, true), row(0, true, false), row(1, false, false), row(1, false, true)}
	// One repair row, which the generation rows must not join.
	solved := true
	rows = append(rows, artifact.Result{Index: 2, Reward: 1, Solved: &solved, Parsed: map[string]any{
		"mode": "tested", "applied": true, "cwe": "CWE-89", "language": "python",
		"visible_passed": 2.0, "visible_total": 2.0, "hidden_passed": 1.0, "hidden_total": 1.0}})
	rep, err := BuildReport(rows, nil, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gb := rep.Summary["generate"].(GenerateBlock)
	tb := rep.Summary["tested"].(ReportBlock)
	if tb.Rows != 1 || gb.Rows != 4 || gb.Examples != 2 || gb.Rollouts != 2 {
		t.Fatalf("tested %d rows, generation %+v", tb.Rows, gb)
	}
	want := map[string]float64{
		"func@1": 0.5, "sec@1": 0.5, "func-sec@1": 0.25,
		"func@2": 0.5, "sec@2": 1, "func-sec@2": 0.5,
	}
	for k, v := range want {
		if got, ok := gb.AtK[k]; !ok || got != v {
			t.Errorf("%s = %v, want %v", k, got, v)
		}
	}
	if gb.Func != 0.5 || gb.Sec != 0.5 || gb.FuncSec != 0.25 || gb.MeanReward != 0.25 {
		t.Errorf("rates %+v", gb)
	}
	for _, s := range []string{"## Secure generation tasks", "| func-sec@2 | 0.5000 |", "func / sec / func-sec (rows) | 50.0% / 50.0% / 25.0%"} {
		if !strings.Contains(rep.Markdown, s) {
			t.Errorf("markdown lacks %q:\n%s", s, rep.Markdown)
		}
	}
}
