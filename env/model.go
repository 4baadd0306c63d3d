package env

import (
	"context"
	"errors"
)

// Model is a served chat model an environment talks to during an episode or
// while scoring, other than the model under evaluation: a red-team target,
// a safety judge that reads whole conversations, a live adversary. It is
// env's view of a model client, so environments never import one.
// Implementations must be safe for concurrent use.
type Model interface {
	// Chat sends the conversation and returns the reply with the tokens it
	// cost.
	Chat(ctx context.Context, msgs []Message) (Message, Usage, error)
	// Name identifies the model (as the endpoint knows it), for cache keys
	// and metadata.
	Name() string
}

// ErrModelCall marks an episode error caused by a model the environment
// calls (a served target, judge or live attacker) failing: like the
// evaluated model's own endpoint failing, it says nothing about the
// answer, so runners count the rollout as failed and retry it on resume.
var ErrModelCall = errors.New("a model the environment calls failed")

// Model roles in Options.Models.
const (
	ModelTarget   = "target"
	ModelJudge    = "judge"
	ModelAttacker = "attacker"
)

// Redactor is implemented by environments whose transcripts can hold text
// that must never reach disk, such as a target's reply a safety judge found
// unsafe. A runner calls Redact on every finished rollout, scored or not,
// before it writes anything, and writes the returned prompt and completion
// in place of the originals when redacted is true.
type Redactor interface {
	Redact(ctx context.Context, ex Example, ro *Rollout) (prompt, completion []Message, redacted bool)
}

// PolicyModel serves a built-in policy as a Model (a builtin:<policy>
// target, attacker or tournament opponent): it sees the conversation a
// served model would, and reports no tokens.
func PolicyModel(name string, p Policy) Model { return policyModel{name: name, p: p} }

type policyModel struct {
	name string
	p    Policy
}

func (m policyModel) Chat(ctx context.Context, msgs []Message) (Message, Usage, error) {
	msg, err := m.p.Act(ctx, msgs, nil)
	return msg, Usage{}, err
}

func (m policyModel) Name() string { return m.name }
