package netlogs

import (
	"context"

	"github.com/svbench/svbench/env"
)

// ReferencePolicy answers the row's gold label with full confidence: the
// answer every row must reward as solved (envtest.Referencer, issue #41).
func (e *Environment) ReferencePolicy(ex env.Example) (env.Policy, error) {
	p, err := env.PayloadOf[payload](e, ex)
	if err != nil {
		return nil, err
	}
	return fixedReply(answerJSON(p.answer, 1, "reference answer: the row's gold label")), nil
}

// InertPolicies are the answers that decide nothing: an abstention and an
// empty reply (envtest.Inerter). Neither may solve a row.
func (e *Environment) InertPolicies(env.Example) map[string]env.Policy {
	return map[string]env.Policy{
		"abstain": fixedReply(answerJSON(LabelAbstain, 0, "no decision")),
		"empty":   fixedReply(""),
	}
}

// fixedReply answers every turn with text.
func fixedReply(text string) env.Policy {
	return env.PolicyFunc(func(context.Context, []env.Message, []env.Tool) (env.Message, error) {
		return env.Message{Role: env.RoleAssistant, Content: text}, nil
	})
}
