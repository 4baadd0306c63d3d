package tfscan

import (
	"context"
	"os"
	"sort"
	"testing"
	"time"

	adapter "github.com/aquasecurity/trivy/pkg/iac/adapters/terraform"
	"github.com/aquasecurity/trivy/pkg/iac/scanners/terraform/parser"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/svbench/svbench/verify"
)

func TestZZTiming2(t *testing.T) {
	s := scanner(t)
	src, _ := os.ReadFile(os.Getenv("TFFILE"))
	mfs, _, _ := s.memFS([]verify.File{{Path: "main.tf", Content: src}})
	ctx := context.Background()
	p := parser.New(keyedFS{MapFS: mfs, key: "k"}, "", parser.OptionWithDownloads(false))
	p.ParseFS(ctx, ".")
	mods, _ := p.EvaluateAll(ctx)
	contents := adapter.Adapt(mods).ToRego().(map[string]any)
	input, _ := regoValue(contents)
	type tm struct {
		name string
		d    time.Duration
	}
	var out []tm
	for _, c := range s.checks.checks {
		if !s.checks.applicable(c.selectors, contents) {
			continue
		}
		for i := 0; i < 20; i++ {
			c.query.Eval(ctx, rego.EvalParsedInput(input))
		}
		t0 := time.Now()
		for i := 0; i < 100; i++ {
			c.query.Eval(ctx, rego.EvalParsedInput(input))
		}
		out = append(out, tm{c.namespace + "." + c.rule, time.Since(t0) / 100})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].d > out[j].d })
	for _, o := range out[:8] {
		t.Logf("%v %s", o.d, o.name)
	}
}
