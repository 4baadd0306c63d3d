package env

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/svbench/svbench/base/clip"
)

// Limits are the bounds every episode shares whatever its environment:
// assistant turns and tool calls. The framework enforces them (the runner
// and the server's sessions wrap each episode in Limit, /v1/score checks a
// finished completion with Check), so an environment declares them in its
// Info and cannot forget to apply one.
type Limits struct {
	// MaxTurns bounds assistant turns; 0 means no bound is known (a run
	// recorded before limits were).
	MaxTurns int `json:"max_turns"`
	// ToolBudget bounds calls to the tools the environment counts (every
	// tool it declares except those with a budget of their own).
	ToolBudget int `json:"tool_budget"`
	// budgeted names the tools counted against ToolBudget.
	budgeted map[string]bool
}

// LimitsOf is info's limits, with maxTurns in place of info.MaxTurns when
// it is positive (a run's --max-turns, a session's max_turns).
func LimitsOf(info Info, maxTurns int) Limits {
	l := Limits{MaxTurns: max(info.MaxTurns, 1), ToolBudget: max(info.ToolBudget, 0)}
	if maxTurns > 0 {
		l.MaxTurns = maxTurns
	}
	for _, t := range info.Tools {
		if !t.OwnBudget {
			if l.budgeted == nil {
				l.budgeted = map[string]bool{}
			}
			l.budgeted[t.Name] = true
		}
	}
	return l
}

// counts reports whether a call to the named tool spends the tool budget.
func (l Limits) counts(name string) bool { return l.budgeted[name] }

// Check says why a finished completion (the messages after the prompt) is
// not an episode these limits allow: more assistant turns than MaxTurns,
// or more counted tool calls than ToolBudget. A live episode would have
// ended or refused the calls there, so scoring such a completion would
// pay for what the environment never lets a policy do. nil when it fits.
func (l Limits) Check(completion []Message) error {
	turns, calls := 0, 0
	for _, m := range completion {
		if m.Role != RoleAssistant {
			continue
		}
		turns++
		for _, c := range m.ToolCalls {
			if l.counts(c.Name) {
				calls++
			}
		}
	}
	if l.MaxTurns > 0 && turns > l.MaxTurns {
		return fmt.Errorf("the completion has %d assistant turns; the environment's max_turns is %d (a live episode ends there)", turns, l.MaxTurns)
	}
	if calls > l.ToolBudget {
		return fmt.Errorf("the completion makes %d tool calls; the environment's tool_budget is %d (a live episode refuses the calls past it)", calls, l.ToolBudget)
	}
	return nil
}

// BudgetExhausted is the tool result a call past the budget gets.
func BudgetExhausted(budget int) string {
	return fmt.Sprintf("tool budget exhausted (%d calls): no more tool calls will run; answer now", budget)
}

// Limit wraps ep so that l holds whatever the environment does: a turn
// that reaches MaxTurns ends the episode ("max_turns"; a turn that calls
// tools then is not run, since no turn is left to read the results in),
// and a counted tool call past ToolBudget is answered with an error
// without reaching the environment. Calls to tools the environment does
// not count (unknown names, tools with their own budget) reach it as they
// are, so it refuses or counts them itself.
func Limit(ep Episode, l Limits) Episode {
	return &limited{Episode: ep, l: l}
}

type limited struct {
	Episode
	l            Limits
	turns, calls int
}

// Step is called once at a time per episode (the runner's loop, a
// session's lock), so the counters need no lock of their own.
func (w *limited) Step(ctx context.Context, msg Message) (StepResult, error) {
	w.turns++
	last := w.l.MaxTurns > 0 && w.turns >= w.l.MaxTurns
	if last && len(msg.ToolCalls) > 0 && len(w.l.budgeted) > 0 {
		return StepResult{Done: true, Reason: "max_turns"}, nil
	}
	var allowed, refused []ToolCall
	for _, tc := range msg.ToolCalls {
		if w.l.counts(tc.Name) {
			if w.calls >= w.l.ToolBudget {
				refused = append(refused, tc)
				continue
			}
			w.calls++
		}
		allowed = append(allowed, tc)
	}
	var res StepResult
	var err error
	if len(refused) == 0 || len(allowed) > 0 {
		inner := msg
		if len(refused) > 0 {
			inner.ToolCalls = allowed
		}
		res, err = w.Episode.Step(ctx, inner)
		if err != nil || res.Done {
			return res, err
		}
	}
	for _, tc := range refused {
		text := BudgetExhausted(w.l.ToolBudget)
		b, _ := json.Marshal(map[string]string{"error": text})
		res.Messages = append(res.Messages, Message{Role: RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: string(b)})
		res.ToolCalls = append(res.ToolCalls, ToolCallRecord{Name: tc.Name, Arguments: clip.Bytes(tc.Arguments, 4096, clip.Ellipsis), Error: text})
	}
	if last {
		res.Done, res.Reason = true, "max_turns"
	}
	return res, nil
}
