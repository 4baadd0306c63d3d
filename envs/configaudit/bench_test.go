package configaudit

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"gopkg.in/yaml.v3"

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

// uniquePatch returns tool-autofix's patch for r made distinct by n: a
// semantic edit a scanner must look at (a label on the first Kubernetes
// object, a tag-like name suffix on the first Terraform name/bucket
// attribute), so neither the memo nor a rescan that skips unchanged text
// can answer it from an earlier item.
func uniquePatch(tb testing.TB, r scored, n int) *env.Rollout {
	fx := r.ex.Payload.(*fixture)
	content := patchedContent(tb, fx, r.ro)
	if fx.Type == FixtureTF {
		lines := strings.Split(string(content), "\n")
		for i, l := range lines {
			t := strings.TrimSpace(l)
			if (strings.HasPrefix(t, "bucket ") || strings.HasPrefix(t, "name ")) && strings.HasSuffix(t, `"`) {
				lines[i] = strings.TrimSuffix(l, `"`) + fmt.Sprintf(`-u%d"`, n)
				break
			}
		}
		content = []byte(strings.Join(lines, "\n"))
	} else {
		content = k8sFirstDoc(content, func(d *yaml.Node) {
			mset(ensureMap(ensureMap(d, "metadata"), "labels"), "bench-unique", strNode(fmt.Sprintf("u%d", n)))
		})
	}
	out := ParseOutput(r.ro.FinalText())
	return answerRollout(r.ro.Completion[:len(r.ro.Completion)-1], map[string]any{"violations": nonNil(out.Violations), "patch": unifiedDiff(fx.Path, fx.Content, content)})
}

func k8sFirstDoc(content []byte, edit func(*yaml.Node)) []byte {
	first := true
	return k8sEachDoc(content, func(d *yaml.Node) {
		if first {
			edit(d)
			first = false
		}
	})
}

// BenchmarkScoreUniqueMix is what a trainer sends: every item a distinct
// patch, half Kubernetes and half Terraform, scored under the default
// rubric on all cores. Items are built before the timer starts.
func BenchmarkScoreUniqueMix(b *testing.B) {
	e, k8s := autofixRollouts(b, FixtureK8s)
	_, tf := autofixRollouts(b, FixtureTF)
	const pool = 4096
	items := make([]scored, 0, pool)
	for i := range pool {
		src := k8s[i/2%len(k8s)]
		if i%2 == 1 {
			src = tf[i/2%len(tf)]
		}
		items = append(items, scored{src.ex, uniquePatch(b, src, i)})
	}
	ctx := context.Background()
	// The originals are scanned once per example in a training run; warm
	// them so the figure is the per-rollout cost.
	for _, it := range items[:2*max(len(k8s), len(tf))] {
		if _, err := e.Score(ctx, it.ex, it.ro, ""); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	next.Store(int64(2 * max(len(k8s), len(tf))))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1) - 1
			if i >= pool {
				// Past the pool the memo would answer: keep items distinct
				// by building more on the fly (rarely reached).
				src := k8s[int(i)%len(k8s)]
				if i%2 == 1 {
					src = tf[int(i)%len(tf)]
				}
				it := scored{src.ex, uniquePatch(b, src, int(i))}
				if _, err := e.Score(ctx, it.ex, it.ro, ""); err != nil {
					b.Error(err)
				}
				continue
			}
			it := items[i]
			if _, err := e.Score(ctx, it.ex, it.ro, ""); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "items/s")
}
