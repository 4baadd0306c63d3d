package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/metrics"
)

func init() { Register(EnvPhishingDetection, BuildE4) }

// E4Metrics is the E4 block: the reference's planned metrics (precision,
// recall, F1, FNR, FPR, ECE, Brier, abstention, risk-coverage, evidence
// precision) computed the way its E1 report does, plus evidence recall.
type E4Metrics struct {
	Detection struct {
		Precision float64 `json:"precision"`
		Recall    float64 `json:"recall"`
		F1        float64 `json:"f1"`
		FNR       float64 `json:"fnr"`
		FPR       float64 `json:"fpr"`
		Accuracy  float64 `json:"accuracy"`
	} `json:"detection"`
	Calibration CalibrationBlock `json:"calibration"`
	Cost        CostBlock        `json:"cost"`
	Abstention  AbstentionBlock  `json:"abstention"`
	Evidence    struct {
		// Precision is the mean grounded share over rows predicted
		// Phishing that gave evidence.
		Precision float64 `json:"precision"`
		// Recall is the mean share of indicator types covered over
		// Phishing rows with extracted indicators.
		Recall        float64 `json:"recall"`
		RowsPrecision int     `json:"rows_precision"`
		RowsRecall    int     `json:"rows_recall"`
		MeanItems     float64 `json:"mean_items"`
	} `json:"evidence"`
	Confusion ConfusionCounts `json:"confusion_matrix"`
}

// E4Answer reads an E4 answer: Phishing / Legitimate / Abstain in any case,
// or the reference's 1/0.
func E4Answer(raw json.RawMessage) (string, error) {
	switch string(bytes.TrimSpace(raw)) {
	case `"Phishing"`, "1":
		return "Phishing", nil
	case `"Legitimate"`, "0":
		return "Legitimate", nil
	case `"Abstain"`:
		return "Abstain", nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", fmt.Errorf("answer missing or not JSON")
	}
	if s, ok := v.(string); ok {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "phishing":
			return "Phishing", nil
		case "legitimate":
			return "Legitimate", nil
		case "abstain":
			return "Abstain", nil
		}
	}
	return "", fmt.Errorf("answer %s is not Phishing/Legitimate/Abstain or 1/0", clip(string(raw), 60))
}

var e4Task = binaryTask{Positive: "Phishing", Negative: "Legitimate",
	Answer: func(raw json.RawMessage) (bool, bool, error) {
		gold, err := E4Answer(raw)
		// Undecidable rows have no place in a binary confusion matrix.
		return gold == "Phishing", gold == "Abstain", err
	}}

// e4Acc adds evidence quality to the binary accumulator.
type e4Acc struct {
	binaryAcc
	precSum, recSum, its float64
	precN, recN, n       int
}

// add takes an observation and its row: evidence precision counts on rows
// predicted Phishing that gave evidence, recall on Phishing rows.
func (a *e4Acc) add(o binaryObs, r *artifact.Result) {
	a.binaryAcc.add(o)
	items, _ := num(r.Parsed["evidence_items"])
	label, _ := r.Parsed["predicted_label"].(string)
	if p, ok := num(r.Parsed["evidence_precision"]); ok && label == "Phishing" && items > 0 {
		a.precSum += p
		a.precN++
	}
	if rc, ok := num(r.Parsed["evidence_recall"]); ok && o.positive {
		a.recSum += rc
		a.recN++
	}
	a.its += items
	a.n++
}

func (a *e4Acc) block() E4Metrics {
	var m E4Metrics
	c := a.conf
	m.Detection.Precision, m.Detection.Recall, m.Detection.F1 = c.Precision(), c.TPR(), c.F1()
	m.Detection.FNR, m.Detection.FPR, m.Detection.Accuracy = c.FNR(), c.FPR(), c.Accuracy()
	m.Calibration, m.Cost, m.Abstention = a.blocks()
	m.Evidence.Precision = metrics.Div(a.precSum, float64(a.precN))
	m.Evidence.Recall = metrics.Div(a.recSum, float64(a.recN))
	m.Evidence.RowsPrecision, m.Evidence.RowsRecall = a.precN, a.recN
	m.Evidence.MeanItems = metrics.Div(a.its, float64(a.n))
	m.Confusion = countsOf(c)
	return m
}

