package codevuln

import (
	"context"

	"github.com/svbench/svbench/env"
)

// ReferencePolicy answers with the task's reference fix as a diff, read
// from the example's task rather than the prompt (builtin:reference-fix's
// way): the answer every row must reward as solved (envtest.Referencer,
// issue #41).
func (e *Env) ReferencePolicy(ex env.Example) (env.Policy, error) {
	t, err := e.taskOf(ex)
	if err != nil {
		return nil, err
	}
	msg := answerMsg(ApplyableDiff(Files(t.Src), Files(t.Fixed()), t.Files), true, "Reference fix.")
	return env.PolicyFunc(func(context.Context, []env.Message, []env.Tool) (env.Message, error) { return msg, nil }), nil
}

// InertPolicies are builtin:noop (an empty diff: the vulnerable code
// unchanged) and an empty reply (envtest.Inerter). Neither may solve a
// row.
func (e *Env) InertPolicies(env.Example) map[string]env.Policy {
	noop, _ := e.Policy(PolicyNoop)
	empty := env.PolicyFunc(func(context.Context, []env.Message, []env.Tool) (env.Message, error) {
		return env.Message{Role: env.RoleAssistant}, nil
	})
	return map[string]env.Policy{PolicyNoop: noop, "empty": empty}
}
