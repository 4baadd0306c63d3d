package leaderboard

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svbench/svbench/artifact"
	_ "github.com/svbench/svbench/envs/netlogs"
	"github.com/svbench/svbench/report"
)

type run struct {
	env      string // "" is network-logs
	model    string
	examples int
	rollouts int
	status   string
	params   map[string]string
	maxTok   int
	reward   float64
	started  time.Time
}

// writeRun builds a run directory: metadata.json, an (empty) results file
// and a summary.json with key metrics, as `svbench eval` leaves them (of
// the current key_metrics_version: an older one would be recomputed from
// the empty results).
func writeRun(t *testing.T, root, name string, r run) string {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sampling, _ := json.Marshal(map[string]int{"max_tokens": r.maxTok})
	envID := cmp.Or(r.env, "network-logs")
	meta := artifact.Metadata{RunID: name, Environment: envID, EnvVersion: "1.0.0", Rubric: "default", Model: r.model,
		Dataset: "embedded:e1-mini", DatasetRev: "sha256:aaaa", NumExamples: r.examples, Rollouts: r.rollouts, Status: r.status,
		Params: r.params, Sampling: sampling, Started: r.started}
	if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), meta); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, artifact.ResultsFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	n := r.examples * r.rollouts
	lo, hi := r.reward-0.1, r.reward+0.1
	summary := map[string]any{"n_rows": n, "counts": map[string]int{"scored": n},
		report.KeyMetricsVersionKey: report.KeyMetricsVersion(envID),
		"key_metrics": []map[string]any{
			{"name": "reward", "value": r.reward, "higher_is_better": true, "ci_lo": lo, "ci_hi": hi},
			{"name": "accuracy", "value": r.reward / 2, "higher_is_better": true},
		}}
	if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.SummaryFile), summary); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLeaderboardGrades(t *testing.T) {
	root := t.TempDir()
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	// Condition "default reward_source=executable": four models.
	writeRun(t, root, "a", run{model: "alpha", examples: 250, rollouts: 4, status: "completed", maxTok: 512, reward: 1.2, started: day})
	writeRun(t, root, "b", run{model: "beta", examples: 120, rollouts: 4, status: "completed", maxTok: 512, reward: 1.5, started: day})
	writeRun(t, root, "c", run{model: "gamma", examples: 250, rollouts: 4, status: "completed", maxTok: 4096, reward: 1.7, started: day})
	writeRun(t, root, "d", run{model: "delta", examples: 10, rollouts: 4, status: "completed", maxTok: 512, reward: 1.9, started: day})
	// Two runs of alpha: the smaller, newer one does not replace the larger.
	writeRun(t, root, "a-small", run{model: "alpha", examples: 40, rollouts: 4, status: "completed", maxTok: 512, reward: 0.1, started: day.Add(time.Hour)})
	// An interrupted run in its own condition (hybrid reward source): D.
	writeRun(t, root, "e", run{model: "alpha", examples: 300, rollouts: 1, status: "interrupted", maxTok: 512, reward: 1.0, started: day,
		params: map[string]string{"reward_source": "hybrid"}})

	lb, err := Build([]string{root}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Entry{}
	for _, e := range lb.Entries {
		got[e.Model+"/"+e.RewardSrc] = e
	}
	want := []struct {
		key, grade string
		rank       int
		matched    bool
		why        string
	}{
		// gamma has the best reward but 4096 max tokens against the
		// others' 512: capped at C, the mismatch named, ranked below the
		// A and the B.
		{"gamma/executable", "C", 3, false, "max tokens 4096 (others: 512)"},
		{"beta/executable", "B", 2, true, "120 examples × 4 rollouts, budget matched"},
		{"alpha/executable", "A", 1, true, "250 examples × 4 rollouts"},
		// delta is matched but tiny: D whatever its reward, and not
		// ranked although its 1.9 is the best value.
		{"delta/executable", "D", 0, true, "10 examples, fewer than 30"},
		{"alpha/hybrid", "D", 0, true, "not completed"},
	}
	if len(lb.Entries) != 5 {
		t.Fatalf("%d entries: %+v", len(lb.Entries), lb.Entries)
	}
	var order []string
	for _, e := range lb.Entries {
		order = append(order, e.Model+"/"+e.RewardSrc)
	}
	if want := []string{"alpha/executable", "beta/executable", "gamma/executable", "delta/executable", "alpha/hybrid"}; !slices.Equal(order, want) {
		t.Errorf("order %q, want %q", order, want)
	}
	for _, w := range want {
		e, ok := got[w.key]
		if !ok {
			t.Fatalf("no entry %s", w.key)
		}
		if e.Grade != w.grade || e.Rank != w.rank || e.BudgetMatched != w.matched || !strings.Contains(e.Why, w.why) {
			t.Errorf("%s: grade %s rank %d matched %v why %q; want %s %d %v %q", w.key, e.Grade, e.Rank, e.BudgetMatched, e.Why, w.grade, w.rank, w.matched, w.why)
		}
	}
	if a := got["alpha/executable"]; a.Runs != 2 || a.Scored != 1000 || a.CI["reward"][1] != 1.3 {
		t.Errorf("alpha: %+v", a)
	}
	if h := got["alpha/hybrid"]; !h.Alone || !strings.Contains(h.Condition, "reward_source=hybrid") {
		t.Errorf("hybrid entry: %+v", h)
	}
	md := lb.Markdown()
	for _, s := range []string{"## network-logs · default reward_source=executable", "| 1 | alpha | a | A | 250 × 4 |", "| — | delta | d | D | 10 × 4 |",
		"10 examples, fewer than 30 |", "1.2000 [1.1000, 1.3000]", "Evidence grades — A:"} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q:\n%s", s, md)
		}
	}
	if strings.Contains(md, "&lt;") || strings.Contains(md, "&gt;") {
		t.Errorf("markdown holds HTML entities:\n%s", md)
	}
	out := t.TempDir()
	if err := Write(out, lb); err != nil {
		t.Fatal(err)
	}
	var back Leaderboard
	b, _ := os.ReadFile(filepath.Join(out, "leaderboard.json"))
	if err := json.Unmarshal(b, &back); err != nil || len(back.Entries) != 5 || back.Rule != GradeRule {
		t.Errorf("leaderboard.json: %v %d", err, len(back.Entries))
	}
}

