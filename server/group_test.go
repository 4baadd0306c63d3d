package server

import (
	"math"
	"strconv"
	"testing"
)

// Items sent with a group get group-relative advantages under every scheme
// and each component's standardised value, so a trainer gets GDPO-style
// decoupled normalisation without writing it.
func TestScoreGroupAdvantages(t *testing.T) {
	ls := startServer(t, e1Config())
	item := func(group any, label string, conf float64) map[string]any {
		return map[string]any{"env": "e1", "answer": "Malicious", "rubric": "reference", "group": group,
			"completion": `{"label": "` + label + `", "confidence": ` + strconv.FormatFloat(conf, 'g', -1, 64) + `}`}
	}
	items := []any{
		item("p1", "Malicious", 0.9), // reference reward 1.78
		item("p1", "Benign", 0.8),    // -0.36
		item(7, "Malicious", 0.9),    // a group of identical rollouts: no signal
		item(7, "Malicious", 0.9),
		map[string]any{"env": "e1", "answer": "Malicious", "completion": "x"}, // no group: no advantages
	}
	status, body := ls.do(t, "POST", "/v1/score", map[string]any{"items": items})
	if status != 200 {
		t.Fatalf("status %d: %v", status, body)
	}
	res := body["results"].([]any)
	adv := func(i int, scheme string) float64 {
		a, ok := res[i].(map[string]any)["advantages"].(map[string]any)
		if !ok {
			t.Fatalf("item %d has no advantages: %v", i, res[i])
		}
		return a[scheme].(float64)
	}
	// GRPO: reward minus the group mean (1.78 and -0.36, mean 0.71).
	if d := adv(0, "grpo") - 1.07; math.Abs(d) > 1e-9 {
		t.Errorf("grpo advantage %v, want 1.07", adv(0, "grpo"))
	}
	if d := adv(1, "grpo") + 1.07; math.Abs(d) > 1e-9 {
		t.Errorf("grpo advantage %v, want -1.07", adv(1, "grpo"))
	}
	for _, s := range []string{"grpo", "grpo_std", "per_component", "gdpo"} {
		if adv(2, s) != 0 || adv(3, s) != 0 {
			t.Errorf("%s: identical rollouts got advantages %v, %v", s, adv(2, s), adv(3, s))
		}
		if adv(0, s) <= 0 || adv(1, s) >= 0 {
			t.Errorf("%s: the correct rollout must be pushed up: %v, %v", s, adv(0, s), adv(1, s))
		}
	}
	comp := res[0].(map[string]any)["component_advantages"].(map[string]any)
	if math.Abs(comp["accuracy"].(float64)-1) > 1e-5 || math.Abs(comp["format"].(float64)) > 1e-12 {
		t.Errorf("component advantages %v: accuracy differs (z=1 in a group of two), format does not (0)", comp)
	}
	if _, ok := res[4].(map[string]any)["advantages"]; ok {
		t.Errorf("an ungrouped item got advantages: %v", res[4])
	}
}
