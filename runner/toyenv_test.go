package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/svbench/svbench/env"
)

// toyEnv is a minimal single-turn environment: the answer is a word, and a
// completion is right when it contains it.
type toyEnv struct{ rows int }

func (t toyEnv) Info() env.Info {
	return env.Info{ID: "toy", Version: "0", Rubrics: []string{"default"}, DefaultRubric: "default", MaxTurns: 1}
}

func (t toyEnv) dataset() *env.Dataset {
	ds := &env.Dataset{Info: env.DatasetInfo{ID: "embedded:toy", Revision: "sha256:0000000000000000", Rows: t.rows}}
	for i := range t.rows {
		ans := "alpha"
		if i%2 == 1 {
			ans = "beta"
		}
		ds.Examples = append(ds.Examples, env.Example{
			ID:     fmt.Sprintf("toy-%d", i),
			Prompt: []env.Message{{Role: env.RoleUser, Content: fmt.Sprintf("question %d", i)}},
			Answer: json.RawMessage(fmt.Sprintf("%q", ans)),
		})
	}
	return ds
}

func (t toyEnv) Load(context.Context, string) (*env.Dataset, error) { return t.dataset(), nil }

func (t toyEnv) ParseExample(row json.RawMessage) (env.Example, error) {
	var r struct {
		Answer string `json:"answer"`
	}
	err := json.Unmarshal(row, &r)
	return env.Example{Answer: json.RawMessage(fmt.Sprintf("%q", r.Answer))}, err
}

func (t toyEnv) Start(_ context.Context, ex env.Example) (env.Episode, error) {
	return &env.SingleTurn{Messages: ex.Prompt}, nil
}

func (t toyEnv) Score(_ context.Context, ex env.Example, r *env.Rollout, _ string) (env.Score, error) {
	var ans string
	_ = json.Unmarshal(ex.Answer, &ans)
	acc := 0.0
	if strings.Contains(r.FinalText(), ans) {
		acc = 1
	}
	return env.Score{Total: acc, Components: map[string]float64{"accuracy": acc}, Solved: acc == 1}, nil
}
