package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
)

// EpisodeConfig says which model plays an episode and how.
type EpisodeConfig struct {
	Model    string
	Sampling llm.Sampling
	// MaxTurns caps assistant turns; 0 takes the environment's own limit.
	MaxTurns int
}

// ModelError marks a rollout that failed because the model endpoint did, as
// opposed to the model answering badly (which is scored, not an error).
type ModelError struct{ Err error }

func (e *ModelError) Error() string { return "model call: " + e.Err.Error() }
func (e *ModelError) Unwrap() error { return e.Err }

// UnansweredError marks a rollout the server refused for this row alone
// (prompt + max_tokens over the model's context window): the endpoint
// works, the row gets no answer, and it is scored as it stands. Stopping
// the run, or retrying on resume, would repeat the refusal; leaving the row
// out would score a model with a shorter context on its easier rows.
type UnansweredError struct{ Err error }

func (e *UnansweredError) Error() string { return "unanswered: " + e.Err.Error() }
func (e *UnansweredError) Unwrap() error { return e.Err }

// RunEpisode plays one episode to the end: the prompt goes to the model,
// every assistant message goes to the episode, and its replies go back to the
// model, until the episode is done or the turn limit is reached. The rollout
// is returned even on error, with Error set, so nothing that happened is lost.
//
// The episode is closed exactly once however the episode ends (answer,
// error, cancellation, or a panic in the environment, which becomes an
// error), so sandboxes and simulated targets never outlive their episode.
func RunEpisode(ctx context.Context, client llm.Client, e env.Environment, ex env.Example, cfg EpisodeConfig) (ro *env.Rollout, err error) {
	ro = &env.Rollout{Started: time.Now()}
	defer func() { ro.Duration = time.Since(ro.Started) }()

	ep, err := e.Start(ctx, ex)
	if err != nil {
		ro.Error = err.Error()
		return ro, fmt.Errorf("start episode %s: %w", ex.ID, err)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("episode %s turn %d: environment panicked: %v", ex.ID, ro.Turns, p)
			ro.Error = err.Error()
		}
		if cerr := ep.Close(); cerr != nil {
			cerr = fmt.Errorf("episode %s: release resources: %w", ex.ID, cerr)
			if err == nil {
				err = cerr
				ro.Error = cerr.Error()
			}
		}
	}()
	// The framework, not each environment, holds the episode to its
	// limits; the loop's bound is the same limit, so no model call is made
	// for a turn the episode would refuse.
	limits := env.LimitsOf(e.Info(), cfg.MaxTurns)
	maxTurns := limits.MaxTurns
	ep = env.Limit(ep, limits)
	conv := append([]env.Message(nil), ep.Prompt()...)
	tools := ep.Tools()
	for ro.Turns < maxTurns {
		resp, err := client.Chat(ctx, llm.Request{Model: cfg.Model, Messages: conv, Tools: tools, Sampling: cfg.Sampling})
		if err != nil && llm.IsContextLength(err) {
			ro.StopReason = "context_length"
			return ro, &UnansweredError{Err: err}
		}
		if err != nil {
			ro.Error = err.Error()
			return ro, &ModelError{Err: err}
		}
		ro.Turns++
		ro.Usage.Add(resp.Usage)
		msg := resp.Message
		msg.Role = env.RoleAssistant
		conv = append(conv, msg)
		ro.Completion = append(ro.Completion, msg)

		step, err := ep.Step(ctx, msg)
		if err != nil {
			ro.Error = err.Error()
			if errors.Is(err, env.ErrModelCall) {
				return ro, &ModelError{Err: fmt.Errorf("episode %s turn %d: %w", ex.ID, ro.Turns, err)}
			}
			return ro, fmt.Errorf("episode %s turn %d: %w", ex.ID, ro.Turns, err)
		}
		for i := range step.ToolCalls {
			step.ToolCalls[i].Turn = ro.Turns
		}
		ro.ToolCalls = append(ro.ToolCalls, step.ToolCalls...)
		conv = append(conv, step.Messages...)
		ro.Completion = append(ro.Completion, step.Messages...)
		if step.Done {
			ro.StopReason = step.Reason
			return ro, nil
		}
	}
	ro.StopReason = "max_turns"
	return ro, nil
}
