package env

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Role is the author of a chat message, as in the OpenAI chat format.
type Role string

// The chat roles svbench understands.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// ToolCall is one function call requested by the assistant. Arguments is the
// raw JSON text the model produced: it is hostile input and only the tool that
// receives it decides whether it parses.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// UnmarshalJSON reads a tool call in svbench's flat form {"id", "name",
// "arguments"} or in OpenAI's, which trainers send: {"id", "type":
// "function", "function": {"name", "arguments"}}, the arguments JSON text
// or an object. Every route (a session's step, /v1/score's completion, a
// results file) reads a call's name the same way, so none counts a call
// it cannot name.
func (c *ToolCall) UnmarshalJSON(b []byte) error {
	var w struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Args     json.RawMessage `json:"arguments"`
		Function *struct {
			Name string          `json:"name"`
			Args json.RawMessage `json:"arguments"`
		} `json:"function"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	name, args := w.Name, w.Args
	if w.Function != nil {
		name, args = w.Function.Name, w.Function.Args
	}
	text := strings.TrimSpace(string(args))
	var str string
	if json.Unmarshal(args, &str) == nil {
		text = str
	}
	*c = ToolCall{ID: w.ID, Name: name, Arguments: text}
	return nil
}

// Message is one chat turn. Tool results carry the ToolCallID they answer.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
	// Reasoning is the thinking text a reasoning parser split off the answer
	// (vLLM/SGLang/DeepSeek `reasoning_content`). It is kept apart from
	// Content: rubrics decide whether an answer found only here counts.
	Reasoning  string     `json:"reasoning_content,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
}

// Tool is a function the model may call, described in the OpenAI function
// format (Parameters is a JSON Schema object).
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// OwnBudget marks a tool whose calls the environment bounds itself
	// (E2's check_policy) rather than spending the episode's tool budget.
	OwnBudget bool `json:"-"`
}

// OpenAIFunction renders the tool as an OpenAI `tools[]` entry.
func (t Tool) OpenAIFunction() map[string]any {
	return map[string]any{
		"type": "function",
		"function": map[string]any{
			"name":        t.Name,
			"description": t.Description,
			"parameters":  t.Parameters,
		},
	}
}

// LastAssistantText is the content of the last assistant message, the text the
// reference parsers read. It is empty when there is no assistant message.
func LastAssistantText(msgs []Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleAssistant {
			return msgs[i].Content
		}
	}
	return ""
}

// Completion is what a scorer receives from outside svbench: either a plain
// string (the final assistant text) or a list of messages. It unmarshals from
// both JSON forms.
type Completion struct {
	Messages []Message
}

// CompletionText wraps a plain completion string.
func CompletionText(s string) Completion {
	return Completion{Messages: []Message{{Role: RoleAssistant, Content: s}}}
}

// UnmarshalJSON accepts a JSON string, a list of messages, or a single message
// object.
func (c *Completion) UnmarshalJSON(b []byte) error {
	trimmed := strings.TrimSpace(string(b))
	switch {
	case trimmed == "null":
		c.Messages = nil
		return nil
	case strings.HasPrefix(trimmed, `"`):
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = CompletionText(s)
		return nil
	case strings.HasPrefix(trimmed, "["):
		var msgs []Message
		if err := json.Unmarshal(b, &msgs); err != nil {
			return fmt.Errorf("completion messages: %w", err)
		}
		for i, m := range msgs {
			if m.Role == "" {
				return fmt.Errorf("completion message %d: field \"role\" missing", i)
			}
		}
		c.Messages = msgs
		return nil
	case strings.HasPrefix(trimmed, "{"):
		var m Message
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("completion message: %w", err)
		}
		if m.Role == "" {
			m.Role = RoleAssistant
		}
		c.Messages = []Message{m}
		return nil
	}
	return fmt.Errorf("completion must be a string or a list of messages")
}

// MarshalJSON writes the messages form.
func (c Completion) MarshalJSON() ([]byte, error) {
	if c.Messages == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(c.Messages)
}
