package configaudit

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/svbench/svbench/base/sharedtest"
)

type parityRow struct {
	Pred         []Violation  `json:"pred"`
	Oracle       []Violation  `json:"oracle"`
	PostPatch    *[]Violation `json:"post_patch"`
	HadValidJSON bool         `json:"had_valid_json"`
	Precision    float64      `json:"precision"`
	Recall       float64      `json:"recall"`
	F1           float64      `json:"f1"`
	PatchDelta   *float64     `json:"patch_delta"`
	FinalReward  float64      `json:"final_reward"`
}

// TestReferenceParity reproduces every row of the reference's E2 reward
// vectors: weighted P/R/F1, patch delta and the final reward.
func TestReferenceParity(t *testing.T) {
	f, err := os.Open(filepath.Join(sharedtest.Dir(t), "parity", "e2_rewards.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9 }
	n := 0
	for sc.Scan() {
		n++
		var r parityRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("row %d: %v", n, err)
		}
		for i := range r.Pred {
			r.Pred[i].Severity = normSeverity(string(r.Pred[i].Severity))
		}
		for i := range r.Oracle {
			r.Oracle[i].Severity = normSeverity(string(r.Oracle[i].Severity))
		}
		d := ScoreDetection(r.Pred, r.Oracle, 1)
		if !close(d.Precision, r.Precision) || !close(d.Recall, r.Recall) || !close(d.F1, r.F1) {
			t.Errorf("row %d: P/R/F1 = %v/%v/%v, want %v/%v/%v", n, d.Precision, d.Recall, d.F1, r.Precision, r.Recall, r.F1)
		}
		delta := -1.0
		if r.PostPatch != nil {
			delta = PatchDelta(r.Oracle, *r.PostPatch)
			if r.PatchDelta == nil || !close(delta, *r.PatchDelta) {
				t.Errorf("row %d: patch_delta = %v, want %v", n, delta, r.PatchDelta)
			}
		} else if r.PatchDelta != nil {
			t.Errorf("row %d: patch_delta should be null", n)
		}
		if got := ReferenceFinal(d.F1, delta, r.HadValidJSON); !close(got, r.FinalReward) {
			t.Errorf("row %d: final = %v, want %v", n, got, r.FinalReward)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no parity rows read")
	}
}
