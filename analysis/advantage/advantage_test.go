package advantage

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func ptr(v float64) *float64 { return &v }

// paperInput is the case worked by hand in the comments of
// TestAdvantagesOnPaper: components (accuracy, format), weights (1, 0.4).
func paperInput() *Input {
	rec := func(vs ...float64) []Rollout {
		var out []Rollout
		for i := 0; i < len(vs); i += 3 {
			out = append(out, Rollout{Components: []float64{vs[i], vs[i+1]}, Recorded: ptr(vs[i+2])})
		}
		return out
	}
	return &Input{
		Names:   []string{"accuracy", "format"},
		Weights: []float64{1, 0.4},
		Groups: []Group{
			// rewards 1.4, 0.4, 0 → mean 0.6; the trainer logged plain GRPO.
			{Key: "A", Rollouts: rec(1, 1, 0.8, 0, 1, -0.2, 0, 0, -0.6)},
			// identical rollouts: no signal under any scheme.
			{Key: "B", Rollouts: rec(1, 1, 0, 1, 1, 0)},
			// accuracy constant, only format differs: format decides.
			{Key: "C", Rollouts: rec(1, 0, -0.2, 1, 1, 0.2)},
		},
	}
}

func TestAdvantagesOnPaper(t *testing.T) {
	// Worked by hand:
	// A: z_acc = (1.414214, -0.707107, -0.707107), z_fmt = (0.707107, 0.707107, -1.414214)
	//    per = z_acc + 0.4 z_fmt = (1.697056, -0.424264, -1.272792); std(r) = 0.588784.
	// C: acc constant → 0; z_fmt = (-1, 1); per = (-0.4, 0.4); std(r) = 0.2.
	// Batch of per values has mean 0 and population std sqrt(5/7) = 0.845154,
	// so gdpo = per / 0.845154.
	want := map[string][][]float64{
		GRPO:         {{0.8, -0.2, -0.6}, {0, 0}, {-0.2, 0.2}},
		GRPOStd:      {{0.8 / 0.588784, -0.2 / 0.588784, -0.6 / 0.588784}, {0, 0}, {-1, 1}},
		PerComponent: {{1.697056, -0.424264, -1.272792}, {0, 0}, {-0.4, 0.4}},
		GDPO:         {{2.007984, -0.501996, -1.505988}, {0, 0}, {-0.473286, 0.473286}},
	}
	got := Advantages(paperInput())
	for _, s := range Schemes {
		for g := range want[s] {
			for i := range want[s][g] {
				if d := math.Abs(got[s][g][i] - want[s][g][i]); d > 1e-4 {
					t.Errorf("%s group %d rollout %d: %.6f, want %.6f", s, g, i, got[s][g][i], want[s][g][i])
				}
			}
		}
	}

	rep, err := Analyse(paperInput())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range Schemes {
		if c := rep.Schemes[s].CollapsedGroups; math.Abs(c-1.0/3) > 1e-9 {
			t.Errorf("%s collapsed share %v, want 1/3", s, c)
		}
	}
	if rep.Deciders["accuracy"] != 3 || rep.Deciders["format"] != 2 {
		t.Errorf("deciders %v, want accuracy 3, format 2", rep.Deciders)
	}
	// Plain mean-centring is the same arithmetic in every trainer when no
	// group is a singleton and every reward is scored.
	if want := []string{"grpo@trl", "grpo@verl", "grpo@openrlhf"}; rep.Recorded == nil || !slices.Equal(rep.Recorded.Reproduces, want) {
		t.Errorf("recorded advantages reproduced by %+v, want %v", rep.Recorded, want)
	}
	if rep.Groups != 3 || rep.Rollouts != 7 {
		t.Errorf("groups %d rollouts %d", rep.Groups, rep.Rollouts)
	}
}

func TestAnalyseCorners(t *testing.T) {
	tests := []struct {
		name    string
		in      *Input
		wantErr string
	}{
		{"no components", &Input{Groups: []Group{{Key: "a"}}}, "no reward components"},
		{"weights mismatch", &Input{Names: []string{"a"}, Weights: []float64{1, 2}}, "2 weights for 1 components"},
		{"ragged", &Input{Names: []string{"a", "b"}, Weights: []float64{1, 1}, Groups: []Group{{Key: "g", Rollouts: []Rollout{{Components: []float64{1}}}}}}, "1 components, want 2"},
		{"infinite component", &Input{Names: []string{"a"}, Weights: []float64{1}, Groups: []Group{{Key: "g", Rollouts: []Rollout{{Components: []float64{math.Inf(1)}}}}}}, "component a is +Inf"},
		{"NaN weight", &Input{Names: []string{"a"}, Weights: []float64{math.NaN()}}, "weight of component a is NaN"},
		{"only singletons", &Input{Names: []string{"a"}, Weights: []float64{1}, Groups: []Group{{Key: "g", Rollouts: []Rollout{{Components: []float64{1}}}}}}, "no group has two or more rollouts"},
		{"empty batch", &Input{Names: []string{"a"}, Weights: []float64{1}}, "no group has two or more rollouts"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Analyse(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestSpearman(t *testing.T) {
	tests := []struct {
		x, y []float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, []float64{10, 20, 30, 40}, 1},
		{[]float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1},
		{[]float64{1, 2, 3}, []float64{5, 5, 5}, 0},
		{[]float64{1, 1, 2, 2}, []float64{1, 2, 3, 4}, 0.894427},
	}
	for _, tc := range tests {
		if got := Spearman(tc.x, tc.y); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("Spearman(%v, %v) = %v, want %v", tc.x, tc.y, got, tc.want)
		}
	}
}

// A weight change can flip which rollouts are pushed up: with accuracy and
// format opposed, shrinking the accuracy weight below format's flips signs.
func TestSensitivity(t *testing.T) {
	in := &Input{Names: []string{"accuracy", "format"}, Weights: []float64{1, 0.9}, Groups: []Group{
		{Key: "g", Rollouts: []Rollout{{Components: []float64{1, 0}}, {Components: []float64{0, 1}}}},
	}}
	rep, err := Analyse(in)
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Schemes[GRPO].Sensitivity["accuracy"]; s != 1 {
		t.Errorf("grpo sign flips when accuracy's weight moves 20%%: %v, want 1", s)
	}
	if s := rep.Schemes[GRPO].Sensitivity["format"]; s != 1 {
		t.Errorf("grpo sign flips when format's weight moves 20%%: %v, want 1 (0.9·1.2 > 1)", s)
	}
}
