package judgeutil

import (
	"testing"

	"github.com/svbench/svbench/env"
)

// TestDescribe: the description under each reward source is what Apply
// scores: the executable components, the judge alone, or both.
func TestDescribe(t *testing.T) {
	exe := env.NewRubricInfo("default", env.RubricComponent{Name: "accuracy", Weight: 1, Min: 0, Max: 1},
		env.RubricComponent{Name: "cost", Weight: 0.5, Min: -1, Max: 1})
	s := env.Score{Total: 0.5, Components: map[string]float64{"accuracy": 1, "cost": -1}, Weights: map[string]float64{"accuracy": 1, "cost": 0.5}}
	for _, c := range []struct {
		cfg      Config
		n        int
		min, max float64
	}{
		{Config{Source: SourceExecutable}, 2, -0.5, 1.5},
		{Config{Source: SourceJudge}, 1, 0, 1},
		{Config{Source: SourceHybrid, Weight: 0.1}, 3, -0.5, 1.6},
	} {
		ri := c.cfg.Describe(exe)
		if len(ri.Components) != c.n || ri.TotalMin != c.min || ri.TotalMax != c.max || ri.Name != "default" {
			t.Errorf("%s: %+v", c.cfg.Source, ri)
		}
		got, err := c.cfg.Apply(s, func() (float64, error) { return 1, nil })
		if err != nil {
			t.Fatal(err)
		}
		if err := ri.Check(got); err != nil {
			t.Errorf("%s: the applied score leaves the description: %v", c.cfg.Source, err)
		}
	}
}
