package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/metrics"
)

// The framework's tests link no environment (report must not import one):
// they register this small binary builder, which is also how they exercise
// the shared binary core. Its rows look like E1's.
const (
	testEnv   = "test-detect"
	testAlias = "t1"
)

func init() {
	register(testEnv, []string{testAlias}, Spec{Build: buildTestDetect})
}

var testTask = BinaryTask{Positive: "Malicious", Negative: "Benign",
	Answer: func(raw json.RawMessage) (bool, bool, error) {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return false, false, errors.New("answer missing or not JSON")
		}
		switch x := v.(type) {
		case string:
			switch strings.ToLower(x) {
			case "malicious":
				return true, false, nil
			case "benign":
				return false, false, nil
			case "skip":
				return false, true, nil
			}
		case float64:
			if x == 0 || x == 1 {
				return x == 1, false, nil
			}
		}
		return false, false, errors.New("answer is not Malicious/Benign")
	}}

type testGroup struct {
	GroupHead
	Accuracy float64 `json:"accuracy"`
}

func buildTestDetect(rows []artifact.Result, meta *artifact.Metadata, opts Options) (*Report, error) {
	b, err := ScanBinary(rows, testTask)
	if err != nil {
		return nil, err
	}
	cal, cost, abst := b.All.Blocks()
	ci := b.Bootstrap([]string{"accuracy", "ece"}, []BinaryStat{ConfusionOf(metrics.Confusion.Accuracy), ECEOf}, meta, opts)
	meanReward, comps := RewardStats(rows, b.Pos)
	groups := Breakdown(rows, b, []string{"scenario", "difficulty"}, func(h GroupHead, obs []BinaryObs, _ []int) testGroup {
		var a BinaryAcc
		for _, o := range obs {
			a.Add(o)
		}
		return testGroup{GroupHead: h, Accuracy: a.Confusion.Accuracy()}
	})
	counts := b.Counts(len(rows))
	block := map[string]any{"calibration": cal, "cost": cost, "abstention": abst, "confusion_matrix": CountsOf(b.All.Confusion)}
	r := &Report{
		Summary: b.Summary(block, ci, counts, meanReward, comps, groups, meta, opts),
		Key: []KeyMetric{
			Key("accuracy", Opt(abst.AccuracyNonAbstained, b.All.Confusion.Decided() > 0), true),
			{Name: "ece", Value: cal.ECE},
		},
		Headline: []Stat{b.RowsStat()},
		Charts:   b.Charts(),
		Problems: b.Problems,
	}
	AttachCIs(r.Key, ci)
	var md bytes.Buffer
	WriteTitle(&md, "test detection", meta, counts, "")
	WriteConfusionAndCharts(&md, CountsOf(b.All.Confusion), r.Charts)
	WriteComponents(&md, comps, meanReward)
	r.Markdown = md.String()
	return r, nil
}

func TestScanBinary(t *testing.T) {
	rows := []artifact.Result{
		e1Row(0, "Malicious", 0.9, `"Malicious"`, nil), // TP
		e1Row(1, "Benign", 0.8, `1`, nil),              // FN
		e1Row(2, "Benign", 0.6, `0`, nil),              // TN
		e1Row(3, "Malicious", 0.3, `"benign"`, nil),    // FP
		e1Row(4, "Abstain", 0.5, `1`, nil),             // abstain
		e1Row(5, "", 0, `"Benign"`, nil),               // unparsed → abstain
		e1Row(6, "Benign", 0.7, `"skip"`, nil),         // no binary gold
		{Index: 7, Error: "429 rate limited"},
		{Index: 8, ScoreError: "verifier crashed"},
	}
	b, err := ScanBinary(rows, testTask)
	if err != nil {
		t.Fatal(err)
	}
	if c := b.All.Confusion; c != (metrics.Confusion{TP: 1, FN: 1, TN: 1, FP: 1, Abstain: 2}) {
		t.Errorf("confusion %+v", c)
	}
	if b.ErrorRows != 1 || b.ScoreErrorRows != 1 || b.Unparsed != 1 || b.ExplicitAbstain != 1 || b.Skipped != 1 || len(b.Obs) != 6 {
		t.Errorf("accounting %+v", b)
	}
	if !b.Obs[5].Unparsed || b.Obs[4].Unparsed || b.Pos[5] != 5 {
		t.Errorf("unparsed flag or positions wrong: %+v %v", b.Obs, b.Pos)
	}
	kinds := []string{}
	for _, p := range b.Problems {
		kinds = append(kinds, p.Kind)
	}
	if strings.Join(kinds, ",") != "unparsed,error,score_error" {
		t.Errorf("problems %v", kinds)
	}
	cal, cost, abst := b.All.Blocks()
	if cost.TotalCost != 11 || cost.CostWeightedAccuracy != 1-11.0/40 || abst.AbstainRate != 2.0/6 || abst.AccuracyNonAbstained != 0.5 {
		t.Errorf("blocks %+v %+v", cost, abst)
	}
	if math.Abs(cal.Brier-(0.01+0.64+0.16+0.09)/4) > 1e-12 {
		t.Errorf("brier %v", cal.Brier)
	}
	if _, err := ScanBinary([]artifact.Result{e1Row(0, "Benign", 1, `"maybe"`, nil)}, testTask); err == nil || !strings.Contains(err.Error(), "row 1 (index 0, rollout 0)") {
		t.Errorf("bad answer error %v", err)
	}
}

// TestBlocksReferenceCorners pins the reference generator's values where a
// ratio has nothing to count.
func TestBlocksReferenceCorners(t *testing.T) {
	tests := []struct {
		name          string
		obs           []BinaryObs
		cwa, abstRate float64
	}{
		{"no rows", nil, 1, 0},
		{"all abstain", []BinaryObs{{Outcome: metrics.Abstain}, {Outcome: metrics.Abstain, Positive: true}}, 1, 1},
		{"all right, one class", []BinaryObs{{Outcome: metrics.TN, Confidence: 1}}, 1, 0},
		{"only misses", []BinaryObs{{Outcome: metrics.FN, Confidence: 1, Positive: true}}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var a BinaryAcc
			for _, o := range tc.obs {
				a.Add(o)
			}
			cal, cost, abst := a.Blocks()
			if cost.CostWeightedAccuracy != tc.cwa || abst.AbstainRate != tc.abstRate {
				t.Errorf("cwa %v abstain rate %v, want %v %v", cost.CostWeightedAccuracy, abst.AbstainRate, tc.cwa, tc.abstRate)
			}
			if b, err := json.Marshal([]any{cal, cost, abst}); err != nil || bytes.Contains(b, []byte("NaN")) {
				t.Errorf("blocks not clean JSON: %s %v", b, err)
			}
		})
	}
}

func TestKeyUndefined(t *testing.T) {
	b, err := json.Marshal([]KeyMetric{Key("a", nil, true), Key("b", Opt(0.5, true), false)})
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"name":"a","value":0,"higher_is_better":true,"undefined":true},{"name":"b","value":0.5,"higher_is_better":false}]`
	if string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
}
