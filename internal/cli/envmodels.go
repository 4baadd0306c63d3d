package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
)

// Parameters through which the CLI's --target-model and --attacker-model
// reach environments that play against a second model (E5, E6). Keeping
// them as parameters records them in metadata, so --resume restores them
// and compare treats another opponent as another budget.
const (
	paramTargetModel   = "target_model"
	paramAttackerModel = "attacker_model"
)

// policyModel serves a built-in policy as an env.Model (a builtin:<policy>
// target or attacker): it sees the conversation a served model would.
type policyModel struct {
	name string
	p    env.Policy
}

func (m policyModel) Chat(ctx context.Context, msgs []env.Message) (env.Message, env.Usage, error) {
	msg, err := m.p.Act(ctx, msgs, nil)
	return msg, env.Usage{}, err
}

func (m policyModel) Name() string { return m.name }

// builtinModel finds builtin:<policy> among every environment's policies.
func builtinModel(name string) (env.Model, error) {
	policy := strings.TrimPrefix(name, "builtin:")
	var known []string
	for _, id := range env.Default.IDs() {
		e, err := env.Default.New(id, env.Options{})
		if err != nil {
			continue
		}
		if pp, ok := e.(env.PolicyProvider); ok {
			if p, ok := pp.Policy(policy); ok {
				return policyModel{name: name, p: p}, nil
			}
		}
		known = append(known, e.Info().Policies...)
	}
	return nil, usagef("no built-in policy %q (known: %s)", policy, strings.Join(known, ", "))
}

// envModel resolves a model an environment talks to: builtin:<policy>, an
// alias from --endpoints, or a model on --base-url.
// role (env.ModelTarget, ModelAttacker, ModelJudge: the same strings as
// the artifact's usage roles) files its tokens and cache entries.
func (f *modelFlags) envModel(name, role string, concurrency int, sampling llm.Sampling) (env.Model, error) {
	if strings.HasPrefix(name, "builtin:") {
		return builtinModel(name)
	}
	m, err := f.endpointModel(name, concurrency, "template-attacker")
	if err != nil {
		return nil, err
	}
	client := m.Client
	if f.wrap != nil {
		client = f.wrap(client, m.BaseURL, role)
	}
	return llm.EnvModel{Client: client, Model: m.Effective, Sampling: sampling}, nil
}

// envModels builds Options.Models from the target_model / attacker_model
// parameters and the judge model. Judges are asked at temperature 0 with a
// short answer budget (Llama Guard's verdict is two lines).
func (f *modelFlags) envModels(params map[string]string, judgeModel string, concurrency int) (map[string]env.Model, error) {
	zero := 0.0
	out := map[string]env.Model{}
	for role, spec := range map[string]struct {
		name string
		s    llm.Sampling
	}{
		env.ModelTarget:   {params[paramTargetModel], llm.Sampling{Temperature: &zero, MaxTokens: 1024}},
		env.ModelAttacker: {params[paramAttackerModel], llm.Sampling{MaxTokens: 512}},
		env.ModelJudge:    {judgeModel, llm.Sampling{Temperature: &zero, MaxTokens: 64}},
	} {
		if spec.name == "" {
			continue
		}
		if role == env.ModelJudge && strings.HasPrefix(spec.name, "builtin:") {
			return nil, usagef("--judge-model must be a served model, not %s", spec.name)
		}
		m, err := f.envModel(spec.name, role, concurrency, spec.s)
		if err != nil {
			return nil, fmt.Errorf("%s model: %w", role, err)
		}
		out[role] = m
	}
	return out, nil
}

// newEnvOpts builds an environment by any accepted name.
func newEnvOpts(name string, o env.Options) (env.Environment, error) {
	if name == "" {
		return nil, usagef("--env is required (one of: %s)", strings.Join(env.Default.IDs(), ", "))
	}
	if _, err := env.Default.Resolve(name); err != nil {
		return nil, usageError{err}
	}
	e, err := env.Default.New(name, o)
	if errors.Is(err, env.ErrBadParam) {
		return nil, usageError{err}
	}
	return e, err
}

// setModelParam records --target-model / --attacker-model as a parameter,
// refusing one that contradicts a resumed run's.
func setModelParam(params map[string]string, key, flag, value string) (map[string]string, error) {
	if value == "" {
		return params, nil
	}
	if params == nil {
		params = map[string]string{}
	}
	if prev, ok := params[key]; ok && prev != value {
		return nil, usagef("--%s %s, but the run used %s", flag, value, prev)
	}
	params[key] = value
	return params, nil
}
