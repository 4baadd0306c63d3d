package configaudit

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/svbench/svbench/verify/tfscan"

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
// rubric on all cores. "prepared" is how svbench scans; "trivy-scanner"
// re-verifies Terraform with trivy's own scanner, as svbench did before
// tfscan prepared the checks' queries, in the same run. cpu-ms/item (GC included) is what 2 idle cores turn into
// items/s (2000 / cpu-ms), even when the benchmark shares a busy machine.
func BenchmarkScoreUniqueMix(b *testing.B) {
	e, k8s := autofixRollouts(b, FixtureK8s)
	_, tf := autofixRollouts(b, FixtureTF)
	ctx := context.Background()
	v, err := e.verifiers(ctx)
	if err != nil {
		b.Fatal(err)
	}
	trivyScanner, err := tfscan.New(tfscan.Options{TrivyScanner: true, StrictHCL: true})
	if err != nil {
		b.Fatal(err)
	}
	prepared := v.trivy
	const pool = 2048
	items := make([]scored, 0, pool)
	for i := range pool {
		src := k8s[i/2%len(k8s)]
		if i%2 == 1 {
			src = tf[i/2%len(tf)]
		}
		items = append(items, scored{src.ex, uniquePatch(b, src, i)})
	}
	// The originals are scanned once per example in a training run; warm
	// them so the figure is the per-rollout cost.
	for _, r := range append(append([]scored(nil), k8s...), tf...) {
		if _, err := e.Score(ctx, r.ex, r.ro, ""); err != nil {
			b.Fatal(err)
		}
	}
	v.noCache = true // every item is distinct anyway; keep runs independent
	defer func() { v.noCache, v.trivy = false, prepared }()
	// gogc=400 is how the svbench binary runs (cmd/svbench sets it unless
	// GOGC is in the environment); gogc=100 is Go's default.
	for _, mode := range []struct {
		name    string
		scanner *tfscan.Scanner
		gogc    int
	}{
		{"prepared/gogc=400", prepared, 400},
		{"prepared/gogc=100", prepared, 100},
		{"trivy-scanner/gogc=400", trivyScanner, 400},
	} {
		b.Run(mode.name, func(b *testing.B) {
			v.trivy = mode.scanner
			defer debug.SetGCPercent(debug.SetGCPercent(mode.gogc))
			runtime.GC()
			var next atomic.Int64
			b.ReportAllocs()
			cpu0 := cpuTime()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					it := items[int(next.Add(1)-1)%pool]
					if _, err := e.Score(ctx, it.ex, it.ro, ""); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/item")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "items/s")
		})
	}
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
