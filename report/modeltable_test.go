package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
)

// otherTestEnv is a second environment for the cross-environment table.
const otherTestEnv = "test-other"

func init() {
	register(otherTestEnv, nil, Spec{Build: buildTestDetect})
}

func rubricFixture(name string, lo, hi float64) *env.RubricInfo {
	ri := env.NewRubricInfo(name, env.RubricComponent{Name: "a", Weight: 1, Min: lo, Max: hi})
	return &ri
}

func TestBuildModelTable(t *testing.T) {
	e1 := rubricFixture("default", -0.5, 2.5)
	e2 := rubricFixture("default", 0, 2.25)
	ci := func(lo, hi float64) *[2]float64 { return &[2]float64{lo, hi} }
	reward := KeyMetric{Name: "reward", HigherIsBetter: true}
	ece := KeyMetric{Name: "ece", HigherIsBetter: false}
	type want struct {
		titles []string
		models []string
		cells  [][]string // per model, per column
	}
	for _, c := range []struct {
		name string
		in   []ModelTableEntry
		want want
	}{
		{
			name: "two models, two environments, one missing cell",
			in: []ModelTableEntry{
				{Env: "e1", Model: "m-b", Condition: "default", Metric: reward, Value: 1.5, CI: ci(1.25, 1.75), N: 40, Rubric: e1},
				{Env: "e1", Model: "m-a", Condition: "default", Metric: reward, Value: 0.5, CI: ci(0.25, 0.75), N: 40, Rubric: e1},
				{Env: "e2", Model: "m-a", Condition: "default", Metric: ece, Value: 0.125, N: 10, Rubric: e2},
			},
			want: want{
				titles: []string{"e1: reward (reward ∈ [-0.5, 2.5])", "e2: ece ↓ (reward ∈ [0, 2.25])"},
				models: []string{"m-a", "m-b"},
				cells:  [][]string{{"0.5000 [0.2500, 0.7500]", "0.1250"}, {"1.5000 [1.2500, 1.7500]", "—"}},
			},
		},
		{
			name: "an environment under two conditions gets a column each; the most complete run stands; undefined is n/a",
			in: []ModelTableEntry{
				{Env: "e1", Model: "m", Condition: "default", Metric: reward, Value: 1, N: 4, Rubric: e1},
				{Env: "e1", Model: "m", Condition: "default", Metric: reward, Value: 2, N: 40, Rubric: e1, Grade: "C"},
				{Env: "e1", Model: "m", Condition: "reference", Metric: reward, Value: 0.75, N: 40, Rubric: rubricFixture("reference", -1, 1)},
				{Env: "e2", Model: "m", Condition: "default", Metric: reward, Undefined: true, N: 3},
			},
			want: want{
				titles: []string{"e1 · default: reward (reward ∈ [-0.5, 2.5])", "e1 · reference: reward (reward ∈ [-1, 1])",
					"e2: reward (reward range: not recorded (runs from before metadata.json's rubric_info))"},
				models: []string{"m"},
				cells:  [][]string{{"2.0000 (C)", "0.7500", "n/a"}},
			},
		},
		{
			name: "runs of one column declaring different rubrics show no range",
			in: []ModelTableEntry{
				{Env: "e1", Model: "a", Metric: reward, Value: 1, Rubric: e1},
				{Env: "e1", Model: "b", Metric: reward, Value: 1, Rubric: e2},
				{Env: "e1", Model: "c", Metric: reward, Value: 1},
			},
			want: want{
				titles: []string{"e1: reward (reward range: the runs declare different rubrics)"},
				models: []string{"a", "b", "c"},
				cells:  [][]string{{"1.0000"}, {"1.0000"}, {"1.0000"}},
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb := BuildModelTable(c.in)
			var titles, models []string
			for _, col := range tb.Columns {
				titles = append(titles, col.Title())
			}
			var cells [][]string
			for _, r := range tb.Rows {
				models = append(models, r.Model)
				var row []string
				for _, cell := range r.Cells {
					row = append(row, cell.Text())
				}
				cells = append(cells, row)
			}
			if g, w := strings.Join(titles, " | "), strings.Join(c.want.titles, " | "); g != w {
				t.Errorf("columns\n got %s\nwant %s", g, w)
			}
			if g, w := strings.Join(models, ","), strings.Join(c.want.models, ","); g != w {
				t.Errorf("models %s, want %s", g, w)
			}
			gc, _ := json.Marshal(cells)
			wc, _ := json.Marshal(c.want.cells)
			if string(gc) != string(wc) {
				t.Errorf("cells\n got %s\nwant %s", gc, wc)
			}
			md := tb.Markdown("Models across environments")
			for _, m := range c.want.models {
				if !strings.Contains(md, "| "+m+" |") {
					t.Errorf("markdown lacks model %s:\n%s", m, md)
				}
			}
		})
	}
	if md := BuildModelTable(nil).Markdown("x"); md != "" {
		t.Errorf("an empty table renders %q", md)
	}
}

