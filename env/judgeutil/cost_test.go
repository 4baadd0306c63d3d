package judgeutil

import (
	"testing"

	"github.com/svbench/svbench/env"
)

// TestScoreCost: a reward source that asks the judge makes scoring heavy
// whatever the executable rubric costs; the executable one keeps it.
func TestScoreCost(t *testing.T) {
	for _, c := range []struct {
		source    string
		own, want env.ScoreCost
	}{
		{SourceExecutable, env.CostLight, env.CostLight},
		{SourceExecutable, env.CostHeavy, env.CostHeavy},
		{SourceJudge, env.CostLight, env.CostHeavy},
		{SourceHybrid, env.CostLight, env.CostHeavy},
		{SourceHybrid, env.CostHeavy, env.CostHeavy},
	} {
		if got := (Config{Source: c.source}).ScoreCost(c.own); got != c.want {
			t.Errorf("%s over a %s rubric: %s, want %s", c.source, c.own, got, c.want)
		}
	}
}
