package ingest_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/netlogs"
	"github.com/svbench/svbench/ingest"
)

// e1Scored is an E1 example with an answer and its score under a rubric.
type e1Scored struct {
	ex     env.Example
	output string
	sc     env.Score
}

func scoreE1(t *testing.T, rubric string, n int) (env.Environment, []e1Scored) {
	t.Helper()
	e := netlogs.New()
	ds, err := e.Load(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var out []e1Scored
	for i := 0; i < n && i < len(ds.Examples); i++ {
		ex := ds.Examples[i]
		var gold string
		_ = json.Unmarshal(ex.Answer, &gold)
		label := gold
		if i%2 == 1 {
			label = "Benign" // some wrong answers, so rewards differ
		}
		output := `{"label": "` + label + `", "confidence": 0.7}`
		sc, err := e.Score(context.Background(), ex, env.OutsideRollout(env.CompletionText(output).Messages), rubric)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e1Scored{ex: ex, output: output, sc: sc})
	}
	return e, out
}

// writeTRLTable writes a completions table as TRL's GRPOTrainer does
// (pandas DataFrame.to_parquet: every column optional; "step", "prompt",
// "completion", one double per reward function, the log_extra columns,
// "advantage"), with the library that reads it.
func writeTRLTable(t *testing.T, path string, cols []string, rows []map[string]any) {
	t.Helper()
	group := parquet.Group{}
	for _, c := range cols {
		switch c {
		case "step":
			group[c] = parquet.Optional(parquet.Int(64))
		case "prompt", "completion", "example_id", "task":
			group[c] = parquet.Optional(parquet.String())
		default:
			group[c] = parquet.Optional(parquet.Leaf(parquet.DoubleType))
		}
	}
	schema := parquet.NewSchema("schema", group)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewWriter(f, schema)
	leaves := schema.Columns()
	for _, r := range rows {
		var row parquet.Row
		for i, p := range leaves {
			v, ok := r[p[0]]
			if !ok || v == nil {
				row = append(row, parquet.Value{}.Level(0, 0, i))
				continue
			}
			row = append(row, parquet.ValueOf(v).Level(0, 1, i))
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

// clientFn is the name svbench's Python client gives a reward function
// (clients/python/svbench/trl.py _fn_name).
func clientFn(envName, what string) string {
	return "svbench_" + strings.NewReplacer("-", "_", "/", "_").Replace(envName) + "_" + what
}

// TestTRLCompletionsTable: TRL's completions tables, joined to the dataset
// by the example id a reward function logged, are re-scored; the Python
// client's column names come back as svbench's components, and a table
// without the id column is refused with what to do.
func TestTRLCompletionsTable(t *testing.T) {
	e, scored := scoreE1(t, netlogs.RubricDefault, 4)
	comps := slices.Sorted(maps.Keys(scored[0].sc.Components))
	type table struct {
		name     string
		envName  string // as the user named it to the client
		total    bool   // components=False: one column, the total
		idCol    string // the column holding the id ("" = none)
		opts     ingest.Options
		badID    bool
		wantErr  string
		wantJoin int
	}
	for _, tc := range []table{
		{name: "one column per component, example_id via log_extra", envName: "e1", idCol: "example_id", wantJoin: 4},
		{name: "the total, env as the reference names it", envName: "intertwine/sv-env-network-logs", total: true, idCol: "example_id", wantJoin: 4},
		{name: "another id column, named", envName: "network-logs", idCol: "task", opts: ingest.Options{IDColumn: "task"}, wantJoin: 4},
		{name: "no id column", envName: "e1", wantErr: `no example-id column "example_id"`},
		{name: "an id not in the dataset", envName: "e1", idCol: "example_id", badID: true, wantJoin: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cols := []string{"step", "prompt", "completion"}
			if tc.total {
				cols = append(cols, clientFn(tc.envName, "reward"))
			} else {
				for _, c := range comps {
					cols = append(cols, clientFn(tc.envName, c))
				}
			}
			if tc.idCol != "" {
				cols = append(cols, tc.idCol)
			}
			cols = append(cols, "advantage")
			var rows []map[string]any
			for i, s := range scored {
				r := map[string]any{"step": int64(3), "prompt": "system\n" + s.ex.Prompt[0].Content + "\nuser\n…\nassistant\n",
					"completion": s.output, "advantage": 0.5 - float64(i%2)}
				if tc.total {
					r[clientFn(tc.envName, "reward")] = s.sc.Total
				} else {
					for _, c := range comps {
						r[clientFn(tc.envName, c)] = s.sc.Components[c]
					}
				}
				if tc.idCol != "" {
					r[tc.idCol] = s.ex.ID
					if tc.badID && i == 0 {
						r[tc.idCol] = "no-such-example"
					}
				}
				rows = append(rows, r)
			}
			dir := filepath.Join(t.TempDir(), "completions")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			writeTRLTable(t, filepath.Join(dir, "completions_00003.parquet"), cols, rows)
			// TRL's output_dir: the tables are found in its completions/.
			input := filepath.Dir(dir)
			if got := ingest.ResultsPath(input); got != input {
				t.Fatalf("ResultsPath(%s) = %s", input, got)
			}
			if ok, _ := ingest.IsTrainerFile(input); !ok {
				t.Fatal("a TRL output_dir is not recognised as a trainer's output")
			}
			run, err := ingest.Load(context.Background(), input, e, tc.opts)
			if tc.wantErr != "" {
				var missing *ingest.MissingIDError
				if !errors.As(err, &missing) || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "--id-column") || !strings.Contains(err.Error(), "log_extra") {
					t.Fatalf("err = %v, want a MissingIDError saying %q, log_extra and --id-column", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if run.Format != ingest.FormatTRL || run.Rubric != netlogs.RubricDefault || run.Joined != tc.wantJoin {
				t.Fatalf("format %q rubric %q (%s) joined %d, want trl default %d", run.Format, run.Rubric, run.RubricFrom, run.Joined, tc.wantJoin)
			}
			for i, r := range run.Rows {
				if tc.badID && i == 0 {
					if !strings.Contains(r.ScoreError, `"no-such-example"`) || !strings.Contains(r.ScoreError, "--dataset") {
						t.Fatalf("unjoined row: score error %q", r.ScoreError)
					}
					continue
				}
				a := ingest.Compare(&r)
				if r.ScoreError != "" || a == nil || !a.Reproduce || len(a.Components) > 0 {
					t.Fatalf("row %d: error %q agreement %+v (recorded %v)", i, r.ScoreError, a, r.Trainer.Components)
				}
				if r.ExampleID != scored[i].ex.ID || r.Trainer.Step == nil || *r.Trainer.Step != 3 || r.Trainer.Advantage == nil {
					t.Fatalf("row %d: example %q step %v advantage %v", i, r.ExampleID, r.Trainer.Step, r.Trainer.Advantage)
				}
				if !tc.total && !maps.Equal(r.Trainer.Components, scored[i].sc.Components) {
					t.Fatalf("row %d: client columns read as %v, want %v", i, r.Trainer.Components, scored[i].sc.Components)
				}
			}
			if !tc.total && run.Derived != tc.wantJoin {
				t.Fatalf("derived %d recorded totals, want %d", run.Derived, tc.wantJoin)
			}
		})
	}
}

// TestNemoGymRollouts: ng_collect_rollouts' output lines (verify
// responses, here as svbench serve answers them) are re-scored with the
// rubric they record, or svbench's default when they name none.
func TestNemoGymRollouts(t *testing.T) {
	for _, tc := range []struct {
		name       string
		rubric     string // verifier_metadata.rubric
		by         string // "id", "answer" or "example"
		svbenchEnv bool
		want       string
	}{
		{name: "svbench's verify, default rubric, example by id", by: "id", svbenchEnv: true, want: netlogs.RubricDefault},
		{name: "reference rubric recorded, answer only", rubric: netlogs.RubricReference, by: "answer", svbenchEnv: true, want: netlogs.RubricReference},
		{name: "another resources server's row, the whole example", rubric: netlogs.RubricDefault, by: "example", want: netlogs.RubricDefault},
		// A dataset svbench did not write: no verifier_metadata, the
		// user's own system message; the prompt says which example.
		{name: "no verifier_metadata, joined by prompt", by: "prompt", want: netlogs.RubricReference},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, scored := scoreE1(t, tc.want, 3)
			var lines []string
			for i, s := range scored {
				meta := map[string]any{"env": "e1"}
				if tc.rubric != "" {
					meta["rubric"] = tc.rubric
				}
				switch tc.by {
				case "id":
					meta["example_id"] = s.ex.ID
				case "answer":
					meta["answer"] = s.ex.Answer
				case "example":
					meta["example"] = map[string]any{"id": s.ex.ID, "answer": s.ex.Answer}
				}
				input := []map[string]any{{"role": "user", "content": s.ex.Prompt[len(s.ex.Prompt)-1].Content}}
				if tc.by == "prompt" {
					input = append([]map[string]any{{"role": "system", "content": "You are a SOC analyst. Answer in JSON."}}, input...)
					input[1]["content"] = "  " + input[1]["content"].(string) + "\n"
				}
				row := map[string]any{
					"responses_create_params": map[string]any{"input": input},
					"response": map[string]any{"id": "resp_1", "output": []map[string]any{
						{"type": "reasoning", "summary": []map[string]any{{"type": "summary_text", "text": "thinking: Malicious?"}}},
						{"type": "message", "role": "assistant", "content": []map[string]any{{"type": "output_text", "text": s.output}}},
					}},
					"reward": s.sc.Total, "reward_components": s.sc.Components,
					"_ng_task_index": i, "_ng_rollout_index": 0, "agent_ref": map[string]any{"name": "svbench_agent"},
				}
				if tc.by != "prompt" {
					row["verifier_metadata"] = meta
				}
				if tc.svbenchEnv {
					row["svbench_env"], row["svbench_solved"] = "e1", s.sc.Solved
				}
				for k, v := range s.sc.Components {
					row[k] = v
				}
				b, _ := json.Marshal(row)
				lines = append(lines, string(b))
			}
			path := filepath.Join(t.TempDir(), "rollouts.jsonl")
			if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if ok, _ := ingest.IsTrainerFile(path); !ok {
				t.Fatal("a NeMo Gym rollout is not recognised as a trainer row")
			}
			run, err := ingest.Load(context.Background(), path, e, ingest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if run.Format != ingest.FormatNemoGym || run.Rubric != tc.want {
				t.Fatalf("format %q rubric %q (%s), want nemo-gym %s", run.Format, run.Rubric, run.RubricFrom, tc.want)
			}
			if wantByPrompt := map[bool]int{true: len(scored)}[tc.by == "prompt"]; run.JoinedByPrompt != wantByPrompt {
				t.Fatalf("%d rows joined by prompt, want %d", run.JoinedByPrompt, wantByPrompt)
			}
			for i, r := range run.Rows {
				a := ingest.Compare(&r)
				if r.ScoreError != "" || a == nil || !a.Reproduce || len(a.Components) > 0 {
					t.Fatalf("row %d: error %q agreement %+v", i, r.ScoreError, a)
				}
				// svbench's server scored content only: its rows are
				// re-scored on content alone, never with the reasoning
				// summary put back in front (another server's rows are
				// read as any trainer's, reasoning first).
				if tc.svbenchEnv && r.FinalText != scored[i].output || !strings.HasSuffix(r.FinalText, scored[i].output) {
					t.Fatalf("row %d: final text %q", i, r.FinalText)
				}
				if r.Trainer.ProblemID != strconv.Itoa(i) || r.Trainer.SampleID != "0" {
					t.Fatalf("row %d: problem %q sample %q", i, r.Trainer.ProblemID, r.Trainer.SampleID)
				}
			}
		})
	}
}

// TestServerScoredRubric: rows svbench scored (verl's dump of svbench's
// compute_score, marked by svbench_error) are re-scored with svbench's
// default rubric unless told otherwise; the reference rubric does not
// reproduce them, which is why the default follows the marks.
func TestServerScoredRubric(t *testing.T) {
	e, scored := scoreE1(t, netlogs.RubricDefault, 6)
	var lines []string
	for _, s := range scored {
		line := map[string]any{"input": "user\n" + s.ex.Prompt[len(s.ex.Prompt)-1].Content, "output": s.output, "gts": json.RawMessage(s.ex.Answer),
			"score": s.sc.Total, "step": 1, "svbench_error": 0.0}
		for k, v := range s.sc.Components {
			line[k] = v
		}
		b, _ := json.Marshal(line)
		lines = append(lines, string(b))
	}
	path := filepath.Join(t.TempDir(), "1.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rubric, want string
		reproduce    bool
	}{
		{rubric: "", want: netlogs.RubricDefault, reproduce: true},
		{rubric: netlogs.RubricReference, want: netlogs.RubricReference},
	} {
		run, err := ingest.Load(context.Background(), path, e, ingest.Options{Rubric: tc.rubric})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for i := range run.Rows {
			if a := ingest.Compare(&run.Rows[i]); a != nil && a.Reproduce {
				n++
			}
		}
		if run.Rubric != tc.want || (n == len(scored)) != tc.reproduce {
			t.Errorf("--rubric %q: re-scored with %q (%s), %d/%d reproduce", tc.rubric, run.Rubric, run.RubricFrom, n, len(scored))
		}
	}
}

// TestClientName: every name form svbench's Python client writes (the
// environment as the user gave it) maps back to svbench's component.
func TestClientName(t *testing.T) {
	_ = netlogs.New() // registers e1
	for _, tc := range []struct {
		name, env, comp string
		ok              bool
	}{
		{name: clientFn("e1", "accuracy"), env: netlogs.ID, comp: "accuracy", ok: true},
		{name: clientFn("network-logs", "asymmetric_cost"), env: netlogs.ID, comp: "asymmetric_cost", ok: true},
		{name: clientFn("sv-env-network-logs", "reward"), env: netlogs.ID, comp: "reward", ok: true},
		{name: clientFn("intertwine/sv-env-network-logs", "format"), env: netlogs.ID, comp: "format", ok: true},
		{name: "svbench_error"},
		{name: clientFn("no-such-env", "accuracy")},
		{name: "reward_accuracy"},
	} {
		id, comp, ok := ingest.ClientName(tc.name)
		if id != tc.env || comp != tc.comp || ok != tc.ok {
			t.Errorf("ClientName(%q) = %q, %q, %v; want %q, %q, %v", tc.name, id, comp, ok, tc.env, tc.comp, tc.ok)
		}
		if !strings.HasPrefix(tc.name, "svbench_") {
			continue
		}
		if c, isComp := ingest.ComponentName(tc.name); isComp != (tc.ok && tc.comp != "reward") || (isComp && c != tc.comp) {
			t.Errorf("ComponentName(%q) = %q, %v", tc.name, c, isComp)
		}
	}
}

// TestVFEvalMetadata: vf-eval's metadata.json is read for the run's model,
// examples and rollouts per example; svbench's own and the hosted
// platform's files of the same name are not taken for it.
func TestVFEvalMetadata(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       *ingest.VFEvalMetadata
	}{
		{name: "vf-eval", file: `{"env_id": "sv-env-network-logs", "env_args": {}, "model": "Qwen/Qwen3-4B", "base_url": "http://localhost:8000/v1",
			"num_examples": 20, "rollouts_per_example": 3, "sampling_args": {"temperature": 0.7}, "time": 12.5, "avg_reward": 0.61,
			"avg_metrics": {"reward_accuracy": 0.6}, "avg_error": 0.0, "pass_at_k": {"1": 0.6}, "state_columns": []}`,
			want: &ingest.VFEvalMetadata{EnvID: "sv-env-network-logs", Model: "Qwen/Qwen3-4B", NumExamples: 20, RolloutsPerExample: 3}},
		{name: "svbench's own", file: `{"run_id": "x", "environment": "network-logs", "model": "m", "rollouts_per_example": 1}`},
		{name: "hosted", file: `{"run": {"base_model": "m", "rollouts_per_example": 8}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "metadata.json"), []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ingest.ReadVFEvalMetadata(dir)
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tc.want == nil) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			if got == nil {
				return
			}
			if got.EnvID != tc.want.EnvID || got.Model != tc.want.Model || got.NumExamples != tc.want.NumExamples || got.RolloutsPerExample != tc.want.RolloutsPerExample {
				t.Fatalf("got %+v", got)
			}
			md := got.Metadata(netlogs.ID, netlogs.RubricReference)
			if md.Model != "Qwen/Qwen3-4B" || md.NumExamples != 20 || md.Rollouts != 3 || md.Source != "trainer:vf-eval" || math.Abs(md.DurationS-12.5) > 0 {
				t.Fatalf("metadata %+v", md)
			}
		})
	}
}

// TestNemoGymPromptJoinFails: a rollout naming no example whose prompt is
// no example's is a row with a score error saying so, not a guess; the
// other rows are re-scored.
func TestNemoGymPromptJoinFails(t *testing.T) {
	e, scored := scoreE1(t, netlogs.RubricReference, 1)
	row := func(user string) string {
		b, _ := json.Marshal(map[string]any{
			"responses_create_params": map[string]any{"input": []map[string]any{{"role": "user", "content": user}}},
			"response":                map[string]any{"id": "r", "output": []map[string]any{{"type": "message", "role": "assistant", "content": []map[string]any{{"type": "output_text", "text": scored[0].output}}}}},
			"reward":                  0.5,
		})
		return string(b)
	}
	path := filepath.Join(t.TempDir(), "rollouts.jsonl")
	data := row("a log line no split holds") + "\n" + row(scored[0].ex.Prompt[len(scored[0].ex.Prompt)-1].Content) + "\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := ingest.Load(context.Background(), path, e, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Rows) != 2 || run.JoinedByPrompt != 1 {
		t.Fatalf("%d rows, %d joined by prompt", len(run.Rows), run.JoinedByPrompt)
	}
	if msg := run.Rows[0].ScoreError; !strings.Contains(msg, "no verifier_metadata names its example") || !strings.Contains(msg, "prompt of no example") || !strings.Contains(msg, "--dataset") {
		t.Fatalf("row 1: error %q", msg)
	}
	if r := run.Rows[1]; r.ScoreError != "" || r.ExampleID != scored[0].ex.ID {
		t.Fatalf("row 2: error %q example %q", r.ScoreError, r.ExampleID)
	}
}
