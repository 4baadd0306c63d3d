package env

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// recordingEpisode runs every tool call it is handed and remembers which.
type recordingEpisode struct {
	ran   []string
	steps int
}

func (*recordingEpisode) Prompt() []Message { return nil }
func (*recordingEpisode) Tools() []Tool     { return nil }
func (*recordingEpisode) Close() error      { return nil }

func (e *recordingEpisode) Step(_ context.Context, m Message) (StepResult, error) {
	e.steps++
	if len(m.ToolCalls) == 0 {
		return StepResult{Done: true, Reason: "answered"}, nil
	}
	var res StepResult
	for _, c := range m.ToolCalls {
		e.ran = append(e.ran, c.ID)
		res.Messages = append(res.Messages, Message{Role: RoleTool, ToolCallID: c.ID, Content: "ok"})
		res.ToolCalls = append(res.ToolCalls, ToolCallRecord{Name: c.Name})
	}
	return res, nil
}

var limitsInfo = Info{MaxTurns: 4, ToolBudget: 2, Tools: []Tool{{Name: "scan"}, {Name: "check", OwnBudget: true}}}

func calls(names ...string) Message {
	m := Message{Role: RoleAssistant}
	for i, n := range names {
		m.ToolCalls = append(m.ToolCalls, ToolCall{ID: n + string(rune('a'+i)), Name: n})
	}
	return m
}

func TestLimitHoldsTheBudgetAndTurns(t *testing.T) {
	type turn struct {
		msg                Message
		ran                []string // IDs the environment ran this turn
		refused            int      // budget refusals the framework answered
		done               bool
		reason             string
		environmentStepped bool
	}
	cases := []struct {
		name  string
		info  Info
		turns []turn
	}{
		{"calls past the budget in one message are refused, in order", limitsInfo, []turn{
			{msg: calls("scan", "scan", "scan", "scan"), ran: []string{"scana", "scanb"}, refused: 2, environmentStepped: true},
			{msg: calls("scan"), refused: 1},
			{msg: Message{Role: RoleAssistant, Content: "answer"}, done: true, reason: "answered", environmentStepped: true},
		}},
		{"unknown tools and tools with their own budget reach the environment uncounted", limitsInfo, []turn{
			{msg: calls("rm_rf", "check", "check", "scan"), ran: []string{"rm_rfa", "checkb", "checkc", "scand"}, environmentStepped: true},
			{msg: calls("scan", "check", "scan"), ran: []string{"scana", "checkb"}, refused: 1, environmentStepped: true},
		}},
		{"a tool call on the last turn ends the episode without running", limitsInfo, []turn{
			{msg: calls("check"), ran: []string{"checka"}, environmentStepped: true},
			{msg: calls("check"), ran: []string{"checka"}, environmentStepped: true},
			{msg: calls("check"), ran: []string{"checka"}, environmentStepped: true},
			{msg: calls("scan"), done: true, reason: "max_turns"},
		}},
		{"an answer on the last turn is the environment's", limitsInfo, []turn{
			{msg: calls("scan"), ran: []string{"scana"}, environmentStepped: true},
			{msg: calls("scan"), ran: []string{"scana"}, environmentStepped: true},
			{msg: calls("scan"), refused: 1},
			{msg: Message{Role: RoleAssistant, Content: "answer"}, done: true, reason: "answered", environmentStepped: true},
		}},
		{"an environment without tools ends at its turn limit", Info{MaxTurns: 2}, []turn{
			{msg: calls("x"), ran: []string{"xa"}, environmentStepped: true},
			{msg: calls("x"), ran: []string{"xa"}, done: true, reason: "max_turns", environmentStepped: true},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inner := &recordingEpisode{}
			ep := Limit(inner, LimitsOf(c.info, 0))
			for i, tu := range c.turns {
				before, steps := len(inner.ran), inner.steps
				res, err := ep.Step(context.Background(), tu.msg)
				if err != nil {
					t.Fatal(err)
				}
				if got := inner.ran[before:]; !slices.Equal(got, tu.ran) && len(got)+len(tu.ran) > 0 {
					t.Errorf("turn %d: environment ran %v, want %v", i+1, got, tu.ran)
				}
				if stepped := inner.steps > steps; stepped != tu.environmentStepped {
					t.Errorf("turn %d: environment stepped %v, want %v", i+1, stepped, tu.environmentStepped)
				}
				refused := 0
				for _, m := range res.Messages {
					if strings.Contains(m.Content, "tool budget exhausted (2 calls)") {
						refused++
					}
				}
				recorded := 0
				for _, r := range res.ToolCalls {
					if r.Error != "" {
						recorded++
					}
				}
				if refused != tu.refused || recorded != tu.refused {
					t.Errorf("turn %d: %d refusals in messages, %d in records; want %d", i+1, refused, recorded, tu.refused)
				}
				if !tu.done && len(res.Messages) != len(tu.msg.ToolCalls) {
					t.Errorf("turn %d: %d tool results for %d calls", i+1, len(res.Messages), len(tu.msg.ToolCalls))
				}
				if res.Done != tu.done || res.Reason != tu.reason {
					t.Errorf("turn %d: done %v %q, want %v %q", i+1, res.Done, res.Reason, tu.done, tu.reason)
				}
			}
		})
	}
}

