package envs

import (
	"context"
	"testing"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/runner"
)

// yesJudge answers every verdict with yes.
type yesJudge struct{}

func (yesJudge) Chat(context.Context, []env.Message) (env.Message, env.Usage, error) {
	return env.Message{Role: env.RoleAssistant, Content: "yes"}, env.Usage{}, nil
}
func (yesJudge) Name() string { return "yes-judge" }

// TestRubricDeclarationFollowsOptions: under a non-default reward source
// the description an instance gives (env.RubricDescriber) is what it
// scores: the judge alone, or the executable components plus the judge at
// judge_weight; E2's policy condition without tool_observation. The
// conformance suite checks the default options.
func TestRubricDeclarationFollowsOptions(t *testing.T) {
	ctx := t.Context()
	for _, c := range []struct {
		id     string
		params map[string]string
		comps  int
	}{
		{"e1", map[string]string{"reward_source": "llm_judge"}, 1},
		{"e1", map[string]string{"reward_source": "hybrid", "judge_weight": "0.1"}, 6},
		{"e4", map[string]string{"reward_source": "hybrid"}, 6},
		{"e2", map[string]string{"mode": "policy"}, 2}, // no tool_observation
		{"e2", map[string]string{"reward_source": "hybrid"}, 4},
	} {
		e, err := env.Default.New(c.id, env.Options{Params: c.params, Models: map[string]env.Model{env.ModelJudge: yesJudge{}}})
		if err != nil {
			t.Fatal(err)
		}
		ri := env.RubricInfoOf(e, "")
		if ri == nil || len(ri.Components) != c.comps {
			t.Fatalf("%s %v: description %+v", c.id, c.params, ri)
		}
		ds, err := e.Load(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		pp := e.(env.PolicyProvider)
		for _, name := range e.Info().Policies {
			p, _ := pp.Policy(name)
			for _, ex := range ds.Examples[:3] {
				ro, err := runner.RunEpisode(ctx, llm.Builtin{Policy: p}, e, ex, runner.EpisodeConfig{})
				if err != nil {
					t.Fatal(err)
				}
				sc, err := e.Score(ctx, ex, ro, "")
				if err != nil {
					t.Fatal(err)
				}
				if err := ri.Check(sc); err != nil {
					t.Errorf("%s %v, policy %s, row %s: %v", c.id, c.params, name, ex.ID, err)
				}
			}
		}
	}
}
