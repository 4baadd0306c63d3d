package ingest_test

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/netlogs"
	"github.com/svbench/svbench/ingest"
)

// TestVerlRolloutDump: a line of verl's rollout_data_dir/{step}.jsonl
// (input, output, gts, score, step, and the reward function's
// reward_extra_info columns) is read as a trainer row and re-scored; with
// svbench's own rubric the recorded score and components reproduce.
func TestVerlRolloutDump(t *testing.T) {
	e := netlogs.New()
	ds, err := e.Load(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	ex := ds.Examples[0]
	var gold string
	_ = json.Unmarshal(ex.Answer, &gold)
	output := `{"label": "` + gold + `", "confidence": 0.8}`
	sc, err := e.Score(context.Background(), ex, env.OutsideRollout(env.CompletionText(output).Messages), "")
	if err != nil {
		t.Fatal(err)
	}
	line := map[string]any{"input": "system\n" + ex.Prompt[0].Content + "\nuser\n" + ex.Prompt[len(ex.Prompt)-1].Content + "\nassistant\n",
		"output": output, "gts": gold, "score": sc.Total, "step": 7, "svbench_error": 0.0}
	for k, v := range sc.Components {
		line[k] = v
	}
	raw, _ := json.Marshal(line)
	if !ingest.IsTrainerRow(mustMap(t, raw)) {
		t.Fatal("a verl dump line is not recognised as a trainer row")
	}
	row, err := ingest.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(row.Completion) != 1 || row.Completion[0].Content != output || row.Trainer.Step == nil || *row.Trainer.Step != 7 ||
		row.Trainer.Reward == nil || *row.Trainer.Reward != sc.Total || len(row.Trainer.Components) != len(sc.Components) || row.Trainer.Metrics["svbench_error"] != 0 {
		t.Fatalf("decoded %+v", row)
	}
	res := ingest.Rescore(context.Background(), e, "default", row, 0)
	if res.ScoreError != "" || math.Abs(res.Reward-sc.Total) > 1e-12 {
		t.Fatalf("re-score %v (%s), recorded %v", res.Reward, res.ScoreError, sc.Total)
	}
	bad, _ := json.Marshal(map[string]any{"input": 3, "output": "x", "gts": "Benign", "score": 0, "step": 1})
	if _, err := ingest.Decode(bad); err == nil {
		t.Fatal("a dump line whose input is not text decoded")
	}
}

func mustMap(t *testing.T, raw []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
