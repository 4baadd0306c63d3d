package llm

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm/llmtest"
)

func fastClient(t *testing.T, srv *llmtest.Server, mod func(*Config)) *OpenAI {
	t.Helper()
	cfg := Config{BaseURL: srv.BaseURL(), APIKey: "test-key", Timeout: 2 * time.Second,
		MaxRetries: 4, MaxBackoff: 5 * time.Millisecond}
	if mod != nil {
		mod(&cfg)
	}
	c, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func userReq(model string) Request {
	return Request{Model: model, Messages: []env.Message{{Role: env.RoleUser, Content: "hi"}}}
}

func TestChatRetriesTransientFaults(t *testing.T) {
	faults := []struct {
		name  string
		fault llmtest.Fault
	}{
		{"429 with Retry-After", llmtest.RateLimited},
		{"500", llmtest.ServerError},
		{"502 HTML page from a proxy", llmtest.BadGateway},
		{"malformed JSON body", llmtest.MalformedJSON},
		{"empty choices", llmtest.EmptyChoices},
		{"connection reset", llmtest.ConnectionReset},
		{"timeout", llmtest.Hang},
	}
	for _, tc := range faults {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(llmtest.Options{HangFor: 3 * time.Second, Schedule: func(n int64) llmtest.Fault {
				if n < 2 {
					return tc.fault
				}
				return llmtest.OK
			}})
			defer srv.Close()
			c := fastClient(t, srv, func(c *Config) { c.Timeout = 200 * time.Millisecond })
			resp, err := c.Chat(context.Background(), userReq("m"))
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			if !strings.Contains(resp.Message.Content, "Benign") {
				t.Fatalf("content = %q", resp.Message.Content)
			}
			if got := srv.Requests(); got != 3 {
				t.Fatalf("requests = %d, want 3 (2 faults + success)", got)
			}
		})
	}
}

func TestChatGivesUpAfterMaxRetries(t *testing.T) {
	srv := llmtest.New(llmtest.Options{Schedule: func(int64) llmtest.Fault { return llmtest.ServerError }})
	defer srv.Close()
	c := fastClient(t, srv, func(c *Config) { c.MaxRetries = 2 })
	_, err := c.Chat(context.Background(), userReq("m"))
	if err == nil || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Fatalf("err = %v", err)
	}
	if srv.Requests() != 3 {
		t.Fatalf("requests = %d", srv.Requests())
	}
}

func TestChatDoesNotRetryClientErrors(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden,
		http.StatusNotFound, http.StatusUnprocessableEntity} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			srv, requests := rawServer(t, status, "application/json", `{"error":{"message":"no"}}`)
			c := newTestClient(t, Config{BaseURL: srv.URL + "/v1", MaxRetries: 4, MaxBackoff: time.Millisecond})
			_, err := c.Chat(context.Background(), userReq("m"))
			var ee *EndpointError
			if !errors.As(err, &ee) || ee.Status != status {
				t.Fatalf("err = %v, want an EndpointError with status %d", err, status)
			}
			if n := requests.Load(); n != 1 {
				t.Fatalf("%d was retried: %d requests", status, n)
			}
		})
	}
}

func TestRequestBody(t *testing.T) {
	zero := 0.0
	topP := 0.9
	cases := []struct {
		name        string
		model       string
		sampling    Sampling
		want        map[string]any
		mustNotHave []string
	}{
		{"temperature 0 is sent", "qwen", Sampling{Temperature: &zero, MaxTokens: 100},
			map[string]any{"temperature": 0.0, "max_tokens": 100.0}, []string{"max_completion_tokens"}},
		{"reasoning model", "gpt-5-mini", Sampling{Temperature: &zero, TopP: &topP, MaxTokens: 100},
			map[string]any{"max_completion_tokens": 100.0}, []string{"temperature", "max_tokens", "top_p"}},
		{"o-series behind a provider prefix", "openai/o3-mini", Sampling{Temperature: &zero},
			map[string]any{}, []string{"temperature"}},
		{"extra body fields", "qwen", Sampling{Extra: map[string]any{"chat_template_kwargs": map[string]any{"enable_thinking": false}}},
			map[string]any{"chat_template_kwargs": map[string]any{"enable_thinking": false}}, []string{"temperature"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(llmtest.Options{KeepLog: true})
			defer srv.Close()
			c := fastClient(t, srv, nil)
			req := userReq(tc.model)
			req.Sampling = tc.sampling
			if _, err := c.Chat(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			body := srv.Bodies()[0]
			for k, v := range tc.want {
				if !jsonEqual(body[k], v) {
					t.Errorf("%s = %#v, want %#v", k, body[k], v)
				}
			}
			for _, k := range tc.mustNotHave {
				if _, ok := body[k]; ok {
					t.Errorf("%s sent: %#v", k, body[k])
				}
			}
			if got := srv.AuthHeaders()[0]; got != "Bearer test-key" {
				t.Errorf("auth header %q", got)
			}
		})
	}
}

func jsonEqual(a, b any) bool {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		if len(am) != len(bm) {
			return false
		}
		for k := range am {
			if !jsonEqual(am[k], bm[k]) {
				return false
			}
		}
		return true
	}
	return a == b
}

