package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/netlogs"
)

// formatRow is one E1 rollout and its score, from which each trainer's
// format is written.
type formatRow struct {
	ex     env.Example
	output string
	sc     env.Score
}

func e1Rollouts(t *testing.T, rubric string, n int) []formatRow {
	t.Helper()
	e := netlogs.New()
	ds, err := e.Load(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var out []formatRow
	for i := 0; i < n; i++ {
		ex := ds.Examples[i]
		var gold string
		_ = json.Unmarshal(ex.Answer, &gold)
		if i%3 == 2 {
			gold = "Benign"
		}
		output := fmt.Sprintf(`{"label": %q, "confidence": 0.8}`, gold)
		sc, err := e.Score(context.Background(), ex, env.OutsideRollout(env.CompletionText(output).Messages), rubric)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, formatRow{ex, output, sc})
	}
	return out
}

func writeLines(t *testing.T, path string, rows []map[string]any) {
	t.Helper()
	var b strings.Builder
	for _, r := range rows {
		j, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeTRL writes TRL's output_dir/completions/completions_00002.parquet in
// the column layout GRPOTrainer logs (step, prompt, completion, one double
// per reward function, log_extra columns, advantage; all optional, as
// pandas writes them), with svbench's Python client's function names.
func writeTRL(t *testing.T, outDir string, rows []formatRow) {
	t.Helper()
	comps := slices.Sorted(maps.Keys(rows[0].sc.Components))
	group := parquet.Group{
		"step": parquet.Optional(parquet.Int(64)), "prompt": parquet.Optional(parquet.String()),
		"completion": parquet.Optional(parquet.String()), "example_id": parquet.Optional(parquet.String()),
		"advantage": parquet.Optional(parquet.Leaf(parquet.DoubleType)),
	}
	for _, c := range comps {
		group["svbench_e1_"+c] = parquet.Optional(parquet.Leaf(parquet.DoubleType))
	}
	schema := parquet.NewSchema("schema", group)
	dir := filepath.Join(outDir, "completions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "completions_00002.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewWriter(f, schema)
	for _, r := range rows {
		vals := map[string]any{"step": int64(2), "prompt": "user\n" + r.ex.Prompt[len(r.ex.Prompt)-1].Content + "\nassistant\n",
			"completion": r.output, "example_id": r.ex.ID, "advantage": 0.0}
		for _, c := range comps {
			vals["svbench_e1_"+c] = r.sc.Components[c]
		}
		var row parquet.Row
		for i, p := range schema.Columns() {
			row = append(row, parquet.ValueOf(vals[p[0]]).Level(0, 1, i))
		}
		if _, err := w.WriteRows([]parquet.Row{row}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReportReadsEveryTrainerFormat: `svbench report` reads each trainer's
// output format, re-scores it with the rubric the rows call for, and
// reproduces every recorded reward.
func TestReportReadsEveryTrainerFormat(t *testing.T) {
	const n = 6
	for _, tc := range []struct {
		name       string
		rubric     string // the rubric the rows were scored with
		write      func(t *testing.T, dir string, rows []formatRow) string
		args       []string
		wantFormat string
	}{
		{name: "TRL completions table", rubric: netlogs.RubricDefault, wantFormat: "trl",
			write: func(t *testing.T, dir string, rows []formatRow) string { writeTRL(t, dir, rows); return dir }},
		{name: "NeMo Gym collected rollouts from svbench serve", rubric: netlogs.RubricDefault, wantFormat: "nemo-gym",
			write: func(t *testing.T, dir string, rows []formatRow) string {
				var lines []map[string]any
				for i, r := range rows {
					lines = append(lines, map[string]any{
						"responses_create_params": map[string]any{"input": r.ex.Prompt[len(r.ex.Prompt)-1].Content},
						"response": map[string]any{"output": []map[string]any{{"type": "message", "role": "assistant",
							"content": []map[string]any{{"type": "output_text", "text": r.output}}}}},
						"verifier_metadata": map[string]any{"env": "e1", "example_id": r.ex.ID},
						"reward":            r.sc.Total, "reward_components": r.sc.Components, "svbench_env": netlogs.ID,
						"_ng_task_index": i, "_ng_rollout_index": 0,
					})
				}
				p := filepath.Join(dir, "rollouts.jsonl")
				writeLines(t, p, lines)
				return p
			}, args: []string{"--env", "e1"}},
		{name: "vf-eval output directory", rubric: netlogs.RubricReference, wantFormat: "verifiers",
			write: func(t *testing.T, dir string, rows []formatRow) string {
				var lines []map[string]any
				for i, r := range rows {
					line := map[string]any{"example_id": i, "prompt": r.ex.Prompt, "completion": []map[string]any{{"role": "assistant", "content": r.output}},
						"answer": json.RawMessage(r.ex.Answer), "reward": r.sc.Total}
					for c, v := range r.sc.Components {
						line["reward_"+c] = v
					}
					lines = append(lines, line)
				}
				writeLines(t, filepath.Join(dir, "results.jsonl"), lines)
				meta := `{"env_id": "sv-env-network-logs", "env_args": {}, "model": "Qwen/Qwen3-4B", "base_url": "http://localhost:8000/v1", "num_examples": 6, "rollouts_per_example": 1, "sampling_args": {"temperature": 1.0}, "time": 3.2, "avg_reward": 0.5}`
				if err := os.WriteFile(filepath.Join(dir, "metadata.json"), []byte(meta), 0o644); err != nil {
					t.Fatal(err)
				}
				return dir
			}},
		{name: "verl dump of svbench's compute_score", rubric: netlogs.RubricDefault, wantFormat: "verl",
			write: func(t *testing.T, dir string, rows []formatRow) string {
				var lines []map[string]any
				for _, r := range rows {
					line := map[string]any{"input": r.ex.Prompt[len(r.ex.Prompt)-1].Content, "output": r.output, "gts": json.RawMessage(r.ex.Answer),
						"score": r.sc.Total, "step": 4, "svbench_error": 0.0}
					maps.Copy(line, anyMap(r.sc.Components))
					lines = append(lines, line)
				}
				p := filepath.Join(dir, "4.jsonl")
				writeLines(t, p, lines)
				return p
			}, args: []string{"--env", "e1"}},
		{name: "verl rollout_data_dir, one file per step", rubric: netlogs.RubricDefault, wantFormat: "verl",
			write: func(t *testing.T, dir string, rows []formatRow) string {
				byStep := map[int][]map[string]any{}
				for i, r := range rows {
					step := 4 + 8*(i%2) // 4.jsonl and 12.jsonl
					line := map[string]any{"input": r.ex.Prompt[len(r.ex.Prompt)-1].Content, "output": r.output, "gts": json.RawMessage(r.ex.Answer),
						"score": r.sc.Total, "step": step, "svbench_error": 0.0}
					maps.Copy(line, anyMap(r.sc.Components))
					byStep[step] = append(byStep[step], line)
				}
				for step, lines := range byStep {
					writeLines(t, filepath.Join(dir, fmt.Sprintf("%d.jsonl", step)), lines)
				}
				return dir
			}, args: []string{"--env", "e1"}},
		{name: "NeMo Gym rollouts of a dataset svbench did not write", rubric: netlogs.RubricReference, wantFormat: "nemo-gym",
			write: func(t *testing.T, dir string, rows []formatRow) string {
				p := filepath.Join(dir, "rollouts.jsonl")
				writeLines(t, p, nemoGymNoMetadata(rows))
				return p
			}, args: []string{"--env", "e1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := e1Rollouts(t, tc.rubric, n)
			input := tc.write(t, t.TempDir(), rows)
			out := t.TempDir()
			code, stdout, stderr := runCLI(t, append([]string{"report", input, "--out", out}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			want := fmt.Sprintf("%d/%d rows reproduce the recorded reward", n, n)
			if !strings.Contains(stdout, want) || !strings.Contains(stdout, "with the "+tc.rubric+" rubric") {
				t.Fatalf("want %q with the %s rubric:\n%s", want, tc.rubric, stdout)
			}
			b, err := os.ReadFile(filepath.Join(out, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			var sum struct {
				Input struct {
					Format, Rubric string
					VFEval         *struct {
						Model              string `json:"model"`
						RolloutsPerExample int    `json:"rollouts_per_example"`
					} `json:"vf_eval"`
				} `json:"trainer_input"`
			}
			if err := json.Unmarshal(b, &sum); err != nil {
				t.Fatal(err)
			}
			if sum.Input.Format != tc.wantFormat || sum.Input.Rubric != tc.rubric {
				t.Fatalf("trainer_input %+v, want format %s rubric %s", sum.Input, tc.wantFormat, tc.rubric)
			}
			if tc.wantFormat == "verifiers" && (sum.Input.VFEval == nil || sum.Input.VFEval.Model != "Qwen/Qwen3-4B" || sum.Input.VFEval.RolloutsPerExample != 1) {
				t.Fatalf("vf-eval metadata not read: %+v", sum.Input.VFEval)
			}
		})
	}
}

// nemoGymNoMetadata are NeMo Gym rollouts of rows as a dataset of the
// user's own makes them: the user's system prompt, no verifier_metadata.
func nemoGymNoMetadata(rows []formatRow) []map[string]any {
	var lines []map[string]any
	for i, r := range rows {
		lines = append(lines, map[string]any{
			"responses_create_params": map[string]any{"input": []map[string]any{{"role": "system", "content": "Classify the log line."},
				{"role": "user", "content": r.ex.Prompt[len(r.ex.Prompt)-1].Content}}},
			"response": map[string]any{"output": []map[string]any{{"type": "message", "role": "assistant",
				"content": []map[string]any{{"type": "output_text", "text": r.output}}}}},
			"reward": r.sc.Total, "_ng_task_index": i, "_ng_rollout_index": 0,
		})
	}
	return lines
}

// TestReportShowsProblemReasons: without --strict, report says why rows
// were left out (the first few, with their lines), not only how many.
func TestReportShowsProblemReasons(t *testing.T) {
	rows := e1Rollouts(t, netlogs.RubricReference, 2)
	lines := nemoGymNoMetadata(rows)
	stray := nemoGymNoMetadata(rows[:1])[0]
	stray["responses_create_params"] = map[string]any{"input": "a log line no split holds"}
	lines = append(lines, stray)
	p := filepath.Join(t.TempDir(), "rollouts.jsonl")
	writeLines(t, p, lines)
	code, stdout, stderr := runCLI(t, "report", p, "--env", "e1", "--out", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"1 row(s) with problems (1 score_error)", "line 3: score_error:", "row 3: no verifier_metadata names its example"} {
		if !strings.Contains(stdout, want) {
			t.Fatalf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}

func anyMap(m map[string]float64) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestReportTRLWithoutID: a TRL table without its example-id column is
// refused with the column expected and what to pass.
func TestReportTRLWithoutID(t *testing.T) {
	dir := t.TempDir()
	rows := e1Rollouts(t, netlogs.RubricDefault, 2)
	writeTRL(t, dir, rows)
	code, _, stderr := runCLI(t, "report", dir, "--env", "e1", "--id-column", "task_id", "--out", t.TempDir())
	if code == 0 || !strings.Contains(stderr, `no example-id column "task_id"`) || !strings.Contains(stderr, "--id-column") {
		t.Fatalf("exit %d, stderr: %s", code, stderr)
	}
}
