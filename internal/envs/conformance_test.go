package envs

import (
	"testing"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envtest"
	_ "github.com/svbench/svbench/envtest/toyparity" // the seventh environment, a fixture svbench knows nothing else about
)

// TestConformance runs the conformance suite on every registered
// environment: a new one gets it by being linked here.
func TestConformance(t *testing.T) {
	for _, id := range env.Default.IDs() {
		t.Run(id, func(t *testing.T) {
			t.Parallel()
			opts := envtest.Options{}
			e, err := env.Default.New(id, env.Options{})
			if err != nil {
				t.Fatal(err)
			}
			// Environments whose scoring runs programs (E3's sandboxed
			// tests) play fewer rows, and the solvability check plays one
			// row of each generated family and every hand-written row
			// (SVBENCH_FULL_SOLVABLE=1 plays them all).
			if c, ok := e.(env.ScoreCoster); ok && c.ScoreCost() == env.CostHeavy {
				opts.Rows, opts.ProbeRows, opts.SolvableFamilies = 2, 1, 1
				if testing.Short() {
					opts.Rows = 1
				}
			}
			envtest.Run(t, id, opts)
		})
	}
}

// FuzzAnswers fuzzes every registered environment's answer parser through
// Score: any text is scored to finite numbers or refused, never a panic.
func FuzzAnswers(f *testing.F) {
	for _, s := range envtest.Hostile {
		f.Add(uint8(0), s)
	}
	f.Add(uint8(1), `{"label": "Malicious", "confidence": "0.9_0"}`)
	ids := env.Default.IDs()
	exs := map[string]env.Example{}
	envs := map[string]env.Environment{}
	for _, id := range ids {
		e, err := env.Default.New(id, env.Options{})
		if err != nil {
			f.Fatal(err)
		}
		if c, ok := e.(env.ScoreCoster); ok && c.ScoreCost() == env.CostHeavy {
			continue // programs per answer: too slow to fuzz here
		}
		ds, err := e.Load(f.Context(), "")
		if err != nil {
			f.Fatal(err)
		}
		envs[id], exs[id] = e, ds.Examples[0]
	}
	f.Fuzz(func(t *testing.T, which uint8, text string) {
		id := ids[int(which)%len(ids)]
		e, ok := envs[id]
		if !ok {
			return
		}
		ro := &env.Rollout{Completion: []env.Message{{Role: env.RoleAssistant, Content: text}}, Turns: 1}
		sc, err := e.Score(t.Context(), exs[id], ro, "")
		if err == nil && (sc.Total != sc.Total || sc.Total > 1e9 || sc.Total < -1e9) {
			t.Fatalf("%s: reward %v for %q", id, sc.Total, text)
		}
	})
}
