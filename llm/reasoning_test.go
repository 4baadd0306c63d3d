package llm

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm/llmtest"
)

func TestReasoningIsSplitFromContent(t *testing.T) {
	cases := []struct {
		name          string
		field         string
		reply         llmtest.Reply
		wantContent   string
		wantReasoning string
		wantTokens    int64
	}{
		{"reasoning_content (vLLM, SGLang, DeepSeek, Qwen3)", "reasoning_content",
			llmtest.Reply{Content: "Malicious", Reasoning: "port scan from one host", ReasoningTokens: 42},
			"Malicious", "port scan from one host", 42},
		{"reasoning (OpenRouter, newer Ollama and vLLM)", "reasoning",
			llmtest.Reply{Content: "Benign", Reasoning: "ordinary DNS traffic", ReasoningTokens: 7},
			"Benign", "ordinary DNS traffic", 7},
		{"null content: thinking ran out of tokens", "reasoning_content",
			llmtest.Reply{Reasoning: "still thinking"},
			"", "still thinking", 0},
		{"no reasoning", "", llmtest.Reply{Content: "plain"}, "plain", "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(llmtest.Options{ReasoningField: tc.field,
				Respond: func(llmtest.ChatRequest) llmtest.Reply { return tc.reply }})
			defer srv.Close()
			resp, err := fastClient(t, srv, nil).Chat(context.Background(), userReq("qwen3"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Content != tc.wantContent || resp.Message.Reasoning != tc.wantReasoning {
				t.Fatalf("content %q reasoning %q, want %q and %q", resp.Message.Content, resp.Message.Reasoning, tc.wantContent, tc.wantReasoning)
			}
			if resp.Usage.ReasoningTokens != tc.wantTokens || resp.Usage.CompletionTokens != 5+tc.wantTokens {
				t.Fatalf("usage = %+v, want %d reasoning tokens", resp.Usage, tc.wantTokens)
			}
		})
	}
}

func TestReasoningFieldShapes(t *testing.T) {
	msg := func(extra string) string {
		return `{"id":"c","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,` +
			`"message":{"role":"assistant","content":"answer"` + extra + `},"finish_reason":"stop"}]}`
	}
	cases := []struct {
		name, extra, want string
	}{
		{"both fields: reasoning_content wins", `,"reasoning":"second","reasoning_content":"first"`, "first"},
		{"empty reasoning_content falls back", `,"reasoning_content":"","reasoning":"second"`, "second"},
		{"null", `,"reasoning_content":null`, ""},
		{"object is not text", `,"reasoning":{"effort":"high"}`, ""},
		{"escapes decoded", `,"reasoning_content":"a\u00e9\nb"`, "aé\nb"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := rawServer(t, 200, "application/json", msg(tc.extra))
			c := newTestClient(t, Config{BaseURL: srv.URL + "/v1"})
			resp, err := c.Chat(context.Background(), userReq("m"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Reasoning != tc.want || resp.Message.Content != "answer" {
				t.Fatalf("reasoning %q content %q, want %q", resp.Message.Reasoning, resp.Message.Content, tc.want)
			}
		})
	}
}

func TestTruncateReasoning(t *testing.T) {
	cases := []struct {
		name       string
		in         string
		wantPrefix int // bytes of in kept
	}{
		{"short", "thinking", 8},
		{"exactly the cap", strings.Repeat("a", MaxReasoningBytes), MaxReasoningBytes},
		{"one byte over", strings.Repeat("a", MaxReasoningBytes+1), MaxReasoningBytes},
		// "é" is 2 bytes starting at MaxReasoningBytes-1: cutting at the cap
		// would split it.
		{"rune across the cap", strings.Repeat("a", MaxReasoningBytes-1) + "é" + strings.Repeat("b", 10), MaxReasoningBytes - 1},
		{"multi-byte text", strings.Repeat("€", MaxReasoningBytes), MaxReasoningBytes - MaxReasoningBytes%3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := boundReasoning(tc.in)
			if !utf8.ValidString(got) {
				t.Fatal("result is not valid UTF-8")
			}
			if !strings.HasPrefix(got, tc.in[:tc.wantPrefix]) {
				t.Fatalf("kept prefix wrong")
			}
			rest := got[tc.wantPrefix:]
			if tc.wantPrefix == len(tc.in) {
				if rest != "" {
					t.Fatalf("untruncated text changed: suffix %q", rest)
				}
				return
			}
			want := "\n[… truncated " + strconv.Itoa(len(tc.in)-tc.wantPrefix) + " bytes]"
			if rest != want {
				t.Fatalf("marker %q, want %q", rest, want)
			}
		})
	}
}

func TestLongReasoningIsBoundedEndToEnd(t *testing.T) {
	long := strings.Repeat("€", MaxReasoningBytes) // 3 × the cap in bytes
	srv := llmtest.New(llmtest.Options{Respond: func(llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Content: "done", Reasoning: long}
	}})
	defer srv.Close()
	resp, err := fastClient(t, srv, nil).Chat(context.Background(), userReq("m"))
	if err != nil {
		t.Fatal(err)
	}
	r := resp.Message.Reasoning
	if len(r) > MaxReasoningBytes+64 || !utf8.ValidString(r) || !strings.Contains(r, "\n[… truncated ") {
		t.Fatalf("reasoning: %d bytes, valid UTF-8 %v, tail %q", len(r), utf8.ValidString(r), r[max(0, len(r)-40):])
	}
	if resp.Message.Content != "done" {
		t.Fatalf("content = %q", resp.Message.Content)
	}
}

func TestReasoningIsNotSentBack(t *testing.T) {
	srv := llmtest.New(llmtest.Options{KeepLog: true})
	defer srv.Close()
	req := Request{Model: "deepseek-reasoner", Messages: []env.Message{
		{Role: env.RoleUser, Content: "classify"},
		{Role: env.RoleAssistant, Content: "Benign", Reasoning: "long chain of thought",
			ToolCalls: []env.ToolCall{{ID: "c1", Name: "lookup", Arguments: "{}"}}},
		{Role: env.RoleTool, ToolCallID: "c1", Content: "[]"},
	}}
	if _, err := fastClient(t, srv, nil).Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	asst := srv.Bodies()[0]["messages"].([]any)[1].(map[string]any)
	for _, k := range []string{"reasoning_content", "reasoning"} {
		if v, ok := asst[k]; ok {
			t.Errorf("%s sent back: %v", k, v)
		}
	}
	if asst["content"] != "Benign" {
		t.Errorf("assistant content = %v", asst["content"])
	}
}