// e4BreakdownFields are the meta fields E4 reports break down by.
var e4BreakdownFields = []string{"campaign", "difficulty", "language"}

// E4Group is one line of a breakdown table.
type E4Group struct {
	groupHead
	Accuracy    float64 `json:"accuracy"`
	Recall      float64 `json:"recall"`
	FPR         float64 `json:"fpr"`
	AbstainRate float64 `json:"abstain_rate"`
	ECE         float64 `json:"ece"`
	EvidencePr  float64 `json:"evidence_precision"`
	MeanReward  float64 `json:"mean_reward"`
	// Positives and EvidenceRows say whether Recall and EvidencePr are
	// defined for the group (a legitimate-only group has no positives).
	Positives    int `json:"positives"`
	EvidenceRows int `json:"evidence_rows"`
}

// BuildE4 is the phishing-detection (E4) Builder.
func BuildE4(rows []artifact.Result, meta *artifact.Metadata, opts Options) (*Report, error) {
	b, err := scanBinary(rows, e4Task)
	if err != nil {
		return nil, err
	}
	var all e4Acc
	for k, p := range b.pos {
		all.add(b.obs[k], &rows[p])
	}
	block := all.block()
	ci := b.bootstrap([]string{"accuracy", "f1", "fnr", "ece"}, []metrics.Stat{
		b.confusionStat(metrics.Confusion.Accuracy), b.confusionStat(metrics.Confusion.F1), b.confusionStat(metrics.Confusion.FNR), b.eceStat,
	}, meta, opts)
	meanReward, comps := RewardStats(rows, b.pos)
	groups := breakdown(rows, b, e4BreakdownFields, func(h groupHead, obs []binaryObs, rowPos []int) E4Group {
		var a e4Acc
		for k, o := range obs {
			a.add(o, &rows[rowPos[k]])
		}
		mr, _ := RewardStats(rows, rowPos)
		g := a.block()
		return E4Group{groupHead: h, Accuracy: g.Detection.Accuracy, Recall: g.Detection.Recall,
			FPR: g.Detection.FPR, AbstainRate: g.Abstention.AbstainRate, ECE: g.Calibration.ECE,
			EvidencePr: g.Evidence.Precision, MeanReward: mr,
			Positives: a.conf.TP + a.conf.FN, EvidenceRows: g.Evidence.RowsPrecision}
	})
	counts := b.counts(len(rows))
	counts["gold_abstain_rows"] = b.skipped
	summary := b.summary(block, ci, counts, meanReward, comps, groups, meta, opts)
	key := []KeyMetric{
		{"f1", block.Detection.F1, true},
		{"accuracy", block.Detection.Accuracy, true},
		{"fnr", block.Detection.FNR, false},
		{"ece", block.Calibration.ECE, false},
		{"aurc", block.Abstention.AURC, false},
		{"evidence_precision", block.Evidence.Precision, true},
		{"mean_reward", meanReward, true},
	}
	charts := b.charts()
	if gs := groups["campaign"]; len(gs) > 0 {
		labels, vals := make([]string, len(gs)), make([]float64, len(gs))
		for i, g := range gs {
			labels[i], vals[i] = g.Name, g.Accuracy
		}
		c := Chart{Name: "campaign_accuracy", Title: "Accuracy by campaign type (non-abstained)"}
		c.SVG = BarChart(c.Title, labels, vals, true)
		charts = append(charts, c)
	}
	headline := []Stat{
		b.rowsStat(),
		{"F1 (Phishing)", FCI(ci["f1"])},
		{"accuracy (decided)", FCI(ci["accuracy"])},
		{"FNR (missed phish)", FCI(ci["fnr"])},
		{"FPR", F(block.Detection.FPR)},
		{"ECE", FCI(ci["ece"])},
		{"AURC", F(block.Abstention.AURC)},
		{"evidence precision / recall", F(block.Evidence.Precision) + " / " + F(block.Evidence.Recall)},
		{"abstain rate", Pct(block.Abstention.AbstainRate)},
		{"mean reward", F(meanReward)},
	}
	r := &Report{Summary: summary, Headline: headline, Key: key, Charts: charts, Problems: b.problems}
	r.Markdown = e4Markdown(meta, block, ci, counts, meanReward, comps, groups, charts, opts)
	return r, nil
}

