package env

import "context"

// SingleTurn is the Episode of a task answered in one assistant message.
type SingleTurn struct {
	Messages []Message
}

// NewSingleTurn builds the usual system + user prompt.
func NewSingleTurn(system, user string) *SingleTurn {
	var msgs []Message
	if system != "" {
		msgs = append(msgs, Message{Role: RoleSystem, Content: system})
	}
	msgs = append(msgs, Message{Role: RoleUser, Content: user})
	return &SingleTurn{Messages: msgs}
}

// Prompt returns the opening messages.
func (s *SingleTurn) Prompt() []Message { return s.Messages }

// Tools offers none.
func (s *SingleTurn) Tools() []Tool { return nil }

// Step ends the episode on the first answer.
func (s *SingleTurn) Step(context.Context, Message) (StepResult, error) {
	return StepResult{Done: true, Reason: "answered"}, nil
}

// Close holds nothing to release.
func (s *SingleTurn) Close() error { return nil }
