package artifact

import (
	"errors"
	"testing"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/env/judgeutil"
)

type judgedToyConfig struct {
	judgeutil.Settings
	ToolBudget int `param:"tool_budget" min:"0" max:"10" doc:"calls"`
}

type plainToyConfig struct {
	MaxTurns int `param:"max_turns" min:"1" max:"10" doc:"turns"`
}

func init() {
	unused := func(env.Options) (env.Environment, error) { return nil, errors.New("unused") }
	env.Register(env.Spec{ID: "artifact-judged-toy", Config: judgedToyConfig{Settings: judgeutil.DefaultSettings(), ToolBudget: 6}, New: unused})
	env.Register(env.Spec{ID: "artifact-plain-toy", Config: plainToyConfig{MaxTurns: 4}, New: unused})
}

// TestRewardSourceIsReadFromTheConfiguration: the reward source comes from
// the run's configuration decoded into the environment's own, whether the
// run recorded its configuration or only the parameters it was given.
func TestRewardSourceIsReadFromTheConfiguration(t *testing.T) {
	for _, c := range []struct {
		name string
		m    Metadata
		want string
	}{
		{"recorded configuration", Metadata{Environment: "artifact-judged-toy", Config: env.ConfigValues{"reward_source": []byte(`"hybrid"`), "judge_weight": []byte("0.5"), "tool_budget": []byte("6")}}, "hybrid"},
		{"an old run's parameters", Metadata{Environment: "artifact-judged-toy", Params: map[string]string{"reward_source": "llm_judge"}}, "llm_judge"},
		{"the default", Metadata{Environment: "artifact-judged-toy"}, "executable"},
		{"an environment without a judge", Metadata{Environment: "artifact-plain-toy"}, "executable"},
		{"an environment this build lacks", Metadata{Environment: "elsewhere", Params: map[string]string{"reward_source": "hybrid"}}, "hybrid"},
	} {
		if got := c.m.RewardSource(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestEpisodeLimits: recorded numbers win; a run recorded before them is
// read from its --max-turns and parameters, and what it never said is nil.
func TestEpisodeLimits(t *testing.T) {
	show := func(p *int) any {
		if p == nil {
			return nil
		}
		return *p
	}
	for _, c := range []struct {
		name          string
		m             Metadata
		turns, budget any
	}{
		{"recorded", Metadata{Environment: "artifact-judged-toy", Limits: &env.Limits{MaxTurns: 10, ToolBudget: 2}}, 10, 2},
		{"old run: the budget parameter's default", Metadata{Environment: "artifact-judged-toy"}, nil, 6},
		{"old run: --max-turns over the parameter", Metadata{Environment: "artifact-plain-toy", Launch: Launch{MaxTurns: 2}}, 2, nil},
		{"old run: the turn parameter", Metadata{Environment: "artifact-plain-toy", Params: map[string]string{"max_turns": "7"}}, 7, nil},
		{"old run of an environment this build lacks", Metadata{Environment: "elsewhere"}, nil, nil},
	} {
		turns, budget := c.m.EpisodeLimits()
		if show(turns) != c.turns || show(budget) != c.budget {
			t.Errorf("%s: %v %v, want %v %v", c.name, show(turns), show(budget), c.turns, c.budget)
		}
	}
}
