package netlogs

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/svbench/svbench/env"
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

// scoreOn scores a completion on a decided row or an ambiguous one.
func scoreOn(t *testing.T, text, gold, rubric string, ambiguous bool) env.Score {
	t.Helper()
	ex := env.Example{}
	if ambiguous {
		ex = ambiguousRow
	}
	s, ok := scoreParsed(ex, Parse(text), gold, rubric)
	if !ok {
		t.Fatalf("rubric %q unknown", rubric)
	}
	return s
}

func TestDefaultRubricTable(t *testing.T) {
	tests := []struct {
		name, text, gold string
		ambiguous        bool
		want             float64
		components       map[string]float64
	}{
		{"confident correct", answer("Malicious", 1), LabelMalicious, false, 1.8,
			map[string]float64{"accuracy": 1, "format": 1, "calibration": 1, "asymmetric_cost": 1, "abstention": 0}},
		{"hedged correct", answer("Benign", 0.5), LabelBenign, false, 1 + 0.1 + 0.2*0.75 + 0.5, nil},
		{"lower-case correct loses only format", `{"label": "malicious", "confidence": 1}`, LabelMalicious, false, 1.7, nil},
		{"missing confidence", `{"label": "Benign"}`, LabelBenign, false, 1.5,
			map[string]float64{"calibration": 0, "format": 0}},
		{"calibrated abstain on a decided row", answer("Abstain", 0), LabelMalicious, false, 0.1 + 0.2,
			map[string]float64{"abstention": 0}},
		{"calibrated abstain on an ambiguous row", answer("Abstain", 0), LabelMalicious, true, 1 + 0.1 + 0.2,
			map[string]float64{"abstention": 1}},
		{"hedged abstain on an ambiguous row", answer("Abstain", 0.2), LabelBenign, true, 1 + 0.1 + 0.2*0.96, nil},
		{"correct on an ambiguous row", answer("Malicious", 1), LabelMalicious, true, 1.8,
			map[string]float64{"abstention": 0}},
		{"confident false negative", answer("Benign", 1), LabelMalicious, false, 0.1 - 0.5,
			map[string]float64{"asymmetric_cost": -1}},
		{"confident false positive", answer("Malicious", 1), LabelBenign, false, 0.1 - 0.05,
			map[string]float64{"asymmetric_cost": -0.1}},
		{"no object", "I think it is malicious", LabelMalicious, false, 0, nil},
		{"no object on an ambiguous row", "Abstain", LabelMalicious, true, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := scoreOn(t, tt.text, tt.gold, RubricDefault, tt.ambiguous)
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

// bestGuess is the highest expected default reward of a label answer
// (either label, confidence on a 0.01 grid) when the flow is malicious
// with probability p: what a calibrated model earns by answering.
func bestGuess(t *testing.T, p float64) float64 {
	t.Helper()
	best := math.Inf(-1)
	for _, label := range []string{LabelMalicious, LabelBenign} {
		for c := 0.0; c <= 1.0001; c += 0.01 {
			a := answer(label, c)
			ev := p*total(t, a, LabelMalicious, RubricDefault) + (1-p)*total(t, a, LabelBenign, RubricDefault)
			best = max(best, ev)
		}
	}
	return best
}

// TestDefaultRubricAbstention checks what the abstention credit is sized
// for (issue #41), over every confidence an answer could carry: on a row
// its record does not decide, an abstention beats every wrong answer and
// the best guess a calibrated model can make there (p = 0.5), and loses to
// every right answer; on a decided row it earns less than answering at
// any probability, so abstaining everywhere cannot pay.
func TestDefaultRubricAbstention(t *testing.T) {
	blind := bestGuess(t, 0.5)
	if math.Abs(blind-0.975) > 1e-9 {
		t.Errorf("best blind guess %.4f, want 0.975 (Malicious at 0.5)", blind)
	}
	for _, gold := range []string{LabelMalicious, LabelBenign} {
		wrong := LabelBenign
		if gold == LabelBenign {
			wrong = LabelMalicious
		}
		for _, abstainConf := range []float64{0, 0.1, 0.2} {
			a := scoreOn(t, answer("Abstain", abstainConf), gold, RubricDefault, true).Total
			if a <= blind {
				t.Errorf("gold %s: abstain@%.1f on an ambiguous row (%.3f) must beat the best blind guess (%.3f)", gold, abstainConf, a, blind)
			}
			for c := 0.0; c <= 1.0001; c += 0.05 {
				if w := scoreOn(t, answer(wrong, c), gold, RubricDefault, true).Total; a <= w {
					t.Errorf("gold %s: abstain@%.1f (%.3f) must beat wrong guess %s@%.2f (%.3f)", gold, abstainConf, a, wrong, c, w)
				}
			}
		}
		for _, ambiguous := range []bool{false, true} {
			for _, abstainConf := range []float64{0, 0.5, 1} {
				a := scoreOn(t, answer("Abstain", abstainConf), gold, RubricDefault, ambiguous).Total
				for c := 0.0; c <= 1.0001; c += 0.05 {
					if r := scoreOn(t, answer(gold, c), gold, RubricDefault, ambiguous).Total; a >= r {
						t.Errorf("gold %s, ambiguous %v: abstain@%.1f (%.3f) must not beat correct@%.2f (%.3f)", gold, ambiguous, abstainConf, a, c, r)
					}
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
	decided := scoreOn(t, answer("Abstain", 0), LabelMalicious, RubricDefault, false).Total
	for p := 0.0; p <= 1.0001; p += 0.05 {
		if g := bestGuess(t, p); decided >= g {
			t.Errorf("p=%.2f: abstaining on a decided row (%.3f) must earn less than the best answer (%.3f)", p, decided, g)
		}
	}
}

// TestReferenceRubricIgnoresAmbiguity: the reference's formula has no
// abstention credit, so the ambiguity mark moves none of its numbers.
func TestReferenceRubricIgnoresAmbiguity(t *testing.T) {
	for _, text := range []string{answer("Abstain", 0), answer("Abstain", 0.7), answer("Malicious", 0.6), answer("Benign", 1)} {
		for _, gold := range []string{LabelMalicious, LabelBenign} {
			d := scoreOn(t, text, gold, RubricReference, false)
			a := scoreOn(t, text, gold, RubricReference, true)
			if d.Total != a.Total {
				t.Errorf("%s [%s]: reference %.3f on a decided row, %.3f on an ambiguous one", text, gold, d.Total, a.Total)
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

// TestRowNamedByIDKeepsItsMark: a scoring row that names an embedded
// example by id without its meta (a trainer's {"id", "answer"}) is scored
// as that example, ambiguity included; a row naming none, or naming one
// with another answer, counts as decided.
func TestRowNamedByIDKeepsItsMark(t *testing.T) {
	e := New()
	ctx := context.Background()
	abstain := &env.Rollout{Completion: []env.Message{{Role: env.RoleAssistant, Content: answer(LabelAbstain, 0)}}}
	for _, split := range []string{env.SplitTest, env.SplitTrain, env.SplitDev} {
		ds, err := e.LoadSplit(ctx, split)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[bool]bool{}
		for _, ex := range ds.Examples {
			if seen[Ambiguous(ex)] {
				continue
			}
			seen[Ambiguous(ex)] = true
			var gold string
			_ = json.Unmarshal(ex.Answer, &gold)
			other := LabelBenign
			if gold == LabelBenign {
				other = LabelMalicious
			}
			for _, tc := range []struct {
				row  string
				want bool
			}{
				{fmt.Sprintf(`{"id": %q, "answer": %q}`, ex.ID, gold), Ambiguous(ex)},
				{fmt.Sprintf(`{"id": %q, "answer": %q, "meta": {"ambiguous": false}}`, ex.ID, gold), false},
				{fmt.Sprintf(`{"id": %q, "answer": %q}`, ex.ID, other), false},
				{fmt.Sprintf(`{"id": "inline", "answer": %q}`, gold), false},
			} {
				bare, err := e.ParseExample(json.RawMessage(tc.row))
				if err != nil {
					t.Fatal(err)
				}
				if Ambiguous(bare) != tc.want {
					t.Errorf("%s: %s reads ambiguous=%v, want %v", split, tc.row, Ambiguous(bare), tc.want)
				}
			}
			bare, _ := e.ParseExample(json.RawMessage(fmt.Sprintf(`{"id": %q, "answer": %q}`, ex.ID, gold)))
			a, _ := e.Score(ctx, ex, abstain, RubricDefault)
			b, _ := e.Score(ctx, bare, abstain, RubricDefault)
			if a.Total != b.Total {
				t.Errorf("%s %s: an abstention scores %.3f on the example, %.3f on the row naming it", split, ex.ID, a.Total, b.Total)
			}
		}
		if !seen[true] || !seen[false] {
			t.Errorf("%s: ambiguous and decided rows not both present: %v", split, seen)
		}
	}
}