func TestToolCallsRoundTrip(t *testing.T) {
	srv := llmtest.New(llmtest.Options{KeepLog: true, Respond: func(req llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "run_opa", Arguments: `{"paths":["a.yaml"]}`}}}
	}})
	c := fastClient(t, srv, nil)
	req := Request{Model: "m",
		Messages: []env.Message{
			{Role: env.RoleUser, Content: "audit"},
			{Role: env.RoleAssistant, ToolCalls: []env.ToolCall{{ID: "c0", Name: "run_opa", Arguments: "{}"}}},
			{Role: env.RoleTool, ToolCallID: "c0", Content: "[]"},
		},
		Tools: []env.Tool{{Name: "run_opa", Description: "d", Parameters: []byte(`{"type":"object"}`)}},
	}
	resp, err := c.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Name != "run_opa" {
		t.Fatalf("tool calls = %+v", resp.Message.ToolCalls)
	}
	body := srv.Bodies()[0]
	msgs := body["messages"].([]any)
	asst := msgs[1].(map[string]any)
	if _, ok := asst["tool_calls"]; !ok {
		t.Fatalf("assistant tool calls not sent: %v", asst)
	}
	if tool := msgs[2].(map[string]any); tool["tool_call_id"] != "c0" {
		t.Fatalf("tool message = %v", tool)
	}
	if tools := body["tools"].([]any); len(tools) != 1 {
		t.Fatalf("tools = %v", tools)
	}
	if resp.Usage.TotalTokens != 15 {
		t.Fatalf("usage = %+v", resp.Usage)
	}
}

func TestResponseBodyIsBounded(t *testing.T) {
	srv := llmtest.New(llmtest.Options{Respond: func(llmtest.ChatRequest) llmtest.Reply { return llmtest.Reply{Content: strings.Repeat("x", 1<<20)} }})
	defer srv.Close()
	c := fastClient(t, srv, func(c *Config) { c.MaxResponseBytes = 64 << 10 })
	_, err := c.Chat(context.Background(), userReq("m"))
	var tooBig *bodyTooLargeError
	if !errors.As(err, &tooBig) {
		t.Fatalf("err = %v, want body too large", err)
	}
	if srv.Requests() != 1 {
		t.Fatalf("oversized body retried %d times", srv.Requests())
	}
}

func TestInFlightBound(t *testing.T) {
	srv := llmtest.New(llmtest.Options{Latency: 50 * time.Millisecond})
	defer srv.Close()
	c := fastClient(t, srv, func(c *Config) { c.MaxInFlight = 2 })
	start := time.Now()
	errs := make(chan error, 6)
	for range 6 {
		go func() {
			_, err := c.Chat(context.Background(), userReq("m"))
			errs <- err
		}()
	}
	for range 6 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// Six 50 ms requests two at a time take at least three rounds.
	if el := time.Since(start); el < 150*time.Millisecond {
		t.Fatalf("6 requests with 2 slots finished in %s", el)
	}
}

func TestIsReasoningModel(t *testing.T) {
	for m, want := range map[string]bool{
		"gpt-5": true, "gpt-5-mini": true, "o1": true, "o3-mini": true, "o4-mini": true, "openai/gpt-5": true,
		"gpt-4o": false, "gpt-4.1-mini": false, "qwen3-8b": false, "o1x": false, "llama-3.3-70b": false,
	} {
		if got := IsReasoningModel(m); got != want {
			t.Errorf("%s: %v", m, got)
		}
	}
}
