package policypack

import (
	"context"
	"testing"

	"github.com/svbench/svbench/verify"
	"github.com/svbench/svbench/verify/policy"
)

// BenchmarkEvaluate compares a pack's evaluation with the public OPA
// bundle's engine (verify/policy) on the same mini-set files, per fixture
// type: the same input builders, one prepared query each.
func BenchmarkEvaluate(b *testing.B) {
	rows, err := MiniSet()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	engine, err := policy.New(ctx, policy.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, ft := range []string{"k8s", "tf"} {
		var sel []Row
		for _, r := range rows {
			if r.FixtureType == ft {
				sel = append(sel, r)
			}
		}
		packs := make([]*Pack, len(sel))
		for i, r := range sel {
			packs[i], _ = Lookup(r.PolicyPack)
		}
		b.Run(ft+"/policypack", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				r := sel[i%len(sel)]
				if _, err := packs[i%len(sel)].Evaluate(ctx, r.Path, []byte(r.Content)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "files/s")
		})
		b.Run(ft+"/public-bundle", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				r := sel[i%len(sel)]
				files := []verify.File{{Path: r.Path, Content: []byte(r.Content)}}
				var err error
				if ft == "tf" {
					_, err = engine.VerifyTerraform(ctx, files)
				} else {
					_, err = engine.VerifyKubernetes(ctx, files)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "files/s")
		})
	}
}

// BenchmarkEvaluateParallel measures throughput with every core evaluating
// at once, as the reward server scores a batch.
func BenchmarkEvaluateParallel(b *testing.B) {
	rows, err := MiniSet()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			r := rows[i%len(rows)]
			i++
			p, _ := Lookup(r.PolicyPack)
			if _, err := p.Evaluate(ctx, r.Path, []byte(r.Content)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
