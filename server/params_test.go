package server

import (
	"maps"
	"sync"
	"testing"

	"github.com/svbench/svbench/env"
)

// TestEnvParams: parameters for one environment reach its constructor only,
// merged over those for all; an environment that is not served or does not
// exist is refused at start-up.
type deepConfig struct {
	Depth int    `param:"depth" min:"1" max:"9" doc:"how deep"`
	Mode  string `param:"mode" doc:"how"`
}

type flatConfig struct {
	Mode string `param:"mode" doc:"how"`
}

func TestEnvParams(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]map[string]string{}
	decoded := map[string]any{}
	record := func(id string) func(env.Options) (env.Environment, error) {
		return func(o env.Options) (env.Environment, error) {
			mu.Lock()
			defer mu.Unlock()
			seen[id] = maps.Clone(o.Params)
			decoded[id] = o.Config
			return toyEnv{}, nil
		}
	}
	r := env.NewRegistry()
	r.Register(env.Spec{ID: "deep", Aliases: []string{"d1"}, New: record("deep"), Config: deepConfig{Depth: 1}})
	r.Register(env.Spec{ID: "flat", New: record("flat"), Config: flatConfig{}})

	cfg := Config{Registry: r, Logger: quietLog,
		EnvOptions: env.Options{Params: map[string]string{"mode": "fast"}},
		EnvParams:  map[string]map[string]string{"d1": {"depth": "3"}}}
	if _, err := New(cfg); err != nil {
		t.Fatal(err)
	}
	if got := seen["deep"]; len(got) != 2 || got["depth"] != "3" || got["mode"] != "fast" {
		t.Errorf("deep got %v, want depth=3 mode=fast", got)
	}
	if got := seen["flat"]; len(got) != 1 || got["mode"] != "fast" {
		t.Errorf("flat got %v, want mode=fast only", got)
	}
	if got := decoded["deep"]; got != (deepConfig{Depth: 3, Mode: "fast"}) {
		t.Errorf("deep's constructor got the configuration %#v, want depth 3 and mode fast decoded by the registry", got)
	}
	if got := cfg.EnvOptions.Params; len(got) != 1 {
		t.Errorf("the shared parameters were modified: %v", got)
	}

	for name, ep := range map[string]map[string]map[string]string{
		"undeclared": {"flat": {"depth": "3"}},
		"bad value":  {"deep": {"depth": "99"}},
		"unknown":    {"e9": {"depth": "3"}},
		"not served": {"deep": {"depth": "3"}, "flat": {"mode": "x"}},
	} {
		cfg := Config{Registry: r, Logger: quietLog, EnvParams: ep}
		if name == "not served" {
			cfg.Envs = []string{"deep"}
		}
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted EnvParams %v", name, ep)
		}
	}
}