// writeTableRun writes a completed run directory as svbench eval leaves
// it: metadata.json (with the rubric's declaration), an empty results file
// and a summary.json whose first key metric is reward.
func writeTableRun(t *testing.T, root, envID, model string, reward float64, ri *env.RubricInfo) {
	t.Helper()
	dir := filepath.Join(root, envID+"--"+model)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	meta := artifact.Metadata{RunID: envID + "-" + model, Environment: envID, Rubric: "default", Model: model, Dataset: "d",
		NumExamples: 10, Rollouts: 1, Status: artifact.StatusCompleted, Started: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), RubricInfo: ri}
	if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), meta); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, artifact.ResultsFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	summary := map[string]any{"n_rows": 10, "bootstrap": map[string]string{"method": BootstrapMethod},
		"key_metrics": []map[string]any{{"name": "reward", "value": reward, "higher_is_better": true, "ci_lo": reward - 0.25, "ci_hi": reward + 0.25}}}
	if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.SummaryFile), summary); err != nil {
		t.Fatal(err)
	}
}

// TestScoreboardModelTable: the scoreboard (JSON and markdown) carries the
// per-model table, ranges read from each run's metadata.json.
func TestScoreboardModelTable(t *testing.T) {
	root := t.TempDir()
	writeTableRun(t, root, testEnv, "m1", 1.5, rubricFixture("default", -0.5, 2.5))
	writeTableRun(t, root, testEnv, "m2", 0.5, rubricFixture("default", -0.5, 2.5))
	writeTableRun(t, root, otherTestEnv, "m1", 0.75, rubricFixture("default", 0, 1))
	sb, err := CollectScoreboard(root, ScoreboardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sb.Models == nil || len(sb.Models.Columns) != 2 || len(sb.Models.Rows) != 2 {
		t.Fatalf("models table %+v", sb.Models)
	}
	md := sb.Markdown()
	for _, want := range []string{"## Models across environments", testEnv + ": reward (reward ∈ [-0.5, 2.5])",
		otherTestEnv + ": reward (reward ∈ [0, 1])", "| m1 | 1.5000 [1.2500, 1.7500] | 0.7500 [0.5000, 1.0000] |", "| m2 | 0.5000 [0.2500, 0.7500] | — |"} {
		if !strings.Contains(md, want) {
			t.Errorf("scoreboard.md lacks %q:\n%s", want, md)
		}
	}
	out := t.TempDir()
	if err := WriteScoreboard(out, sb); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "scoreboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var js struct {
		Models ModelTable `json:"models_by_env"`
	}
	if err := json.Unmarshal(b, &js); err != nil || len(js.Models.Rows) != 2 || js.Models.Columns[0].RewardMax == nil || *js.Models.Columns[0].RewardMax != 2.5 {
		t.Errorf("scoreboard.json models_by_env: %v %s", err, b)
	}
}
