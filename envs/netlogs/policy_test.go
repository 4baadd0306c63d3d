package netlogs

import (
	"context"
	"testing"

	"github.com/svbench/svbench/env"
)

// policyAccuracy runs a built-in policy over generated rows through the
// environment's own prompt and scorer, returning accuracy over all rows
// (abstentions count as wrong) and the abstention rate.
func policyAccuracy(t *testing.T, policy, difficulty, render string, n int, seed uint64) (acc, abstain, malicious float64) {
	t.Helper()
	rows, err := Generate(GenerateOptions{N: n, Seed: seed, Difficulty: difficulty, Render: render})
	if err != nil {
		t.Fatal(err)
	}
	e := New()
	p, ok := e.Policy(policy)
	if !ok {
		t.Fatalf("policy %s missing", policy)
	}
	var correct, abstained, flagged int
	for _, row := range rows {
		ex, err := e.ParseExample(mustJSON(t, row))
		if err != nil {
			t.Fatal(err)
		}
		msg, err := p.Act(context.Background(), ex.Prompt, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := e.Score(context.Background(), ex, &env.Rollout{Completion: []env.Message{msg}}, RubricDefault)
		if err != nil {
			t.Fatal(err)
		}
		correct += int(s.Components["accuracy"])
		switch s.Parsed["predicted_label"] {
		case LabelAbstain:
			abstained++
		case LabelMalicious:
			flagged++
		}
	}
	n = len(rows)
	return float64(correct) / float64(n), float64(abstained) / float64(n), float64(flagged) / float64(n)
}

// TestPolicyAccuracyByDifficulty reports each baseline's accuracy per level
// (go test -run PolicyAccuracy -v ./envs/netlogs) and checks the ordering
// the difficulty levels are designed to produce.
func TestPolicyAccuracyByDifficulty(t *testing.T) {
	const n = 2000
	acc := map[string]map[string]float64{}
	for _, pol := range []string{PolicyHeuristic, PolicyFeatures} {
		acc[pol] = map[string]float64{}
		for _, d := range []string{DifficultyEasy, DifficultyMedium, DifficultyHard} {
			a, ab, m := policyAccuracy(t, pol, d, "rich", n, 7)
			acc[pol][d] = a
			ra, rab, rm := policyAccuracy(t, pol, d, "reference", n, 7)
			t.Logf("%-9s %-6s rich: accuracy %.3f abstain %.3f flagged %.3f | reference rendering: accuracy %.3f abstain %.3f flagged %.3f (n=%d)",
				pol, d, a, ab, m, ra, rab, rm, n)
		}
	}
	if acc[PolicyHeuristic][DifficultyMedium] >= acc[PolicyFeatures][DifficultyMedium] {
		t.Errorf("features (%.3f) should beat the reference heuristic (%.3f) on medium",
			acc[PolicyFeatures][DifficultyMedium], acc[PolicyHeuristic][DifficultyMedium])
	}
	f := acc[PolicyFeatures]
	if !(f[DifficultyEasy] > f[DifficultyMedium] && f[DifficultyMedium] > f[DifficultyHard]) {
		t.Errorf("features accuracy should fall as difficulty rises: %v", f)
	}
	if f[DifficultyHard] > 0.85 {
		t.Errorf("hard level is saturated by a tuned heuristic: %.3f", f[DifficultyHard])
	}
}

func TestPoliciesOnlyReadPrompt(t *testing.T) {
	e := New()
	for _, name := range e.Info().Policies {
		p, ok := e.Policy(name)
		if !ok {
			t.Fatalf("listed policy %s not provided", name)
		}
		msg, err := p.Act(context.Background(), []env.Message{{Role: env.RoleUser, Content: "nothing useful"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := Parse(msg.Content)
		if !out.StrictFormat {
			t.Errorf("%s: answer %q does not follow the schema", name, msg.Content)
		}
	}
	if _, ok := e.Policy("oracle"); ok {
		t.Error("unknown policy names must be refused")
	}
}
