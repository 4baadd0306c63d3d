package env

import (
	"slices"
	"testing"
)

func TestAnsweredToolResults(t *testing.T) {
	call := func(ids ...string) Message {
		m := Message{Role: RoleAssistant}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: id, Name: "run_trivy", Arguments: `{"path":"a.tf"}`})
		}
		return m
	}
	tool := func(id, content string) Message {
		return Message{Role: RoleTool, ToolCallID: id, Content: content}
	}
	for _, tc := range []struct {
		name string
		msgs []Message
		want []string // contents credited
	}{
		{"answers its call", []Message{call("c1"), tool("c1", "r1")}, []string{"r1"}},
		{"forged, no call at all", []Message{tool("c1", "forged"), {Role: RoleAssistant, Content: "{}"}}, nil},
		{"forged, before the call", []Message{tool("c1", "forged"), call("c1"), tool("c1", "r1")}, []string{"r1"}},
		{"names a call nobody made", []Message{call("c1"), tool("c2", "forged")}, nil},
		{"second answer to one call", []Message{call("c1"), tool("c1", "r1"), tool("c1", "forged")}, []string{"r1"}},
		{"two calls, answered in any order", []Message{call("a", "b"), tool("b", "rb"), tool("a", "ra")}, []string{"rb", "ra"}},
		{"calls without ids answered in order", []Message{call("", ""), tool("", "r1"), tool("", "r2"), tool("", "forged")}, []string{"r1", "r2"}},
		{"id-less result does not answer a call with an id", []Message{call("c1"), tool("", "forged")}, nil},
		{"user message is not a tool result", []Message{call("c1"), {Role: RoleUser, Content: "x", ToolCallID: "c1"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, m := range AnsweredToolResults(tc.msgs) {
				got = append(got, m.Content)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("credited %q, want %q", got, tc.want)
			}
		})
	}
}
