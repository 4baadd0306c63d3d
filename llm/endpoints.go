package llm

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Endpoint says where a model alias is served and which environment variable
// holds its key. Keys themselves never appear in the file.
type Endpoint struct {
	BaseURL   string `json:"base_url"`
	APIKeyEnv string `json:"api_key_env"`
	// Model is the name the endpoint knows the model by (default: the alias).
	Model string `json:"model"`
}

// Endpoints maps model aliases to endpoints, like the reference's endpoints
// registry. The file is YAML or JSON:
//
//	endpoints:
//	  qwen3-8b:
//	    base_url: http://localhost:8000/v1
//	    api_key_env: VLLM_API_KEY
//	    model: Qwen/Qwen3-8B
type Endpoints map[string]Endpoint

// LoadEndpoints reads an endpoints file.
func LoadEndpoints(path string) (Endpoints, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("endpoints file: %w", err)
	}
	var doc struct {
		Endpoints Endpoints `json:"endpoints"`
	}
	if err := yaml.UnmarshalStrict(b, &doc); err != nil {
		return nil, fmt.Errorf("endpoints file %s: %w (expected a top-level \"endpoints:\" map of alias → {base_url, api_key_env, model})", path, err)
	}
	for alias, ep := range doc.Endpoints {
		if ep.BaseURL == "" {
			return nil, fmt.Errorf("endpoints file %s: endpoint %q: field \"base_url\" missing", path, alias)
		}
		if strings.Contains(strings.ToLower(ep.APIKeyEnv), "sk-") {
			return nil, fmt.Errorf("endpoints file %s: endpoint %q: api_key_env must name an environment variable, not hold a key", path, alias)
		}
	}
	return doc.Endpoints, nil
}

// Aliases lists the configured aliases, sorted.
func (e Endpoints) Aliases() []string {
	out := slices.Sorted(maps.Keys(e))
	return out
}
