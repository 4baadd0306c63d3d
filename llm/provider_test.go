package llm

import "testing"

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
	} {
		got, ok := StripProviderPrefix(tc.model, tc.base)
		if got != tc.want || ok != tc.stripped {
			t.Errorf("StripProviderPrefix(%q, %q) = %q, %v; want %q, %v", tc.model, tc.base, got, ok, tc.want, tc.stripped)
		}
	}
}
