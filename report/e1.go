package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/metrics"
)

func init() { Register(EnvNetworkLogs, BuildE1) }

// E1Metrics is the reference report generator's E1 block, field for field
// (key order included), so summary.json["metrics"] compares directly.
type E1Metrics struct {
	Detection struct {
		TPR       float64 `json:"tpr"`
		FPR       float64 `json:"fpr"`
		FNR       float64 `json:"fnr"`
		Precision float64 `json:"precision"`
		F1        float64 `json:"f1"`
		Accuracy  float64 `json:"accuracy"`
	} `json:"detection"`
	Calibration CalibrationBlock `json:"calibration"`
	Cost        CostBlock        `json:"cost"`
	Abstention  AbstentionBlock  `json:"abstention"`
	Confusion   ConfusionCounts  `json:"confusion_matrix"`
}

var e1Task = binaryTask{Positive: "Malicious", Negative: "Benign",
	Answer: func(raw json.RawMessage) (bool, bool, error) {
		mal, err := E1Answer(raw)
		return mal, false, err
	}}

// e1Block fills the reference's metrics block from an accumulator.
func e1Block(a *binaryAcc) E1Metrics {
	var m E1Metrics
	c := a.conf
	m.Detection.TPR, m.Detection.FPR, m.Detection.FNR = c.TPR(), c.FPR(), c.FNR()
	m.Detection.Precision, m.Detection.F1, m.Detection.Accuracy = c.Precision(), c.F1(), c.Accuracy()
	m.Calibration, m.Cost, m.Abstention = a.blocks()
	m.Confusion = countsOf(c)
	return m
}

// E1Answer reads an E1 answer: "Malicious"/"Benign" in any case, or 1/0
// (true/false) as the reference's integer labels.
func E1Answer(raw json.RawMessage) (malicious bool, err error) {
	// Fast path for the forms datasets actually use.
	switch string(bytes.TrimSpace(raw)) {
	case `"Malicious"`, "1":
		return true, nil
	case `"Benign"`, "0":
		return false, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return false, fmt.Errorf("answer missing or not JSON")
	}
	switch x := v.(type) {
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "malicious", "1":
			return true, nil
		case "benign", "0":
			return false, nil
		}
	case float64:
		if x == 1 || x == 0 {
			return x == 1, nil
		}
	case bool:
		return x, nil
	}
	return false, fmt.Errorf("answer %s is not Malicious/Benign or 1/0", clip(string(raw), 60))
}

// breakdownFields are the dataset meta fields E1 reports break down by.
var breakdownFields = []string{"scenario", "difficulty", "attack_family"}

// E1Group is one line of a breakdown table.
type E1Group struct {
	groupHead
	AbstainRate float64 `json:"abstain_rate"`
	Accuracy    float64 `json:"accuracy"`
	F1          float64 `json:"f1"`
	ECE         float64 `json:"ece"`
	MeanReward  float64 `json:"mean_reward"`
}

// BuildE1 is the network-logs (E1) Builder.
func BuildE1(rows []artifact.Result, meta *artifact.Metadata, opts Options) (*Report, error) {
	b, err := scanBinary(rows, e1Task)
	if err != nil {
		return nil, err
	}
	block := e1Block(&b.all)
	ci := b.bootstrap([]string{"accuracy", "f1", "ece"}, []metrics.Stat{
		b.confusionStat(metrics.Confusion.Accuracy), b.confusionStat(metrics.Confusion.F1), b.eceStat,
	}, meta, opts)
	meanReward, comps := RewardStats(rows, b.pos)
	groups := breakdown(rows, b, breakdownFields, func(h groupHead, obs []binaryObs, rowPos []int) E1Group {
		var a binaryAcc
		for _, o := range obs {
			a.add(o)
		}
		mr, _ := RewardStats(rows, rowPos)
		return E1Group{groupHead: h, AbstainRate: a.conf.AbstainRate(), Accuracy: a.conf.Accuracy(),
			F1: a.conf.F1(), ECE: a.cal.ECE(), MeanReward: mr}
	})
	counts := b.counts(len(rows))
	summary := b.summary(block, ci, counts, meanReward, comps, groups, meta, opts)
	key := []KeyMetric{
		{"accuracy", block.Detection.Accuracy, true},
		{"f1", block.Detection.F1, true},
		{"ece", block.Calibration.ECE, false},
		{"aurc", block.Abstention.AURC, false},
		{"cost_weighted_accuracy", block.Cost.CostWeightedAccuracy, true},
		{"mean_reward", meanReward, true},
	}
	charts := b.charts()
	headline := []Stat{
		b.rowsStat(),
		{"accuracy (decided)", FCI(ci["accuracy"])},
		{"F1 (Malicious)", FCI(ci["f1"])},
		{"ECE", FCI(ci["ece"])},
		{"AURC", F(block.Abstention.AURC)},
		{"cost-weighted accuracy", F(block.Cost.CostWeightedAccuracy)},
		{"abstain rate", Pct(block.Abstention.AbstainRate)},
		{"mean reward", F(meanReward)},
	}
	r := &Report{Summary: summary, Headline: headline, Key: key, Charts: charts, Problems: b.problems}
	r.Markdown = e1Markdown(meta, block, ci, counts, meanReward, comps, groups, charts, opts)
	return r, nil
}

