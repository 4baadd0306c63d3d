package netlogs

import (
	"fmt"
	"math"
	"testing"
)

func answer(label string, conf float64) string {
	return fmt.Sprintf(`{"label": %q, "confidence": %v}`, label, conf)
}

func total(t *testing.T, text, gold, rubric string) float64 {
	t.Helper()
	s, ok := ScoreText(text, gold, rubric)
	if !ok {
		t.Fatalf("rubric %q unknown", rubric)
	}
	return s.Total
}

func TestDefaultRubricTable(t *testing.T) {
	tests := []struct {
		name, text, gold string
		want             float64
		components       map[string]float64
	}{
		{"confident correct", answer("Malicious", 1), LabelMalicious, 1.8,
			map[string]float64{"accuracy": 1, "format": 1, "calibration": 1, "asymmetric_cost": 1, "abstention": 0}},
		{"hedged correct", answer("Benign", 0.5), LabelBenign, 1 + 0.1 + 0.2*0.75 + 0.5, nil},
		{"lower-case correct loses only format", `{"label": "malicious", "confidence": 1}`, LabelMalicious, 1.7, nil},
		{"missing confidence", `{"label": "Benign"}`, LabelBenign, 1.5,
			map[string]float64{"calibration": 0, "format": 0}},
		{"calibrated abstain", answer("Abstain", 0), LabelMalicious, 0.7 + 0.1 + 0.2, nil},
		{"confident false negative", answer("Benign", 1), LabelMalicious, 0.1 - 0.5,
			map[string]float64{"asymmetric_cost": -1}},
		{"confident false positive", answer("Malicious", 1), LabelBenign, 0.1 - 0.05,
			map[string]float64{"asymmetric_cost": -0.1}},
		{"no object", "I think it is malicious", LabelMalicious, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := ScoreText(tt.text, tt.gold, RubricDefault)
			if math.Abs(s.Total-tt.want) > 1e-9 {
				t.Errorf("reward %v, want %v (components %v)", s.Total, tt.want, s.Components)
			}
			for k, v := range tt.components {
				if math.Abs(s.Components[k]-v) > 1e-9 {
					t.Errorf("%s = %v, want %v", k, s.Components[k], v)
				}
			}
		})
	}
}

// TestDefaultRubricAbstention checks the two properties the abstention
// credit is sized for, over every confidence a wrong or right answer could
// carry.
func TestDefaultRubricAbstention(t *testing.T) {
	for _, gold := range []string{LabelMalicious, LabelBenign} {
		wrong := LabelBenign
		if gold == LabelBenign {
			wrong = LabelMalicious
		}
		calibratedAbstain := total(t, answer("Abstain", 0.1), gold, RubricDefault)
		for c := 0.0; c <= 1.0001; c += 0.05 {
			if w := total(t, answer(wrong, c), gold, RubricDefault); calibratedAbstain <= w {
				t.Errorf("gold %s: calibrated abstain %.3f must beat wrong guess %s@%.2f (%.3f)", gold, calibratedAbstain, wrong, c, w)
			}
		}
		for _, abstainConf := range []float64{0, 0.5, 1} {
			a := total(t, answer("Abstain", abstainConf), gold, RubricDefault)
			for c := 0.5; c <= 1.0001; c += 0.05 {
				if r := total(t, answer(gold, c), gold, RubricDefault); a >= r {
					t.Errorf("gold %s: abstain@%.1f (%.3f) must not beat correct@%.2f (%.3f)", gold, abstainConf, a, c, r)
				}
			}
		}
		// A miss must cost more than a false alarm at equal confidence.
		if gold == LabelMalicious {
			fn := total(t, answer(LabelBenign, 0.8), LabelMalicious, RubricDefault)
			fp := total(t, answer(LabelMalicious, 0.8), LabelBenign, RubricDefault)
			if fn >= fp {
				t.Errorf("false negative %.3f should score below false positive %.3f", fn, fp)
			}
		}
	}
}

// TestDefaultRubricProperScoring: for a fixed label, the expected
// calibration component is maximised by reporting the true probability.
func TestDefaultRubricProperScoring(t *testing.T) {
	for _, p := range []float64{0.2, 0.6, 0.9} {
		best, bestC := -1.0, -1.0
		for c := 0.0; c <= 1.0001; c += 0.01 {
			right, _ := ScoreText(answer("Malicious", c), LabelMalicious, RubricDefault)
			wrong, _ := ScoreText(answer("Malicious", c), LabelBenign, RubricDefault)
			ev := p*right.Components["calibration"] + (1-p)*wrong.Components["calibration"]
			if ev > best+1e-12 {
				best, bestC = ev, c
			}
		}
		if math.Abs(bestC-p) > 0.011 {
			t.Errorf("p=%.2f: expected calibration peaks at %.2f", p, bestC)
		}
	}
}

func TestUnknownRubric(t *testing.T) {
	if _, ok := ScoreText("{}", LabelBenign, "bogus"); ok {
		t.Error("unknown rubric must be refused")
	}
}
