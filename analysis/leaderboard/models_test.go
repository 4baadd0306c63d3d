package leaderboard

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	_ "github.com/svbench/svbench/envs/phishing"
)

// TestLeaderboardModelTable: leaderboard.md and .json carry one row per
// model across environments, each cell the entry's main metric with its
// interval and grade, each column the rubric's declared reward range.
func TestLeaderboardModelTable(t *testing.T) {
	root := t.TempDir()
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	e1 := env.NewRubricInfo("default", env.RubricComponent{Name: "a", Weight: 1, Min: -0.5, Max: 2.5})
	e4 := env.NewRubricInfo("default", env.RubricComponent{Name: "a", Weight: 1, Min: -0.6, Max: 2.1})
	for _, r := range []struct {
		name, envID, model string
		reward             float64
		ri                 *env.RubricInfo
	}{
		{"e1-a", "network-logs", "model-a", 1.5, &e1},
		{"e1-b", "network-logs", "model-b", 1.0, &e1},
		{"e4-a", "phishing-detection", "model-a", 0.8, &e4},
	} {
		dir := writeRun(t, root, r.name, run{env: r.envID, model: r.model, examples: 120, rollouts: 1, status: artifact.StatusCompleted, reward: r.reward, started: day})
		m, err := artifact.ReadMetadata(dir)
		if err != nil {
			t.Fatal(err)
		}
		m.RubricInfo = r.ri
		if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), m); err != nil {
			t.Fatal(err)
		}
	}
	lb, err := Build([]string{root}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if lb.Models == nil || len(lb.Models.Columns) != 2 || len(lb.Models.Rows) != 2 {
		t.Fatalf("models table %+v (skipped %v)", lb.Models, lb.Skipped)
	}
	md := lb.Markdown()
	for _, want := range []string{"## Models across environments", "network-logs: reward (reward ∈ [-0.5, 2.5])",
		"phishing-detection: reward (reward ∈ [-0.6, 2.1])",
		"| model-a | 1.5000 [1.4000, 1.6000] (B) | 0.8000 [0.7000, 0.9000] (B) |", "| model-b | 1.0000 [0.9000, 1.1000] (B) | — |"} {
		if !strings.Contains(md, want) {
			t.Errorf("leaderboard.md lacks %q:\n%s", want, md)
		}
	}
}
