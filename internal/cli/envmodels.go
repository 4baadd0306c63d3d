package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
)

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
				return env.PolicyModel(name, p), nil
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

// roleSampling is how an environment's models are asked, by role. Judges
// answer at temperature 0 with a budget that fits a verdict (a yes/no, or
// Llama Guard's two lines) and a short preamble; a target answers
// deterministically; an attacker is sampled, as a live adversary varies.
func roleSampling(role string) llm.Sampling {
	zero := 0.0
	switch role {
	case env.ModelJudge:
		return llm.Sampling{Temperature: &zero, MaxTokens: 512}
	case env.ModelTarget:
		return llm.Sampling{Temperature: &zero, MaxTokens: 1024}
	}
	return llm.Sampling{MaxTokens: 512}
}

// judge builds the judge model (--judge-model) an environment's llm_judge
// or hybrid reward source, or its safety judge, asks; nil when none is
// named. A judge is a served model: a built-in policy judges nothing.
func (f *modelFlags) judge(name string, concurrency int) (env.Model, error) {
	if name == "" {
		return nil, nil
	}
	if strings.HasPrefix(name, "builtin:") {
		return nil, usagef("--judge-model must be a served model, not %s", name)
	}
	m, err := f.envModel(name, env.ModelJudge, concurrency, roleSampling(env.ModelJudge))
	if err != nil {
		return nil, fmt.Errorf("judge model: %w", err)
	}
	return m, nil
}

// envModels builds Options.Models: the judge, and every model the
// environment's role flags (env.ParamFlag.Role: E5's --target-model, E6's
// --attacker-model) recorded in params.
func (f *modelFlags) envModels(conf env.Configured, judgeModel string, concurrency int) (map[string]env.Model, error) {
	out := map[string]env.Model{}
	judge, err := f.judge(judgeModel, concurrency)
	if err != nil {
		return nil, err
	}
	if judge != nil {
		out[env.ModelJudge] = judge
	}
	// The name was resolved once, by configureEnv: this is the canonical
	// id's own entry.
	spec, err := env.Default.Lookup(conf.ID)
	if err != nil {
		return nil, usageError(err)
	}
	params := conf.Given
	for _, fl := range spec.Flags {
		if fl.Role == "" || params[fl.Param] == "" {
			continue
		}
		m, err := f.envModel(params[fl.Param], fl.Role, concurrency, roleSampling(fl.Role))
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", fl.Name, err)
		}
		out[fl.Role] = m
	}
	return out, nil
}

// newEnvOpts builds an environment by any accepted name.
func newEnvOpts(name string, o env.Options) (env.Environment, error) {
	c, err := configureEnv(name, o.Params)
	if err != nil {
		return nil, err
	}
	return buildEnv(c, o)
}

// configureEnv resolves the environment's name and decodes its parameters
// (the registry's one decoder); a refusal is a usage error.
func configureEnv(name string, params map[string]string) (env.Configured, error) {
	if name == "" {
		return env.Configured{}, usagef("--env is required (one of: %s)", strings.Join(env.Default.IDs(), ", "))
	}
	c, err := env.Default.Configure(name, params)
	if err != nil {
		return env.Configured{}, usageError(err)
	}
	return c, nil
}

// buildEnv builds a configured environment with o's models.
func buildEnv(c env.Configured, o env.Options) (env.Environment, error) {
	e, err := env.Default.Build(c, o)
	if errors.Is(err, env.ErrBadParam) {
		return nil, usageError(err)
	}
	return e, err
}
