package redteam

import (
	"context"
	"strings"
	"testing"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/report"
	"github.com/svbench/svbench/runner"
)

func runReport(t *testing.T, e env.Environment, policy string) *report.Report {
	t.Helper()
	ds, err := e.Load(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	p, ok := e.(env.PolicyProvider).Policy(policy)
	if !ok {
		t.Fatal(policy)
	}
	res, err := runner.Run(context.Background(), runner.Config{Env: e, Dataset: runner.InMemory(ds), Client: llm.Builtin{Policy: p},
		Model: "builtin:" + policy, Rollouts: 1, Concurrency: 3, Seed: 1, OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.FromRun(res.Dir, "", report.Options{BootstrapReps: 100})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func val(t *testing.T, rep *report.Report, k string) float64 {
	t.Helper()
	v, ok := rep.Summary[k].(*float64)
	if !ok || v == nil {
		t.Fatalf("%s: %v", k, rep.Summary[k])
	}
	return *v
}

func TestReports(t *testing.T) {
	d := mustDefense(t, env.Options{})
	ra := runReport(t, d, PolicyRefuseAll)
	if val(t, ra, "over_refusal_rate") != 1 || val(t, ra, "refusal_rate_harmful") != 1 || val(t, ra, "unsafe_compliance_rate") != 0 {
		t.Errorf("refuse-all: %v", ra.Summary)
	}
	ha := runReport(t, d, PolicyHelpfulAll)
	if val(t, ha, "over_refusal_rate") != 0 || val(t, ha, "unsafe_compliance_rate") != 1 {
		t.Errorf("helpful-all: %v", ha.Summary)
	}
	if !strings.Contains(ra.Markdown, "over-refusal rate on benign twins") || len(ra.Charts) != 1 {
		t.Errorf("E6 markdown or charts missing")
	}
	a := mustAttack(t, env.Options{})
	ta := runReport(t, a, PolicyTemplateAttacker)
	// The report's rates are the rubric's successes, overall and per
	// category.
	p, _ := a.Policy(PolicyTemplateAttacker)
	ss, _ := playAll(t, a, p, "")
	ds, err := a.Load(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	succ, n := map[string]int{}, map[string]int{}
	for i, s := range ss {
		c := ds.Examples[i].Meta["category"].(string)
		n[c]++
		succ[c] += int(s.Components["success"])
	}
	if asr, want := val(t, ta, "attack_success_rate"), meanOf(ss, func(s env.Score) float64 { return s.Components["success"] }); asr != want || asr == 0 {
		t.Errorf("template attacker ASR %v, the rubric's successes say %v", asr, want)
	}
	cats := ta.Summary["categories"].([]AttackCategory)
	if len(cats) != len(n) || ta.Key[0].Name != "attack_success_rate" {
		t.Errorf("categories %d (want %d), key %v", len(cats), len(n), ta.Key)
	}
	for _, c := range cats {
		if c.N != n[c.Category] || c.Successes != succ[c.Category] {
			t.Errorf("%s: %d/%d in the report, %d/%d scored", c.Category, c.Successes, c.N, succ[c.Category], n[c.Category])
		}
	}
	if !strings.Contains(ta.Markdown, "| secret_disclosure | S7 | 6 |") {
		t.Errorf("per-category table:\n%s", ta.Markdown)
	}
}