func TestLeaderboardRunArgs(t *testing.T) {
	root := t.TempDir()
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	a := writeRun(t, root, "a", run{model: "alpha", examples: 100, rollouts: 1, status: "completed", maxTok: 512, reward: 1, started: day})
	b := writeRun(t, root, "b", run{model: "beta", examples: 100, rollouts: 1, status: "completed", maxTok: 512, reward: 2, started: day})
	// Runs given one by one, one of them twice (also via the root).
	lb, err := Build([]string{a, b, root}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lb.Entries) != 2 || lb.Entries[0].Model != "beta" || lb.Entries[0].Grade != "B" || lb.Entries[1].Runs != 1 {
		t.Fatalf("entries %+v", lb.Entries)
	}
}

func TestLeaderboardBadInput(t *testing.T) {
	if _, err := Build([]string{filepath.Join(t.TempDir(), "missing")}, Options{}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing dir: %v", err)
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := Build([]string{f}, Options{}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("file: %v", err)
	}
	// A broken run is skipped with its reason; the rest still rank.
	root := t.TempDir()
	writeRun(t, root, "ok", run{model: "m", examples: 50, rollouts: 1, status: "completed", maxTok: 1, reward: 1})
	os.MkdirAll(filepath.Join(root, "broken"), 0o755)
	os.WriteFile(filepath.Join(root, "broken", artifact.MetadataFile), []byte("{not json"), 0o644)
	lb, err := Build([]string{root}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lb.Entries) != 1 || len(lb.Skipped) != 1 || !strings.Contains(lb.Skipped[0], "broken") {
		t.Errorf("entries %d skipped %q", len(lb.Entries), lb.Skipped)
	}
	empty, err := Build([]string{t.TempDir()}, Options{})
	if err != nil || len(empty.Entries) != 0 || !strings.Contains(empty.Markdown(), "No runs found") {
		t.Errorf("empty root: %v", err)
	}
}

// TestLeaderboardLeavesOutRunsWithNoRow: a run whose every model call
// failed (a wrong model name) scores nothing; it is named among the
// skipped runs, never entered as a model with a grade.
func TestLeaderboardLeavesOutRunsWithNoRow(t *testing.T) {
	root := t.TempDir()
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	writeRun(t, root, "ok", run{model: "alpha", examples: 40, rollouts: 1, status: "completed", maxTok: 512, reward: 1, started: day})
	dir := writeRun(t, root, "typo", run{model: "alpah", examples: 40, rollouts: 1, status: artifact.StatusEarlyStop, maxTok: 512, started: day})
	m, err := artifact.ReadMetadata(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.Errors = 3
	if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), m); err != nil {
		t.Fatal(err)
	}
	lb, err := Build([]string{root}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range lb.Entries {
		if e.Model == "alpah" {
			t.Fatalf("a run with no scored row is on the leaderboard: %+v", e)
		}
	}
	if len(lb.Entries) != 1 || !strings.Contains(strings.Join(lb.Skipped, "\n"), "no scored row, all 3 model calls failed") {
		t.Fatalf("entries %d, skipped %q", len(lb.Entries), lb.Skipped)
	}
}

// TestLeaderboardTrainSplitIsNotAnEvaluation: a run of the train split
// is graded D in a condition of its own, however many rows it has, and
// never ranks beside the evaluation runs.
func TestLeaderboardTrainSplitIsNotAnEvaluation(t *testing.T) {
	root := t.TempDir()
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	writeRun(t, root, "eval", run{model: "alpha", examples: 150, rollouts: 1, status: "completed", maxTok: 512, reward: 1, started: day})
	dir := writeRun(t, root, "train", run{model: "alpha", examples: 2000, rollouts: 4, status: "completed", maxTok: 512, reward: 1.9, started: day})
	m, err := artifact.ReadMetadata(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.Dataset, m.Split = "embedded:e1-train", "train"
	if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), m); err != nil {
		t.Fatal(err)
	}
	lb, err := Build([]string{root}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lb.Entries) != 2 {
		t.Fatalf("entries: %+v", lb.Entries)
	}
	for _, e := range lb.Entries {
		switch e.RunID {
		case "eval":
			if e.Grade != "B" || e.Split != "test" || strings.Contains(e.Condition, "split=") {
				t.Errorf("evaluation run: grade %s split %q condition %q", e.Grade, e.Split, e.Condition)
			}
		case "train":
			if e.Grade != "D" || e.Rank != 0 || !strings.Contains(e.Why, "not an evaluation") || !strings.Contains(e.Condition, "split=train") {
				t.Errorf("train run: grade %s rank %d why %q condition %q", e.Grade, e.Rank, e.Why, e.Condition)
			}
		}
	}
}
