package netlogs

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/svbench/svbench/base/sharedtest"
	"github.com/svbench/svbench/dataset"
)

// TestReferenceParity replays every vector the reference's own Python code
// produced and requires the reference rubric to agree on each component,
// the total, and what was parsed.
func TestReferenceParity(t *testing.T) {
	path := filepath.Join(sharedtest.Dir(t), "parity", "e1_rewards.jsonl")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	err = dataset.EachLine(f, path, func(line int, raw []byte) error {
		var v struct {
			Completion       string             `json:"completion"`
			Answer           json.RawMessage    `json:"answer"`
			Components       map[string]float64 `json:"components"`
			Reward           float64            `json:"reward"`
			ParsedLabel      string             `json:"parsed_label"`
			ParsedConfidence float64            `json:"parsed_confidence"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		n++
		answer, err := parseAnswer(v.Answer)
		if err != nil {
			t.Errorf("line %d: answer: %v", line, err)
			return nil
		}
		s, _ := ScoreText(v.Completion, answer, RubricReference)
		if math.Abs(s.Total-v.Reward) > 1e-9 {
			t.Errorf("line %d %q: reward %v, reference %v", line, v.Completion, s.Total, v.Reward)
		}
		for name, want := range v.Components {
			if got, ok := s.Components[name]; !ok || math.Abs(got-want) > 1e-9 {
				t.Errorf("line %d %q: %s = %v, reference %v", line, v.Completion, name, got, want)
			}
		}
		if len(s.Components) != len(v.Components) {
			t.Errorf("line %d: components %v, reference %v", line, s.Components, v.Components)
		}
		if got := s.Parsed["predicted_label"]; got != v.ParsedLabel {
			t.Errorf("line %d %q: label %q, reference %q", line, v.Completion, got, v.ParsedLabel)
		}
		if got := s.Parsed["confidence"].(float64); math.Abs(got-v.ParsedConfidence) > 1e-9 {
			t.Errorf("line %d %q: confidence %v, reference %v", line, v.Completion, got, v.ParsedConfidence)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no parity vectors read")
	}
}

// TestReferenceMiniCompat loads the reference's own public mini set (its
// row format, integer-free answers, meta) and checks the heuristic baseline
// lands on the reference's published accuracy of 0.540 over decided rows.
func TestReferenceMiniCompat(t *testing.T) {
	path := filepath.Join(sharedtest.Dir(t), "reference-data", "e1_public_mini.jsonl")
	e := New()
	ds, err := e.Load(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	var decided, correct int
	for _, ex := range ds.Examples {
		label, _, _ := HeuristicDecide(ex.Prompt[len(ex.Prompt)-1].Content)
		if label == LabelAbstain {
			continue
		}
		decided++
		if label == ex.Payload.(payload).answer {
			correct++
		}
	}
	if acc := float64(correct) / float64(decided); math.Abs(acc-0.540) > 0.0005 {
		t.Errorf("heuristic accuracy over decided rows %.4f (%d/%d), reference reports 0.540", acc, correct, decided)
	}
}
