package llm

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
	"github.com/svbench/svbench/env"
)

// The oracle: the request as openai-go's own types and encoder wrote it
// before svbench encoded it itself. RequestBody must send the same JSON.
func openaiParams(req Request) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{Model: shared.ChatModel(req.Model)}
	for _, m := range req.Messages {
		p.Messages = append(p.Messages, oracleMessage(m))
	}
	for _, t := range req.Tools {
		var schema map[string]any
		if len(t.Parameters) > 0 {
			_ = json.Unmarshal(t.Parameters, &schema)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        t.Name,
			Description: openai.String(t.Description),
			Parameters:  shared.FunctionParameters(schema),
		}))
	}
	s := req.Sampling
	reasoning := IsReasoningModel(req.Model)
	if s.MaxTokens > 0 {
		if reasoning {
			p.MaxCompletionTokens = openai.Int(int64(s.MaxTokens))
		} else {
			p.MaxTokens = openai.Int(int64(s.MaxTokens))
		}
	}
	if !reasoning {
		if s.Temperature != nil {
			p.Temperature = openai.Float(*s.Temperature)
		}
		if s.TopP != nil {
			p.TopP = openai.Float(*s.TopP)
		}
	}
	if s.Seed != nil {
		p.Seed = openai.Int(*s.Seed)
	}
	if len(s.Extra) > 0 {
		p.SetExtraFields(s.Extra)
	}
	return p
}
func oracleMessage(m env.Message) openai.ChatCompletionMessageParamUnion {
	switch m.Role {
	case env.RoleSystem:
		return openai.SystemMessage(m.Content)
	case env.RoleTool:
		return openai.ToolMessage(m.Content, m.ToolCallID)
	case env.RoleAssistant:
		a := openai.ChatCompletionAssistantMessageParam{}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = openai.String(m.Content)
		}
		for _, tc := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       tc.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: tc.Arguments},
				},
			})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
	default:
		return openai.UserMessage(m.Content)
	}
}

