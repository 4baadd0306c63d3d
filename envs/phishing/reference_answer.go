package phishing

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/svbench/svbench/env"
)

// ReferencePolicy answers the row's gold label with full confidence and,
// for phishing, the strongest indicators the analyser finds in the email
// (as builtin:indicators cites them): the answer every row must reward as
// solved (envtest.Referencer, issue #41).
func (e *Environment) ReferencePolicy(ex env.Example) (env.Policy, error) {
	p, err := env.PayloadOf[*payload](e, ex)
	if err != nil {
		return nil, err
	}
	if p == nil || p.gold == "" {
		return nil, fmt.Errorf("example %s: answer missing or not a label", ex.ID)
	}
	an, _ := p.analysis()
	v := Verdict{Label: p.gold, Confidence: 1, Evidence: []Item{}}
	if p.gold == LabelPhishing {
		v.Evidence = Classify(an).Evidence
		if v.Evidence == nil {
			v.Evidence = []Item{}
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return referenceReply(string(b)), nil
}

// InertPolicies are the answers that decide nothing: an abstention and an
// empty reply (envtest.Inerter). Neither may solve a row.
func (e *Environment) InertPolicies(env.Example) map[string]env.Policy {
	return map[string]env.Policy{
		"abstain": referenceReply(`{"label": "Abstain", "confidence": 0, "evidence": []}`),
		"empty":   referenceReply(""),
	}
}

// referenceReply answers every turn with text.
func referenceReply(text string) env.Policy {
	return env.PolicyFunc(func(context.Context, []env.Message, []env.Tool) (env.Message, error) {
		return env.Message{Role: env.RoleAssistant, Content: text}, nil
	})
}
