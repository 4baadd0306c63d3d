package server

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/svbench/svbench/env"
)

// OpenEnvAction is step's data: one assistant message.
type OpenEnvAction struct {
	wireMessage
	Metadata map[string]any `json:"metadata,omitempty"`
}

// OpenEnvCallTool is OpenEnv's CallToolAction: {"type": "call_tool",
// "tool_name", "arguments"}.
type OpenEnvCallTool struct {
	Type     string          `json:"type"`
	ToolName string          `json:"tool_name"`
	Args     json.RawMessage `json:"arguments"`
	Metadata map[string]any  `json:"metadata,omitempty"`
}

// openEnvMessageKeys are the fields a message action may carry: the
// assistant message svbench reads, plus the OpenAI message fields a
// trainer passing its whole choice.message along would include, which
// carry nothing svbench scores. Any other key means the sender meant
// something svbench does not do, and guessing that it is an answer is
// what scored {"type": "list_tools"} as an empty one.
var openEnvMessageKeys = map[string]bool{
	"content": true, "tool_calls": true, "reasoning_content": true, "reasoning": true, "metadata": true,
	"role": true, "name": true, "refusal": true, "annotations": true, "audio": true,
}

// openEnvCallToolKeys are CallToolAction's fields (OpenEnv forbids others).
var openEnvCallToolKeys = map[string]bool{"type": true, "tool_name": true, "arguments": true, "metadata": true}

// openEnvAction is a step's action, read: exactly one of listTools, call
// or msg.
type openEnvAction struct {
	listTools bool
	call      *OpenEnvCallTool
	msg       *env.Message
}

// openEnvAnswerSchemas caches compiled output schemas by their text.
var openEnvAnswerSchemas sync.Map // string -> *jsonschema.Schema (nil: none usable)

// openEnvAnswerSchema is the environment's answer schema, compiled, when
// it names required fields; an object that only satisfies "type":
// "object" says nothing about being meant as an answer.
func openEnvAnswerSchema(raw json.RawMessage) *jsonschema.Schema {
	if len(raw) == 0 {
		return nil
	}
	if v, ok := openEnvAnswerSchemas.Load(string(raw)); ok {
		sch, _ := v.(*jsonschema.Schema)
		return sch
	}
	var sch *jsonschema.Schema
	var top struct {
		Required []string `json:"required"`
	}
	if json.Unmarshal(raw, &top) == nil && len(top.Required) > 0 {
		if doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw)); err == nil {
			c := jsonschema.NewCompiler()
			if c.AddResource("answer.schema.json", doc) == nil {
				sch, _ = c.Compile("answer.schema.json")
			}
		}
	}
	openEnvAnswerSchemas.Store(string(raw), sch)
	return sch
}

// parseOpenEnvAction reads an action as the shapes svbench documents:
// OpenEnv's list_tools and call_tool, one assistant message, and the
// environment's own answer object (output_schema) sent as the action
// itself, which is what verifiers' OpenEnv taskset makes of a reply that
// is a JSON object. Everything else is a validation error, never an
// answer. answer is the episode's output schema (nil: no episode).
func parseOpenEnvAction(data json.RawMessage, answer *jsonschema.Schema) (openEnvAction, *APIError) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || fields == nil {
		return openEnvAction{}, apiErrorf(CodeInvalidItem, "action: want a JSON object (an assistant message, {\"type\": \"list_tools\"} or {\"type\": \"call_tool\", \"tool_name\", \"arguments\"}), got %.60s", data)
	}
	if raw, ok := fields["type"]; ok {
		var typ string
		if err := json.Unmarshal(raw, &typ); err != nil {
			return openEnvAction{}, apiErrorf(CodeInvalidItem, "action field \"type\": want a string, got %.40s", raw)
		}
		switch typ {
		case "list_tools":
			for _, k := range slices.Sorted(maps.Keys(fields)) { // the first unknown field, every time
				if k != "type" && k != "metadata" {
					return openEnvAction{}, apiErrorf(CodeInvalidItem, "list_tools action: unknown field %q", k)
				}
			}
			return openEnvAction{listTools: true}, nil
		case "call_tool":
			for _, k := range slices.Sorted(maps.Keys(fields)) {
				if !openEnvCallToolKeys[k] {
					return openEnvAction{}, apiErrorf(CodeInvalidItem, "call_tool action: unknown field %q (fields: type, tool_name, arguments, metadata)", k)
				}
			}
			var c OpenEnvCallTool
			if err := json.Unmarshal(data, &c); err != nil {
				return openEnvAction{}, apiErrorf(CodeInvalidItem, "call_tool action: %v", err)
			}
			if c.ToolName == "" {
				return openEnvAction{}, apiErrorf(CodeInvalidItem, "call_tool action: field \"tool_name\" missing")
			}
			args := strings.TrimSpace(string(c.Args))
			if args == "" || args == "null" {
				c.Args = json.RawMessage("{}")
			} else if args[0] != '{' {
				return openEnvAction{}, apiErrorf(CodeInvalidItem, "call_tool action: field \"arguments\" must be a JSON object, got %.40s", args)
			}
			return openEnvAction{call: &c}, nil
		}
		return openEnvAction{}, apiErrorf(CodeInvalidItem,
			"action type %q is not one svbench serves: send {\"type\": \"list_tools\"}, {\"type\": \"call_tool\", \"tool_name\", \"arguments\"} or an assistant message {\"content\", \"tool_calls\"}", typ)
	}
	known := false
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if !openEnvMessageKeys[k] {
			if answer != nil {
				inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
				if err == nil && answer.Validate(inst) == nil {
					return openEnvAction{msg: &env.Message{Role: env.RoleAssistant, Content: strings.TrimSpace(string(data))}}, nil
				}
			}
			return openEnvAction{}, apiErrorf(CodeInvalidItem,
				"action field %q is not an assistant message's and the action is not this environment's answer object (GET /v1/environments: output_schema): an answer is {\"content\": \"…\"} or that object, tool calls are \"tool_calls\" or {\"type\": \"call_tool\"}", k)
		}
		if k == "content" || k == "tool_calls" {
			known = true
		}
	}
	if !known {
		return openEnvAction{}, apiErrorf(CodeInvalidItem, "action carries neither \"content\" nor \"tool_calls\": an answer is {\"content\": \"…\"}")
	}
	if raw, ok := fields["role"]; ok {
		var role env.Role
		if json.Unmarshal(raw, &role) != nil || (role != "" && role != env.RoleAssistant) {
			return openEnvAction{}, apiErrorf(CodeInvalidItem, "action field \"role\": an action is the assistant's message, got %.40s", raw)
		}
	}
	var act OpenEnvAction
	if err := json.Unmarshal(data, &act); err != nil {
		return openEnvAction{}, apiErrorf(CodeInvalidItem, "action: %v", err)
	}
	msg, aerr := act.message()
	if aerr != nil {
		return openEnvAction{}, aerr
	}
	return openEnvAction{msg: &msg}, nil
}
