package env

import (
	"strings"
	"testing"
)

func TestRubricInfo(t *testing.T) {
	rb := Rubric[int]{Name: "r", Rewards: []Reward[int]{
		{Name: "a", Weight: 1, Min: 0, Max: 1, Fn: func(Example, int) float64 { return 1 }},
		{Name: "cost", Weight: 0.5, Min: -1, Max: 1, Fn: func(Example, int) float64 { return -1 }},
		{Name: "neg", Weight: -2, Min: 0, Max: 1, Fn: func(Example, int) float64 { return 0 }},
	}}
	ri := rb.Info()
	// a ∈ [0, 1]; 0.5·cost ∈ [-0.5, 0.5]; -2·neg ∈ [-2, 0].
	if ri.Name != "r" || len(ri.Components) != 3 || ri.TotalMin != -2.5 || ri.TotalMax != 1.5 {
		t.Fatalf("info %+v", ri)
	}
	if err := ri.Check(rb.Evaluate(Example{}, 0, nil)); err != nil {
		t.Errorf("a score of the rubric: %v", err)
	}
	opt := NewRubricInfo("o", RubricComponent{Name: "x", Weight: 1, Min: 0.5, Max: 1, Optional: true})
	if opt.TotalMin != 0 || opt.TotalMax != 1 {
		t.Errorf("an optional component's absence adds 0: %+v", opt)
	}
	if j := ri.With(RubricComponent{Name: "judge", Weight: 0.1, Min: 0, Max: 1}); j.TotalMax != 1.6 || len(ri.Components) != 3 {
		t.Errorf("With: %+v (original %+v)", j, ri)
	}
	for _, c := range []struct {
		s    Score
		want string
	}{
		{Score{Total: 1, Components: map[string]float64{"a": 2, "cost": 0, "neg": 0}}, "component a = 2 outside"},
		{Score{Total: 1, Components: map[string]float64{"a": 1, "cost": 0}}, "declared component neg is missing"},
		{Score{Total: 1, Components: map[string]float64{"a": 1, "cost": 0, "neg": 0, "extra": 0}}, "component extra is not declared"},
		{Score{Total: 1, Components: map[string]float64{"a": 1, "cost": 0, "neg": 0}, Weights: map[string]float64{"a": 2, "cost": 0.5, "neg": -2}}, "component a weighs 2, declared 1"},
		{Score{Total: 3, Components: map[string]float64{"a": 1, "cost": 0, "neg": 0}}, "total 3 outside"},
	} {
		err := ri.Check(c.s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check(%+v) = %v, want %q", c.s, err, c.want)
		}
	}
}
