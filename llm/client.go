// Package llm talks to chat models: any OpenAI-compatible endpoint (OpenAI,
// vLLM, SGLang, Ollama, OpenRouter) and svbench's in-process built-in
// policies, behind one Client interface.
package llm

import (
	"context"

	"github.com/svbench/svbench/env"
)

// Sampling holds generation parameters. Nil pointers are not sent, so a
// temperature of 0 is distinguishable from "unset".
type Sampling struct {
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
	Seed        *int64   `json:"seed,omitempty"`
	// Extra fields are merged into the request body verbatim (vLLM's
	// chat_template_kwargs, OpenRouter's provider routing, …).
	Extra map[string]any `json:"extra,omitempty"`
}

// Request is one chat completion call.
type Request struct {
	Model    string
	Messages []env.Message
	Tools    []env.Tool
	Sampling Sampling
}

// Response is the assistant's message plus accounting.
type Response struct {
	Message      env.Message
	Usage        env.Usage
	FinishReason string
	// Model is the model that answered, as the endpoint names it.
	Model string
	// Cached is set when the response was replayed from the response cache
	// rather than sampled: its Usage was paid for by an earlier run.
	Cached bool `json:"-"`
	// CacheRejected is set on a sampled response that replaced a cache
	// entry which failed its checks (edited, oversized, naming a tool the
	// request did not offer, …), so usage accounting can count them.
	CacheRejected bool `json:"-"`
}

// Client produces the next assistant message.
type Client interface {
	Chat(ctx context.Context, req Request) (Response, error)
}

// Builtin runs an environment's in-process policy as if it were a model.
type Builtin struct {
	Policy env.Policy
}

// Chat asks the policy for the next message.
func (b Builtin) Chat(ctx context.Context, req Request) (Response, error) {
	msg, err := b.Policy.Act(ctx, req.Messages, req.Tools)
	if err != nil {
		return Response{}, err
	}
	msg.Role = env.RoleAssistant
	return Response{Message: msg, FinishReason: "stop", Model: req.Model}, nil
}

// Sent is the sampling part of the request body for model, as Params builds
// it: what the endpoint was actually asked, for run metadata. Reasoning
// models (gpt-5, o-series) get no temperature or top_p and take
// max_completion_tokens.
func (s Sampling) Sent(model string) map[string]any {
	out := map[string]any{}
	reasoning := IsReasoningModel(model)
	if s.MaxTokens > 0 {
		if reasoning {
			out["max_completion_tokens"] = s.MaxTokens
		} else {
			out["max_tokens"] = s.MaxTokens
		}
	}
	if !reasoning {
		if s.Temperature != nil {
			out["temperature"] = *s.Temperature
		}
		if s.TopP != nil {
			out["top_p"] = *s.TopP
		}
	}
	if s.Seed != nil {
		out["seed"] = *s.Seed
	}
	for k, v := range s.Extra {
		out[k] = v
	}
	return out
}