func TestRequestBodyIsOpenAIsEncoding(t *testing.T) {
	temp, topP, seed := 0.0, 0.9, int64(7)
	conv := []env.Message{
		{Role: env.RoleSystem, Content: "You audit <files> & \"quotes\"."},
		{Role: env.RoleUser, Content: "héllo\u2028 \x01"},
		{Role: env.RoleAssistant, Content: "", ToolCalls: []env.ToolCall{{ID: "c1", Name: "run_opa", Arguments: `{"path": "a.yaml"}`}}},
		{Role: env.RoleTool, ToolCallID: "c1", Name: "run_opa", Content: `[]`},
		{Role: env.RoleAssistant, Content: "thinking done", Reasoning: "never sent back", ToolCalls: []env.ToolCall{{ID: "c2", Name: "x", Arguments: ""}}},
		{Role: env.RoleAssistant, Content: ""},
		{Role: "developer", Content: "read as a user turn"},
	}
	tools := []env.Tool{
		{Name: "run_opa", Description: "OPA", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		{Name: "bare", Description: ""},
		{Name: "bad", Description: "d", Parameters: json.RawMessage(`[1,2]`)},
	}
	for _, c := range []struct {
		name string
		req  Request
	}{
		{"plain", Request{Model: "m", Messages: conv[:2]}},
		{"tools and sampling", Request{Model: "Qwen/Qwen3-8B", Messages: conv, Tools: tools, Sampling: Sampling{MaxTokens: 64, Temperature: &temp, TopP: &topP, Seed: &seed}}},
		{"reasoning model", Request{Model: "openai/gpt-5-mini", Messages: conv[:2], Sampling: Sampling{MaxTokens: 64, Temperature: &temp, TopP: &topP}}},
		{"extra fields, one over svbench's own", Request{Model: "m", Messages: conv[:2], Sampling: Sampling{MaxTokens: 8,
			Extra: map[string]any{"chat_template_kwargs": map[string]any{"enable_thinking": false}, "max_tokens": 99}}}},
	} {
		got, err := RequestBody(c.req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want, err := openaiParams(c.req).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil || !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n got  %s\n want %s", c.name, got, want)
		}
	}
}

// TestParseCompletionReadsWhatOpenAIsDecoderRead: the fields svbench takes
// from an answer are the ones openai-go's decoder gave, on the shapes
// servers send, and a body it cannot read is malformed or has no choices.
func TestParseCompletionReadsWhatOpenAIsDecoderRead(t *testing.T) {
	res := &http.Response{StatusCode: 200, Header: http.Header{}}
	for _, body := range []string{
		`{"model":"m","choices":[{"finish_reason":"stop","message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`,
		`{"model":"m","choices":[{"finish_reason":"tool_calls","message":{"content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]}}]}`,
		`{"choices":[{"message":{"content":"","refusal":"no"}}],"usage":{"completion_tokens_details":{"reasoning_tokens":9}}}`,
		`{"choices":[{"message":{"content":"x","reasoning_content":null,"reasoning":"r"}}]}`,
		`{"choices":[{"message":{"content":"<think>a</think>b","reasoning_content":"rc","reasoning":"r"}}]}`,
	} {
		got, err := parseCompletion("u", res, []byte(body))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		var cc openai.ChatCompletion
		if err := cc.UnmarshalJSON([]byte(body)); err != nil {
			t.Fatal(err)
		}
		m := cc.Choices[0].Message
		content := m.Content
		if content == "" {
			content = m.Refusal
		}
		if want := env.CommitAnswers([]env.Message{{Role: env.RoleAssistant, Content: content}})[0].Content; got.Message.Content != want ||
			got.Model != cc.Model || got.FinishReason != string(cc.Choices[0].FinishReason) ||
			got.Usage.PromptTokens != cc.Usage.PromptTokens || got.Usage.TotalTokens != cc.Usage.TotalTokens ||
			got.Usage.ReasoningTokens != cc.Usage.CompletionTokensDetails.ReasoningTokens || len(got.Message.ToolCalls) != len(m.ToolCalls) {
			t.Errorf("%s: read %+v", body, got)
		}
		for i, tc := range m.ToolCalls {
			if g := got.Message.ToolCalls[i]; g.ID != tc.ID || g.Name != tc.Function.Name || g.Arguments != tc.Function.Arguments {
				t.Errorf("%s: call %d read %+v", body, i, g)
			}
		}
	}
	for body, want := range map[string]string{
		`{"choices":[{"message":{"content":"x"}}]`:          "truncated or malformed",
		`{"choices":[],"error":{"message":"overloaded"}}`:   "server error: overloaded",
		`{"object":"error","message":"m"}`:                  "no choices",
		`{"choices":[{"message":{"content":["parts"]}}]} x`: "truncated or malformed",
	} {
		if _, err := parseCompletion("u", res, []byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}

// FuzzParseCompletion: an endpoint's answer is hostile input. Whatever the
// body, parseCompletion returns an error or a message within its bounds,
// never a panic.
func FuzzParseCompletion(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"message":{"content":"hi","tool_calls":[{"id":"a","function":{"name":"f","arguments":{"x":1}}}]}}],"usage":{"prompt_tokens":1.5}}`,
		`{"choices":[{"message":{"content":null,"reasoning_content":"` + strings.Repeat("r", 300<<10) + `"}}]}`,
		`{"choices":null}`, `[]`, ``, `{`, `{"choices":[{"message":7}]}`,
	} {
		f.Add([]byte(s))
	}
	res := &http.Response{StatusCode: 200, Header: http.Header{}}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := parseCompletion("u", res, body)
		if err != nil {
			return
		}
		if len(got.Message.Reasoning) > MaxReasoningBytes+64 || len(got.Message.ToolCalls) > MaxToolCalls ||
			got.Usage.PromptTokens < 0 || got.Usage.CompletionTokens < 0 {
			t.Fatalf("out of bounds: reasoning %d bytes, %d calls, usage %+v", len(got.Message.Reasoning), len(got.Message.ToolCalls), got.Usage)
		}
	})
}
