package server

import (
	"context"
	"testing"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/env/judgeutil"
)

// TestJudgeBackedScoringQueuedHeavy: every environment that can score with
// a judge model declares it, so the server gives its items the heavy lane
// (bounded, with workers kept back for light environments) instead of
// letting judge calls of seconds hold every worker; with the executable
// rubric or the rules judge the same environments stay light.
func TestJudgeBackedScoringQueuedHeavy(t *testing.T) {
	judge := judgeutil.Models(judgeutil.Func{Model: "judge", Ask: func(context.Context, string, string) (string, error) { return "yes", nil }})
	for _, c := range []struct {
		id     string
		params map[string]string
		want   env.ScoreCost
	}{
		{"network-logs", nil, env.CostLight},
		{"network-logs", map[string]string{"reward_source": "llm_judge"}, env.CostHeavy},
		{"network-logs", map[string]string{"reward_source": "hybrid"}, env.CostHeavy},
		{"phishing-detection", nil, env.CostLight},
		{"phishing-detection", map[string]string{"reward_source": "hybrid"}, env.CostHeavy},
		{"config-verification", nil, env.CostLight},
		{"config-verification", map[string]string{"reward_source": "llm_judge"}, env.CostHeavy},
		{"redteam-attack", nil, env.CostLight},
		{"redteam-attack", map[string]string{"judge": "llama-guard"}, env.CostHeavy},
		{"redteam-defense", map[string]string{"judge": "classifier"}, env.CostHeavy},
	} {
		s, err := New(Config{Envs: []string{c.id, "network-logs"}, Workers: 4, Logger: quietLog,
			EnvOptions: env.Options{Models: judge}, EnvParams: map[string]map[string]string{c.id: c.params}})
		if err != nil {
			t.Fatalf("%s %v: %v", c.id, c.params, err)
		}
		l := s.envs[c.id].lane
		if l.cost != c.want {
			t.Errorf("%s with %v: lane cost %s, want %s", c.id, c.params, l.cost, c.want)
		}
		if c.want == env.CostHeavy && c.id != "network-logs" && l.limit != 3 {
			t.Errorf("%s with %v: lane limit %d, want the heavy share 3 of 4 workers", c.id, c.params, l.limit)
		}
	}
}
