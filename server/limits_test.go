package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/svbench/svbench/env"
)

// TestLimitsHoldOnEveryRoute: the toy declares 3 turns and a budget of 4
// lookups. A session answers calls past the budget with an error without
// running them, even several in one message, and ends at the turn limit;
// /v1/score refuses a completion no live episode could have produced, and
// scores one that fits.
func TestLimitsHoldOnEveryRoute(t *testing.T) {
	ls := startServer(t, toyConfig())
	lookups := func(n int) env.Message {
		m := env.Message{Role: env.RoleAssistant}
		for i := range n {
			m.ToolCalls = append(m.ToolCalls, env.ToolCall{ID: fmt.Sprint("c", i), Name: "lookup", Arguments: `{"q":"x"}`})
		}
		return m
	}
	turn := 0
	transcript, score := playSession(t, ls, "toy", "q0", func([]env.Message, []env.Tool) env.Message {
		turn++
		return lookups(3)
	})
	ran, refused := 0, 0
	for _, m := range transcript {
		switch {
		case m.Role != env.RoleTool:
		case strings.Contains(m.Content, "tool budget exhausted (4 calls)"):
			refused++
		case strings.Contains(m.Content, "encyclopedia"):
			ran++
		}
	}
	// Turn 1: 3 run; turn 2: 1 runs, 2 refused; turn 3: the last, ends unrun.
	if turn != 3 || ran != 4 || refused != 2 || score == nil {
		t.Fatalf("%d turns, %d lookups ran, %d refused, score %v; want 3, 4, 2 and a score", turn, ran, refused, score)
	}

	answer := env.Message{Role: env.RoleAssistant, Content: `{"answer": "yes"}`}
	result := env.Message{Role: env.RoleTool, ToolCallID: "c0", Content: "the encyclopedia says: think carefully"}
	for _, c := range []struct {
		name       string
		completion []env.Message
		want       string // "" to be scored
	}{
		{"fits", []env.Message{lookups(2), result, lookups(2), result, answer}, ""},
		{"a turn past max_turns", []env.Message{lookups(1), result, lookups(1), result, lookups(1), result, answer}, "4 assistant turns; the environment's max_turns is 3"},
		{"a call past the budget", []env.Message{lookups(5), result, answer}, "5 tool calls; the environment's tool_budget is 4"},
	} {
		status, body := ls.do(t, "POST", "/v1/score", map[string]any{"items": []any{map[string]any{"env": "toy", "example_id": "q0", "completion": wireAll(c.completion)}}})
		if status != http.StatusOK {
			t.Fatalf("%s: %d %v", c.name, status, body)
		}
		res := body["results"].([]any)[0].(map[string]any)
		e, _ := res["error"].(map[string]any)
		switch {
		case c.want == "" && e != nil:
			t.Errorf("%s: refused: %v", c.name, e)
		case c.want != "" && (e == nil || e["code"] != CodeInvalidItem || !strings.Contains(fmt.Sprint(e["message"]), c.want)):
			t.Errorf("%s: %v, want invalid_item saying %q", c.name, res, c.want)
		}
	}
}

// wireAll is a completion as a trainer sends it: assistant messages in
// OpenAI's form, tool results as they are.
func wireAll(ms []env.Message) []any {
	var out []any
	for _, m := range ms {
		if m.Role == env.RoleAssistant {
			out = append(out, wire(m))
			continue
		}
		out = append(out, map[string]any{"role": m.Role, "tool_call_id": m.ToolCallID, "content": m.Content})
	}
	return out
}