func TestLimitsOf(t *testing.T) {
	if l := LimitsOf(Info{}, 0); l.MaxTurns != 1 || l.ToolBudget != 0 {
		t.Errorf("an environment declaring nothing: %+v, want one turn and no tool calls", l)
	}
	if l := LimitsOf(limitsInfo, 2); l.MaxTurns != 2 || l.ToolBudget != 2 || !l.counts("scan") || l.counts("check") || l.counts("rm_rf") {
		t.Errorf("override and counted tools: %+v", l)
	}
}

func TestLimitsCheckACompletion(t *testing.T) {
	answer := Message{Role: RoleAssistant, Content: "answer"}
	result := Message{Role: RoleTool, Content: "ok"}
	cases := []struct {
		name       string
		completion []Message
		want       string
	}{
		{"within both", []Message{calls("scan", "check", "check"), result, calls("scan"), result, answer}, ""},
		{"unknown and own-budget tools are not counted", []Message{calls("check", "check", "check", "rm_rf"), result, answer}, ""},
		{"one counted call too many", []Message{calls("scan", "scan"), result, calls("scan"), result, answer}, "3 tool calls; the environment's tool_budget is 2"},
		{"one turn too many", []Message{calls("check"), result, calls("check"), result, calls("check"), result, calls("check"), result, answer}, "5 assistant turns; the environment's max_turns is 4"},
	}
	l := LimitsOf(limitsInfo, 0)
	for _, c := range cases {
		err := l.Check(c.completion)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestToolCallReadsBothForms: a completion's calls keep their names in
// OpenAI's form as in svbench's, so /v1/score counts them against the
// budget as a session does.
func TestToolCallReadsBothForms(t *testing.T) {
	for _, c := range []struct {
		in   string
		want ToolCall
	}{
		{`{"id": "a", "name": "scan", "arguments": "{\"path\": \"x\"}"}`, ToolCall{"a", "scan", `{"path": "x"}`}},
		{`{"id": "a", "type": "function", "function": {"name": "scan", "arguments": "{\"path\": \"x\"}"}}`, ToolCall{"a", "scan", `{"path": "x"}`}},
		{`{"id": "a", "type": "function", "function": {"name": "scan", "arguments": {"path": "x"}}}`, ToolCall{"a", "scan", `{"path": "x"}`}},
		{`{"id": "a", "name": "scan"}`, ToolCall{"a", "scan", ""}},
		{`{"id": "a", "name": "scan", "arguments": null}`, ToolCall{"a", "scan", ""}},
	} {
		var got Completion
		if err := got.UnmarshalJSON([]byte(`[{"role": "assistant", "tool_calls": [` + c.in + `]}]`)); err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if len(got.Messages) != 1 || len(got.Messages[0].ToolCalls) != 1 || got.Messages[0].ToolCalls[0] != c.want {
			t.Errorf("%s: %+v, want %+v", c.in, got.Messages, c.want)
		}
	}
	var bad Completion
	if err := bad.UnmarshalJSON([]byte(`[{"role": "assistant", "tool_calls": [{"function": 7}]}]`)); err == nil {
		t.Error("a call whose function is a number was read")
	}
}