func e1Markdown(meta *artifact.Metadata, m E1Metrics, ci map[string]metrics.CI, counts map[string]int,
	meanReward float64, comps map[string]float64, breakdown map[string][]E1Group, charts []Chart, opts Options) string {
	var b bytes.Buffer
	writeTitle(&b, "E1 network logs", meta, counts, "")

	b.WriteString("## Headline\n\n")
	reps := opts.Reps()
	b.WriteString(Table([]string{"metric", "value", "95% CI"}, [][]string{
		{"accuracy (non-abstained)", F(m.Detection.Accuracy), ciCell(ci["accuracy"], reps)},
		{"F1 (Malicious)", F(m.Detection.F1), ciCell(ci["f1"], reps)},
		{"ECE (10 bins)", F(m.Calibration.ECE), ciCell(ci["ece"], reps)},
		{"Brier", F(m.Calibration.Brier), ""},
		{"AURC", F(m.Abstention.AURC), ""},
		{"cost-weighted accuracy (FN 10, FP 1)", F(m.Cost.CostWeightedAccuracy), ""},
		{"total cost", fmt.Sprintf("%g", m.Cost.TotalCost), ""},
		{"abstain rate", Pct(m.Abstention.AbstainRate), ""},
		{"mean reward", F(meanReward), ""},
	}))

	b.WriteString("\n## Detection\n\n")
	b.WriteString(Table([]string{"TPR", "FPR", "FNR", "precision", "F1", "accuracy"}, [][]string{{
		F(m.Detection.TPR), F(m.Detection.FPR), F(m.Detection.FNR), F(m.Detection.Precision), F(m.Detection.F1), F(m.Detection.Accuracy),
	}}))
	writeConfusionAndCharts(&b, m.Confusion, charts)

	for _, field := range breakdownFields {
		gs, ok := breakdown[field]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "## By %s\n\n", strings.ReplaceAll(field, "_", " "))
		var rows [][]string
		for _, g := range gs {
			rows = append(rows, []string{g.Name, fmt.Sprint(g.N), F(g.Accuracy), F(g.F1), F(g.ECE), Pct(g.AbstainRate), F(g.MeanReward)})
		}
		b.WriteString(Table([]string{field, "n", "accuracy", "F1", "ECE", "abstain", "mean reward"}, rows))
		b.WriteString("\n")
	}

	writeComponents(&b, comps, meanReward)

	b.WriteString(`## Notes on definitions

- The metrics block reproduces the reference report generator (checked against its parity vectors to 1e-9).
  Positive class is Malicious. Abstentions are removed before the confusion matrix; accuracy, ECE, Brier,
  cost and AURC are over non-abstained rows; abstain rate is over all scored rows.
- An empty or invalid label (the model gave no parsable Malicious/Benign/Abstain) is **counted as an
  abstention**, as the reference does, and also reported as "unparsed". ` + "`--strict`" + ` refuses such rows.
- Rows whose model call failed (API errors) or whose scoring failed are excluded from every metric and counted.
- ECE: 10 equal-width bins on [0, 1], bin b holds b/10 ≤ c < (b+1)/10, the last bin is closed.
  Brier: mean (confidence − correct)².
- Cost: FN weight 10, FP weight 1; cost-weighted accuracy = 1 − cost / (n × 10) with n the non-abstained rows.
- AURC: thresholds 0.00…1.00 step 0.01; coverage = share of non-abstained rows with confidence ≥ t, risk = error
  rate among them; a threshold nobody reaches counts as coverage 0, risk 0; trapezoid rule over coverage.
- 95% CIs: percentile bootstrap over scored rows (abstentions included), seeded, so reports are reproducible.
`)
	return b.String()
}
