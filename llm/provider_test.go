package llm

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/svbench/svbench/env"
)

func TestStripProviderPrefix(t *testing.T) {
	for _, tc := range []struct {
		model, base, want string
		stripped          bool
	}{
		{"openai/gpt-4o-mini", "", "gpt-4o-mini", true},
		{"openai/gpt-4o-mini", "https://api.openai.com/v1", "gpt-4o-mini", true},
		{"openai/gpt-4o-mini", "https://openrouter.ai/api/v1", "openai/gpt-4o-mini", false}, // a router wants the prefix
		{"openai/gpt-4o-mini", "http://localhost:8000/v1", "openai/gpt-4o-mini", false},
		{"anthropic/claude-x", "https://api.anthropic.com/v1", "claude-x", true},
		{"Qwen/Qwen3-8B", "", "Qwen/Qwen3-8B", false}, // an organisation, not a provider
		{"openai/", "", "openai/", false},
		{"gpt-4o", "", "gpt-4o", false},
		// Inspect's engines: the prefix is never part of a served name.
		{"vllm/Qwen/Qwen3-8B", "http://localhost:8000/v1", "Qwen/Qwen3-8B", true},
		{"hf/meta-llama/Llama-3.1-8B-Instruct", "http://10.0.0.5:8000/v1", "meta-llama/Llama-3.1-8B-Instruct", true},
		{"ollama/qwen3:8b", "http://localhost:11434/v1", "qwen3:8b", true},
		{"together/meta-llama/Llama-3-8b", "http://localhost:8000/v1", "together/meta-llama/Llama-3-8b", false}, // a 404 lists what is served
	} {
		got, ok := StripProviderPrefix(tc.model, tc.base)
		if got != tc.want || ok != tc.stripped {
			t.Errorf("StripProviderPrefix(%q, %q) = %q, %v; want %q, %v", tc.model, tc.base, got, ok, tc.want, tc.stripped)
		}
	}
}

// TestNotFoundListsServedModels: a 404 for the model name (a provider
// prefix a local server does not know, a typo) names what the server
// serves, from its /models list, and which one was probably meant.
func TestNotFoundListsServedModels(t *testing.T) {
	var lists int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/models":
			lists++
			w.Write([]byte(`{"object":"list","data":[{"id":"meta-llama/Llama-3-8b","object":"model"},{"id":"Qwen/Qwen3-8B","object":"model"}]}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":{"message":"The model does not exist.","type":"NotFoundError","code":404}}`))
		}
	}))
	defer srv.Close()
	c, err := NewOpenAI(Config{BaseURL: srv.URL + "/v1", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ model, want string }{
		{"together/meta-llama/Llama-3-8b", `The server serves "meta-llama/Llama-3-8b": pass -m meta-llama/Llama-3-8b.`},
		{"qwen3-8b", "The server serves (GET /models): meta-llama/Llama-3-8b, Qwen/Qwen3-8B."},
	} {
		_, err := c.Chat(context.Background(), Request{Model: tc.model, Messages: []env.Message{{Role: "user", Content: "hi"}}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v\nwant it to contain %q", tc.model, err, tc.want)
		}
	}
	if lists != 1 {
		t.Errorf("/models asked %d times, want once per client", lists)
	}
}
