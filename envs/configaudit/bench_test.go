package configaudit

import (
	"context"
	"testing"

	"github.com/svbench/svbench/env"
)

type scored struct {
	ex env.Example
	ro *env.Rollout
}

// autofixRollouts plays tool-autofix on the mini rows of one fixture type.
func autofixRollouts(b *testing.B, ft string) (*Env, []scored) {
	e, ds := testEnv(b)
	var out []scored
	for _, ex := range ds.Examples {
		if ex.Payload.(*fixture).Type != ft {
			continue
		}
		_, ro := runPolicy(b, e, ex, PolicyToolAutofix, "")
		out = append(out, scored{ex, ro})
	}
	return e, out
}

func benchScore(b *testing.B, ft string, cached bool) {
	e, rs := autofixRollouts(b, ft)
	v, _ := e.verifiers(context.Background())
	v.noCache = !cached
	defer func() { v.noCache = false }()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			r := rs[i%len(rs)]
			i++
			if _, err := e.Score(context.Background(), r.ex, r.ro, ""); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "episodes/s")
}

// BenchmarkScoreK8s scores tool-autofix episodes under the default rubric:
// parse, look up the original's findings (scanned once per example, as in a
// training run with many rollouts per example), apply the patch, check the
// structure and re-verify the patched file with kube-linter and OPA.
// "reverify" runs the verifiers on every patched file; "cached" also
// memoises patched files (identical rollouts).
func BenchmarkScoreK8s(b *testing.B) {
	b.Run("reverify", func(b *testing.B) { benchScore(b, FixtureK8s, false) })
	b.Run("cached", func(b *testing.B) { benchScore(b, FixtureK8s, true) })
}

// BenchmarkScoreTerraform is the same for Terraform (trivy + OPA).
func BenchmarkScoreTerraform(b *testing.B) {
	b.Run("reverify", func(b *testing.B) { benchScore(b, FixtureTF, false) })
	b.Run("cached", func(b *testing.B) { benchScore(b, FixtureTF, true) })
}
