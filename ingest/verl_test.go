package ingest_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
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

// TestVerlRolloutDir: verl's rollout_data_dir ({step}.jsonl per step) is
// read as one run, steps in numeric order (10 after 9), each row keeping
// its step; report's input resolution sees the directory as a trainer's.
func TestVerlRolloutDir(t *testing.T) {
	e, scored := scoreE1(t, "default", 3)
	dir := t.TempDir()
	write := func(step int, s e1Scored) {
		line := map[string]any{"input": "user\n" + s.ex.Prompt[len(s.ex.Prompt)-1].Content + "\nassistant\n",
			"output": s.output, "gts": json.RawMessage(s.ex.Answer), "score": s.sc.Total, "step": step, "svbench_error": 0.0}
		for k, v := range s.sc.Components {
			line[k] = v
		}
		b, _ := json.Marshal(line)
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(step)+".jsonl"), append(append(b, '\n'), b...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(10, scored[2])
	write(9, scored[1])
	write(1, scored[0])
	// Not a step file: left alone.
	if err := os.WriteFile(filepath.Join(dir, "notes.jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !ingest.IsVerlDir(dir) || ingest.ResultsPath(dir) != dir {
		t.Fatalf("IsVerlDir %v, ResultsPath %q", ingest.IsVerlDir(dir), ingest.ResultsPath(dir))
	}
	if ok, err := ingest.IsTrainerFile(dir); !ok || err != nil {
		t.Fatalf("IsTrainerFile = %v, %v", ok, err)
	}
	run, err := ingest.Load(context.Background(), dir, e, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantSteps := []int64{1, 1, 9, 9, 10, 10}
	if run.Format != ingest.FormatVerl || len(run.Rows) != len(wantSteps) {
		t.Fatalf("format %q, %d rows", run.Format, len(run.Rows))
	}
	for i, r := range run.Rows {
		if r.ScoreError != "" || r.Trainer == nil || r.Trainer.Step == nil || *r.Trainer.Step != wantSteps[i] || run.Lines[i] != i+1 {
			t.Fatalf("row %d: error %q trainer %+v line %d", i, r.ScoreError, r.Trainer, run.Lines[i])
		}
		if a := ingest.Compare(&r); a == nil || !a.Reproduce {
			t.Fatalf("row %d: agreement %+v", i, a)
		}
	}
}
