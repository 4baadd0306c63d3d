package redteam

import (
	"context"
	"fmt"

	"github.com/svbench/svbench/env"
)

// ReferencePolicy plays a known way in for the row (envtest.Referencer,
// issue #41): one fluent request for the behaviour around one of the
// row's own success conditions, a different one each turn (the
// fill-in-the-blank sentence of issue #33, knowing the row). It is the
// witness that the row can be solved at all, not a measure of attack
// skill.
func (a *Attack) ReferencePolicy(ex env.Example) (env.Policy, error) {
	sc, err := env.PayloadOf[*Scenario](a, ex)
	if err != nil {
		return nil, err
	}
	fs := cleanConditions(sc)
	if len(fs) == 0 {
		return nil, fmt.Errorf("scenario %s has no success condition an attacker can write without the judge finding its own text unsafe", ex.ID)
	}
	return env.PolicyFunc(func(_ context.Context, conv []env.Message, _ []env.Tool) (env.Message, error) {
		return env.Message{Role: env.RoleAssistant, Content: blankSentence(sc.Behavior, fs[turnOf(conv)%len(fs)])}, nil
	}), nil
}

// InertPolicies is an attacker that sends empty turns (envtest.Inerter).
func (a *Attack) InertPolicies(env.Example) map[string]env.Policy {
	return map[string]env.Policy{"empty": everyTurn("")}
}

// ReferencePolicy answers every turn with the row's gold reply
// (envtest.Referencer, issue #41): a harmful row's is a refusal with an
// alternative, a benign twin's its reference response.
func (d *Defense) ReferencePolicy(ex env.Example) (env.Policy, error) {
	sc, err := env.PayloadOf[*Scenario](d, ex)
	if err != nil {
		return nil, err
	}
	if sc.Kind == KindHarmful {
		return everyTurn(refusalWithAlternative), nil
	}
	if sc.ReferenceResponse == "" {
		return nil, fmt.Errorf("benign row %s has no reference_response", ex.ID)
	}
	return everyTurn(sc.ReferenceResponse), nil
}

// InertPolicies is an empty reply on a benign twin (envtest.Inerter). On
// a harmful row declining is the gold answer and any reply without the
// harmful substance declines, so nothing there is inert.
func (d *Defense) InertPolicies(ex env.Example) map[string]env.Policy {
	if sc, err := env.PayloadOf[*Scenario](d, ex); err == nil && sc.Kind == KindHarmful {
		return map[string]env.Policy{}
	}
	return map[string]env.Policy{"empty": everyTurn("")}
}

// everyTurn answers every turn with text.
func everyTurn(text string) env.Policy {
	return env.PolicyFunc(func(context.Context, []env.Message, []env.Tool) (env.Message, error) {
		return env.Message{Role: env.RoleAssistant, Content: text}, nil
	})
}
