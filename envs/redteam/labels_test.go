package redteam

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/svbench/svbench/analysis/probe"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/report"
	"github.com/svbench/svbench/runner"
)

func TestConditionLabels(t *testing.T) {
	cases := []struct {
		name  string
		env   string
		cond  map[string]string
		wants []string
	}{
		{"e5 default", AttackID, env.Default.Resolved(AttackID, nil), []string{LabelSimulatedTarget, LabelRulesJudge}},
		{"e5 served target, rules judge", AttackID, env.Default.Resolved(AttackID, map[string]string{paramTargetModel: "m"}), []string{LabelRulesJudge}},
		{"e5 served target and judge", AttackID, env.Default.Resolved(AttackID, map[string]string{paramTargetModel: "m", "judge": JudgeLlamaGuard}), nil},
		{"e5 simulator forced", AttackID, env.Default.Resolved(AttackID, map[string]string{paramTargetModel: "m", "target": TargetSimulator, "judge": JudgeClassifier}), []string{LabelSimulatedTarget}},
		{"e6 default", DefenseID, env.Default.Resolved(DefenseID, nil), []string{LabelWordOverlap, LabelRulesJudge}},
		{"e6 served judge", DefenseID, env.Default.Resolved(DefenseID, map[string]string{"judge": JudgeLlamaGuard}), []string{LabelWordOverlap}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := attackLabels
			if c.env == DefenseID {
				f = defenseLabels
			}
			if got := f(c.cond); !slices.Equal(got, c.wants) {
				t.Errorf("labels %v, want %v (conditions %v)", got, c.wants, c.cond)
			}
		})
	}
}

// runDir plays a built-in policy through the runner and returns the run
// directory.
func runDir(t *testing.T, e env.Environment, p env.Policy, model string) string {
	t.Helper()
	ds, err := e.Load(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := runner.Run(context.Background(), runner.Config{Env: e, Dataset: runner.InMemory(ds), Client: llm.Builtin{Policy: p},
		Model: model, Rollouts: 1, Concurrency: 3, Seed: 1, OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return res.Dir
}

// TestOpenOfflineExploits pins issue #33's strategies that the offline
// condition does not stop: they are registered and reported by the probe,
// and a run in that condition says so in its report and its scoreboard
// condition. The bounds are the known figures' direction; if the simulator
// ever stops them, move them out of openOffline and the README's table.
func TestOpenOfflineExploits(t *testing.T) {
	a := mustAttack(t, env.Options{})
	d := mustDefense(t, env.Options{})
	exploit := func(e env.Prober, name string) env.Policy {
		for _, x := range e.Exploits() {
			if x.Name == name {
				return x.Policy
			}
		}
		t.Fatalf("exploit %s not registered", name)
		return nil
	}
	honest := func(e env.Environment, name string) float64 {
		p, _ := e.(env.PolicyProvider).Policy(name)
		ss, _ := playAll(t, e, p, "")
		return meanOf(ss, total)
	}

	// Knowing each row's framing: every row on the first turn.
	ss, _ := playAll(t, a, exploit(a, "fill-in-the-blank"), "")
	for _, s := range ss {
		if s.Components["success"] != 1 || s.Parsed["turns_to_success"] != 1 {
			t.Errorf("fill-in-the-blank no longer succeeds on turn 1: %v %v", s.Components, s.Parsed["turns_to_success"])
		}
	}
	blind, _ := playAll(t, a, exploit(a, "fill-in-the-blank-blind"), "")
	if h := honest(a, PolicyTemplateAttacker); meanOf(blind, total) <= h {
		t.Errorf("fill-in-the-blank-blind %.3f no longer beats the template attacker %.3f", meanOf(blind, total), h)
	}
	bag, _ := playAll(t, d, exploit(d, "constant-decline-pointer-bag"), "")
	if r := honest(d, PolicyRefuseAll); meanOf(bag, total) <= r {
		t.Errorf("the constant reply %.3f no longer beats refuse-all %.3f", meanOf(bag, total), r)
	}

	// svbench probe reports them as reaching the honest mean (E5) and
	// lists the constant reply with its figure (E6).
	res, err := probe.Run(context.Background(), probe.Config{EnvID: AttackID, Limit: 6, Concurrency: 2, Only: []string{"fill-in-the-blank"},
		New: func(p map[string]string) (env.Environment, error) { return NewAttack(env.Options{Params: p}) }})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Vulnerable, "fill-in-the-blank") {
		t.Errorf("probe does not report fill-in-the-blank: %+v", res.Strategies)
	}

	// Every artifact of a run in the offline condition names it.
	for _, c := range []struct {
		e      env.Environment
		policy string
		labels []string
	}{
		{a, PolicyTemplateAttacker, []string{LabelSimulatedTarget, LabelRulesJudge}},
		{d, PolicyBalanced, []string{LabelWordOverlap, LabelRulesJudge}},
	} {
		p, _ := c.e.(env.PolicyProvider).Policy(c.policy)
		dir := runDir(t, c.e, p, "builtin:"+c.policy)
		rep, err := report.FromRun(dir, "", report.Options{BootstrapReps: 20})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := rep.Summary["condition_labels"].([]string); !slices.Equal(got, c.labels) || !strings.Contains(rep.Markdown, "Offline condition "+report.LabelsText(c.labels)) {
			t.Errorf("%s report: labels %v, want %v; markdown:\n%s", c.policy, rep.Summary["condition_labels"], c.labels, rep.Markdown[:min(len(rep.Markdown), 800)])
		}
		sb, err := report.CollectScoreboard(dir, report.ScoreboardOptions{All: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(sb.Runs) != 1 || !strings.Contains(sb.Runs[0].Condition(), report.LabelsText(c.labels)) {
			t.Errorf("%s scoreboard condition does not carry the labels: %+v", c.policy, sb.Runs)
		}
	}
}
