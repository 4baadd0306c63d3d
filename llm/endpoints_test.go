package llm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadEndpoints(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, body, wantErr string
	}{
		{"valid", "endpoints:\n  q:\n    base_url: http://localhost:8000/v1\n    api_key_env: VLLM_KEY\n    model: Qwen/Qwen3-8B\n", ""},
		{"missing base_url", "endpoints:\n  q:\n    api_key_env: K\n", `field "base_url" missing`},
		{"key instead of variable", "endpoints:\n  q:\n    base_url: http://x\n    api_key_env: sk-abc\n", "must name an environment variable"},
		{"unknown field", "endpoints:\n  q:\n    base_url: http://x\n    apikey: k\n", "unknown field"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name+".yaml")
			os.WriteFile(p, []byte(tc.body), 0o600)
			eps, err := LoadEndpoints(p)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if eps["q"].Model != "Qwen/Qwen3-8B" || eps["q"].APIKeyEnv != "VLLM_KEY" {
					t.Fatalf("%+v", eps)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}
