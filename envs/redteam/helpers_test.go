package redteam

import (
	"context"
	"testing"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/runner"
)

// playAll runs a built-in or scripted policy over every example and returns
// the scores in dataset order.
func playAll(t *testing.T, e env.Environment, p env.Policy, rubric string) ([]env.Score, []*env.Rollout) {
	t.Helper()
	ctx := context.Background()
	ds, err := e.Load(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var scores []env.Score
	var ros []*env.Rollout
	for _, ex := range ds.Examples {
		ro, err := runner.RunEpisode(ctx, llm.Builtin{Policy: p}, e, ex, runner.EpisodeConfig{})
		if err != nil {
			t.Fatalf("%s: %v", ex.ID, err)
		}
		s, err := e.Score(ctx, ex, ro, rubric)
		if err != nil {
			t.Fatalf("%s: %v", ex.ID, err)
		}
		scores, ros = append(scores, s), append(ros, ro)
	}
	return scores, ros
}

func meanOf(ss []env.Score, f func(env.Score) float64) float64 {
	sum := 0.0
	for _, s := range ss {
		sum += f(s)
	}
	return sum / float64(len(ss))
}

func total(s env.Score) float64 { return s.Total }

func mustAttack(t *testing.T, o env.Options) *Attack {
	t.Helper()
	a, err := NewAttack(o)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func mustDefense(t *testing.T, o env.Options) *Defense {
	t.Helper()
	d, err := NewDefense(o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func script(turns ...string) env.Policy {
	return env.PolicyFunc(func(_ context.Context, conv []env.Message, _ []env.Tool) (env.Message, error) {
		k := turnOf(conv)
		return env.Message{Role: env.RoleAssistant, Content: turns[min(k, len(turns)-1)]}, nil
	})
}
