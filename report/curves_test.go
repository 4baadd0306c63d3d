package report

import (
	"math"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
)

func TestLearningCurve(t *testing.T) {
	var rows []artifact.Result
	for step := int64(0); step < 3; step++ {
		for i := range 4 {
			s := step
			acc := 0.0
			if int64(i) < step+1 {
				acc = 1
			}
			rows = append(rows, artifact.Result{
				Index: int(step)*4 + i, Reward: acc + 0.1, Components: map[string]float64{"accuracy": acc, "format": 1},
				Parsed:  map[string]any{"format_valid": true, "predicted_label": map[bool]string{true: "Abstain", false: "Benign"}[i == 3]},
				Trainer: &artifact.Trainer{Step: &s},
			})
		}
	}
	pts, charts, md := learningCurve(rows, 1, 200)
	if len(pts) != 3 || len(charts) != 3 {
		t.Fatalf("%d points, %d charts", len(pts), len(charts))
	}
	// accuracy at step s is (s+1)/4; reward is accuracy + 0.1.
	for s, p := range pts {
		want := float64(s+1) / 4
		if p.Components["accuracy"] != want || math.Abs(p.Reward-(want+0.1)) > 1e-12 || p.N != 4 {
			t.Fatalf("step %d: %+v", s, p)
		}
		if p.RewardLo > p.Reward || p.RewardHi < p.Reward {
			t.Fatalf("step %d: band [%v, %v] excludes %v", s, p.RewardLo, p.RewardHi, p.Reward)
		}
		if *p.FormatValid != 1 || *p.Abstain != 0.25 {
			t.Fatalf("step %d: rates %v %v", s, *p.FormatValid, *p.Abstain)
		}
	}
	if !strings.Contains(md, "3 training steps (0–2)") || !strings.Contains(string(charts[0].SVG), "<polygon") {
		t.Fatalf("markdown or band missing:\n%s", md)
	}
	// Rows without steps draw nothing.
	for i := range rows {
		rows[i].Trainer = nil
	}
	if pts, _, _ := learningCurve(rows, 1, 200); pts != nil {
		t.Fatal("a curve without steps")
	}
}
