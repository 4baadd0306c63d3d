package llm

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/svbench/svbench/env"
)

// ResponseItem is one item of a Responses API response's output (or of a
// request's input), as NeMo Gym writes them (NeMoGymResponseOutputItem).
type ResponseItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Summary   []responsePart  `json:"summary"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	CallID    string          `json:"call_id"`
	ID        string          `json:"id"`
	Output    json.RawMessage `json:"output"`
}

type responsePart struct {
	Type    string `json:"type"`
	Text    string `json:"text"`
	Refusal string `json:"refusal"`
}

// partsText reads content given as a string or a list of parts
// (output_text, input_text, reasoning_text, summary_text, refusal).
func partsText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []responsePart
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		if p.Text != "" {
			b.WriteString(p.Text)
		} else {
			b.WriteString(p.Refusal)
		}
	}
	return b.String()
}

func joinText(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "\n" + b
}

// TranscriptFromResponse rebuilds chat messages from Responses API items,
// the one reading svbench serve's NeMo Gym /verify scores with and the
// ingester re-scores with: the items between two tool outputs are one
// assistant message (reasoning items its reasoning, message items its
// content, function calls its tool calls); a function_call_output is a
// tool message; user, system and developer messages stand alone. Item
// types with no place in a transcript (hosted tool calls) are skipped and
// counted.
func TranscriptFromResponse(output []ResponseItem) ([]env.Message, int) {
	var msgs []env.Message
	var cur *env.Message
	names := map[string]string{}
	flush := func() {
		if cur != nil {
			msgs = append(msgs, *cur)
			cur = nil
		}
	}
	open := func() *env.Message {
		if cur == nil {
			cur = &env.Message{Role: env.RoleAssistant}
		}
		return cur
	}
	skipped := 0
	for _, it := range output {
		switch it.Type {
		case "reasoning":
			var b strings.Builder
			for _, p := range it.Summary {
				b.WriteString(p.Text)
			}
			text := b.String()
			if text == "" {
				text = partsText(it.Content)
			}
			m := open()
			m.Reasoning = joinText(m.Reasoning, text)
		case "message", "":
			switch it.Role {
			case "", "assistant":
				m := open()
				m.Content = joinText(m.Content, partsText(it.Content))
			case "user", "system", "developer":
				flush()
				role := env.RoleUser
				if it.Role != "user" {
					role = env.RoleSystem
				}
				msgs = append(msgs, env.Message{Role: role, Content: partsText(it.Content)})
			default:
				skipped++
			}
		case "function_call":
			id := it.CallID
			if id == "" {
				id = it.ID
			}
			names[id] = it.Name
			m := open()
			m.ToolCalls = append(m.ToolCalls, env.ToolCall{ID: id, Name: it.Name, Arguments: it.Arguments})
		case "function_call_output":
			flush()
			msgs = append(msgs, env.Message{Role: env.RoleTool, ToolCallID: it.CallID, Name: names[it.CallID], Content: partsText(it.Output)})
		default:
			skipped++
		}
	}
	flush()
	return msgs, skipped
}