func e4Markdown(meta *artifact.Metadata, m E4Metrics, ci map[string]metrics.CI, counts map[string]int,
	meanReward float64, comps map[string]float64, breakdown map[string][]E4Group, charts []Chart, opts Options) string {
	var b bytes.Buffer
	writeTitle(&b, "E4 phishing detection", meta, counts, fmt.Sprintf(", %d gold-Abstain rows excluded", counts["gold_abstain_rows"]))
	reps := opts.Reps()
	b.WriteString("## Headline\n\n")
	b.WriteString(Table([]string{"metric", "value", "95% CI"}, [][]string{
		{"F1 (Phishing)", F(m.Detection.F1), ciCell(ci["f1"], reps)},
		{"accuracy (non-abstained)", F(m.Detection.Accuracy), ciCell(ci["accuracy"], reps)},
		{"FNR (missed phishing)", F(m.Detection.FNR), ciCell(ci["fnr"], reps)},
		{"FPR", F(m.Detection.FPR), ""},
		{"ECE (10 bins)", F(m.Calibration.ECE), ciCell(ci["ece"], reps)},
		{"Brier", F(m.Calibration.Brier), ""},
		{"AURC", F(m.Abstention.AURC), ""},
		{"cost-weighted accuracy (FN 10, FP 1)", F(m.Cost.CostWeightedAccuracy), ""},
		{"total cost", fmt.Sprintf("%g", m.Cost.TotalCost), ""},
		{"abstain rate", Pct(m.Abstention.AbstainRate), ""},
		{"evidence precision", fmt.Sprintf("%s (%d rows)", F(m.Evidence.Precision), m.Evidence.RowsPrecision), ""},
		{"evidence recall", fmt.Sprintf("%s (%d rows)", F(m.Evidence.Recall), m.Evidence.RowsRecall), ""},
		{"mean reward", F(meanReward), ""},
	}))
	b.WriteString("\n## Detection\n\n")
	b.WriteString(Table([]string{"precision", "recall", "F1", "FNR", "FPR", "accuracy"}, [][]string{{
		F(m.Detection.Precision), F(m.Detection.Recall), F(m.Detection.F1), F(m.Detection.FNR), F(m.Detection.FPR), F(m.Detection.Accuracy),
	}}))
	writeConfusionAndCharts(&b, m.Confusion, charts)
	for _, field := range e4BreakdownFields {
		gs, ok := breakdown[field]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "## By %s\n\n", field)
		var trs [][]string
		for _, g := range gs {
			recall, evp := F(g.Recall), F(g.EvidencePr)
			if g.Positives == 0 {
				recall = "—"
			}
			if g.EvidenceRows == 0 {
				evp = "—"
			}
			trs = append(trs, []string{g.Name, fmt.Sprint(g.N), F(g.Accuracy), recall, F(g.FPR), F(g.ECE), Pct(g.AbstainRate), evp, F(g.MeanReward)})
		}
		b.WriteString(Table([]string{field, "n", "accuracy", "recall", "FPR", "ECE", "abstain", "evidence precision", "mean reward"}, trs))
		b.WriteString("\n")
	}
	writeComponents(&b, comps, meanReward)
	b.WriteString(`## Notes on definitions

- Positive class is Phishing. As in the reference's E1 report, abstentions are removed before the confusion
  matrix; accuracy, ECE, Brier, cost and AURC are over non-abstained rows; abstain rate is over all scored rows.
  Recall (TPR) is 1 − FNR. In breakdowns "—" marks a recall without positives or an evidence precision
  without rows that gave evidence while predicting Phishing.
- A missing or invalid label is counted as an abstention and reported as "unparsed"; ` + "`--strict`" + ` refuses such rows.
  Rows whose gold answer is Abstain are excluded and counted.
- ECE: 10 equal-width bins, the last closed. Brier: mean (confidence − correct)². Cost: FN 10, FP 1.
  AURC: thresholds 0.00…1.00 step 0.01, trapezoid over coverage.
- Evidence precision: mean share of evidence items grounded in the message and in an extracted indicator of
  the claimed type, over rows predicted Phishing that gave evidence. Evidence recall: mean share of the
  message's indicator types the evidence covered, over Phishing rows with indicators.
- 95% CIs: percentile bootstrap over scored rows, seeded.
`)
	return b.String()
}
