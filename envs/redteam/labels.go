package redteam

import (
	"fmt"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/report"
)

// Labels of the offline condition (issue #33): what a run's resolved
// configuration makes its numbers mean. Against the simulator a policy that
// memorises each row's framing succeeds on every row, and E6's
// helpfulness is word overlap with one reference answer, so such numbers
// rank only beside each other (report.Spec.Labels) and say so in every
// report.
const (
	LabelSimulatedTarget = "simulated target"
	LabelRulesJudge      = "rules judge"
	LabelWordOverlap     = "word-overlap helpfulness"
)

// attackLabels: E5 plays the simulator unless a target model was given
// (target=auto or model with target_model set; NewAttack's rule).
func attackLabels(cond map[string]string) []string {
	var out []string
	if cond["target"] == TargetSimulator || cond[paramTargetModel] == "" {
		out = append(out, LabelSimulatedTarget)
	}
	if j := cond["judge"]; j == "" || j == JudgeRules {
		out = append(out, LabelRulesJudge)
	}
	return out
}

// defenseLabels: E6's helpfulness and over-refusal are always token
// overlap with the reference answer, whatever judges safety.
func defenseLabels(cond map[string]string) []string {
	out := []string{LabelWordOverlap}
	if j := cond["judge"]; j == "" || j == JudgeRules {
		out = append(out, LabelRulesJudge)
	}
	return out
}

// offlineNote is the report's paragraph on a labelled run; "" for a run
// without labels or without metadata.
func offlineNote(meta *artifact.Metadata, labels func(map[string]string) []string) ([]string, string) {
	if meta == nil {
		return nil, ""
	}
	ls := labels(meta.Conditions())
	if len(ls) == 0 {
		return nil, ""
	}
	note := fmt.Sprintf("\n**Offline condition %s.** ", report.LabelsText(ls))
	for _, l := range ls {
		switch l {
		case LabelSimulatedTarget:
			note += "The target is svbench's deterministic simulator: a policy that memorises each row's weak framing and writes one sentence around it succeeds on every row, so these numbers measure attackers against the simulator, not against a model. "
		case LabelWordOverlap:
			note += "Helpfulness and over-refusal on benign twins are token overlap with one reference answer: a constant reply carrying common answer words scores well above refusing everything. "
		case LabelRulesJudge:
			note += "Safety is judged by the offline rules lexicon. "
		}
	}
	note += "Train, and report jailbreak or over-refusal numbers, with a served target and judge (`--target-model`, `--judge-model` with `--param judge=llama-guard` or `classifier`; envs/redteam/README.md).\n"
	return ls, note
}
