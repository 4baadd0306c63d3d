package sft

import (
	"testing"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
)

func result(idx, rollout int, user string, reward float64, solved bool, answer string) *artifact.Result {
	s := solved
	return &artifact.Result{
		Index: idx, Rollout: rollout, ExampleID: user, Reward: reward, Solved: &s, RunID: "r1",
		Prompt:     []env.Message{{Role: env.RoleSystem, Content: "sys"}, {Role: env.RoleUser, Content: user}},
		Completion: []env.Message{{Role: env.RoleAssistant, Content: answer, Reasoning: "secret thoughts"}},
	}
}

func TestSelect(t *testing.T) {
	tool := result(3, 0, "q3", 1.5, true, "")
	tool.Completion = []env.Message{
		{Role: env.RoleAssistant, ToolCalls: []env.ToolCall{{ID: "c1", Name: "run_opa", Arguments: `{"path":"a.yaml"}`}}},
		{Role: env.RoleTool, ToolCallID: "c1", Name: "run_opa", Content: "[]"},
		{Role: env.RoleAssistant, Content: `{"violations": []}`},
	}
	failed := result(4, 0, "q4", 0, false, "x")
	failed.Error = "model call: 500"
	cands := []Candidate{
		{Result: result(1, 0, "q1", 1.2, true, "a")},
		{Result: result(1, 1, "q1", 1.8, true, "b")},
		{Result: result(1, 2, "q1", 1.8, true, "c")},
		{Result: result(2, 0, "q2", 0.1, false, "d")},
		{Result: result(2, 1, "Q2 ", 1.1, false, "e")}, // same prompt after normalisation
		{Result: tool},
		{Result: failed},
		{Result: result(5, 0, "q5", 2, true, "  ")},
	}
	var st Stats
	rows := Select(cands, Options{MinReward: 1, BestOfK: 2}, &st)
	if st.Read != 8 || st.Errors != 1 || st.BelowReward != 1 || st.NoAnswer != 1 || st.BeyondK != 1 || st.Kept != 4 {
		t.Fatalf("stats %+v", st)
	}
	// Best of 2 for q1: the two 1.8s, earlier rollout first.
	var q1 []int
	for _, r := range rows {
		if r.Provenance.ExampleID == "q1" {
			q1 = append(q1, r.Provenance.Rollout)
		}
		for _, m := range r.Messages {
			if m.Role == "assistant" && m.Content == "secret thoughts" {
				t.Fatal("reasoning exported")
			}
		}
	}
	if len(q1) != 2 || q1[0] != 1 || q1[1] != 2 {
		t.Fatalf("best-of-2 for q1 kept rollouts %v", q1)
	}
	var toolRow *Row
	for i := range rows {
		if rows[i].Provenance.ExampleID == "q3" {
			toolRow = &rows[i]
		}
	}
	if toolRow == nil || len(toolRow.Messages) != 5 || toolRow.Messages[2].ToolCalls[0].Type != "function" || toolRow.Messages[2].ToolCalls[0].Function.Name != "run_opa" || toolRow.Messages[3].ToolCallID != "c1" {
		t.Fatalf("tool conversation %+v", toolRow)
	}

	st = Stats{}
	if rows := Select(cands, Options{SolvedOnly: true}, &st); st.Unsolved != 2 || len(rows) != 4 {
		t.Fatalf("solved-only: %d rows, %+v", len(rows), st)
	}

	evalKeys := map[string]bool{PromptKey([]env.Message{{Role: env.RoleUser, Content: "q2"}}): true}
	kept, over := Overlapping(rows, evalKeys)
	if len(over) != 1 || over[0].Provenance.ExampleID != "Q2 " || len(kept) != 3 {
		t.Fatalf("overlap: kept %d, overlapping %+v", len(kept), over)
	}
}
