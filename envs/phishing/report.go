package phishing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/metrics"
	"github.com/svbench/svbench/report"
)

// KeyMetricsVersion is E4's report.Spec.KeyMetricsVersion. Version 1
// (issue #44): the key metric "accuracy" is accuracy over every scored row,
// as in E1; accuracy on decided rows, which it was, is accuracy_decided,
// with decided_rate beside it (report.KeyAccuracy and its siblings).
// Version 2 (issue #44 item 4): the key metric "f1", which ranks E4, is F1
// over every scored row (report.KeyF1: an abstention on a phishing email is
// a miss); F1 on decided rows, which it was, is f1_decided. The metrics
// block's detection.f1 is still F1 on decided rows, the reference's.
const KeyMetricsVersion = 2

// ReportMetrics is the E4 block: the reference's planned metrics (precision,
// recall, F1, FNR, FPR, ECE, Brier, abstention, risk-coverage, evidence
// precision) computed the way its E1 report does, plus evidence recall.
type ReportMetrics struct {
	// Detection and Evidence follow report.Rates' rule: an undefined
	// metric (precision with no Phishing call) is null, never 0.
	Detection struct {
		Precision *float64 `json:"precision"`
		Recall    *float64 `json:"recall"`
		F1        *float64 `json:"f1"`
		FNR       *float64 `json:"fnr"`
		FPR       *float64 `json:"fpr"`
		Accuracy  *float64 `json:"accuracy"`
	} `json:"detection"`
	Calibration report.CalibrationBlock `json:"calibration"`
	Cost        report.CostBlock        `json:"cost"`
	Abstention  report.AbstentionBlock  `json:"abstention"`
	Evidence    struct {
		// Precision is the mean grounded share over rows predicted
		// Phishing that gave evidence.
		Precision *float64 `json:"precision"`
		// Recall is the mean share of indicator types covered over
		// Phishing rows with extracted indicators.
		Recall        *float64 `json:"recall"`
		RowsPrecision int      `json:"rows_precision"`
		RowsRecall    int      `json:"rows_recall"`
		MeanItems     float64  `json:"mean_items"`
	} `json:"evidence"`
	Confusion report.ConfusionCounts `json:"confusion_matrix"`
}

// reportTask reads gold answers with the environment's own label reader;
// a gold Abstain (an undecidable message) has no place in a binary
// confusion matrix, so such rows are counted and left out.
var reportTask = report.BinaryTask{Positive: LabelPhishing, Negative: LabelLegitimate,
	Answer: func(raw json.RawMessage) (bool, bool, error) {
		var s string
		if json.Unmarshal(raw, &s) == nil && strings.EqualFold(strings.TrimSpace(s), LabelAbstain) {
			return false, true, nil
		}
		gold, err := parseAnswer(raw)
		if err != nil {
			return false, false, fmt.Errorf("answer %w", err)
		}
		return gold == LabelPhishing, false, nil
	}}

// reportAcc adds evidence quality to the binary accumulator.
type reportAcc struct {
	report.BinaryAcc
	precSum, recSum, its float64
	precN, recN, n       int
}

// add takes an observation and its row: evidence precision counts on rows
// predicted Phishing that gave evidence, recall on Phishing rows.
func (a *reportAcc) add(o report.BinaryObs, r *artifact.Result) {
	a.BinaryAcc.Add(o)
	items, _ := report.Number(r.Parsed["evidence_items"])
	label, _ := r.Parsed["predicted_label"].(string)
	if p, ok := report.Number(r.Parsed["evidence_precision"]); ok && label == LabelPhishing && items > 0 {
		a.precSum += p
		a.precN++
	}
	if rc, ok := report.Number(r.Parsed["evidence_recall"]); ok && o.Positive {
		a.recSum += rc
		a.recN++
	}
	a.its += items
	a.n++
}

func (a *reportAcc) block() ReportMetrics {
	var m ReportMetrics
	c := a.Confusion
	d := report.Rates(c)
	m.Detection.Precision, m.Detection.Recall, m.Detection.F1 = d.Precision, d.TPR, d.F1
	m.Detection.FNR, m.Detection.FPR, m.Detection.Accuracy = d.FNR, d.FPR, d.Accuracy
	m.Calibration, m.Cost, m.Abstention = a.Blocks()
	m.Evidence.Precision = report.Mean(a.precSum, a.precN)
	m.Evidence.Recall = report.Mean(a.recSum, a.recN)
	m.Evidence.RowsPrecision, m.Evidence.RowsRecall = a.precN, a.recN
	m.Evidence.MeanItems = metrics.Div(a.its, float64(a.n))
	m.Confusion = report.CountsOf(c)
	return m
}

// breakdownFields are the meta fields E4 reports break down by.
var breakdownFields = []string{"campaign", "difficulty", "language"}

// ReportGroup is one line of a breakdown table.
type ReportGroup struct {
	report.GroupHead
	// Accuracy and AccuracyDecided are report.KeyAccuracy and
	// report.KeyAccuracyDecided over the group's rows.
	Accuracy        *float64 `json:"accuracy"`
	AccuracyDecided *float64 `json:"accuracy_decided"`
	Recall          *float64 `json:"recall"`
	FPR             *float64 `json:"fpr"`
	AbstainRate     float64  `json:"abstain_rate"`
	ECE             float64  `json:"ece"`
	EvidencePr      *float64 `json:"evidence_precision"`
	MeanReward      float64  `json:"mean_reward"`
	// Positives and EvidenceRows say whether Recall and EvidencePr are
	// defined for the group (a legitimate-only group has no positives).
	Positives    int `json:"positives"`
	EvidenceRows int `json:"evidence_rows"`
}

// BuildReport is the phishing-detection (E4) report.Builder.
func BuildReport(rows []artifact.Result, meta *artifact.Metadata, opts report.Options) (*report.Report, error) {
	b, err := report.ScanBinary(rows, reportTask)
	if err != nil {
		return nil, err
	}
	var all reportAcc
	for k, p := range b.Pos {
		all.add(b.Obs[k], &rows[p])
	}
	block := all.block()
	c := all.Confusion
	accuracy := report.Opt(report.AllRowsAccuracy(c), c.Total() > 0)
	decidedRate := report.Opt(report.DecidedRate(c), c.Total() > 0)
	f1 := report.Opt(report.AllRowsF1(c, b.AbstainedPositives()), report.AllRowsF1Defined(c, b.AbstainedPositives()))
	ci := b.Bootstrap([]string{report.KeyF1, report.KeyF1Decided, report.KeyAccuracy, report.KeyAccuracyDecided, "fnr", "ece"}, []report.BinaryStat{
		report.AllRowsF1Of, report.ConfusionOf(metrics.Confusion.F1), report.ConfusionOf(report.AllRowsAccuracy), report.ConfusionOf(metrics.Confusion.Accuracy), report.ConfusionOf(metrics.Confusion.FNR), report.ECEOf,
	}, meta, opts)
	meanReward, comps := report.RewardStats(rows, b.Pos)
	groups := report.Breakdown(rows, b, breakdownFields, func(h report.GroupHead, obs []report.BinaryObs, rowPos []int) ReportGroup {
		var a reportAcc
		for k, o := range obs {
			a.add(o, &rows[rowPos[k]])
		}
		mr, _ := report.RewardStats(rows, rowPos)
		g := a.block()
		return ReportGroup{GroupHead: h, Accuracy: report.Opt(report.AllRowsAccuracy(a.Confusion), a.Confusion.Total() > 0),
			AccuracyDecided: g.Detection.Accuracy, Recall: g.Detection.Recall,
			FPR: g.Detection.FPR, AbstainRate: g.Abstention.AbstainRate, ECE: g.Calibration.ECE,
			EvidencePr: g.Evidence.Precision, MeanReward: mr,
			Positives: a.Confusion.TP + a.Confusion.FN, EvidenceRows: g.Evidence.RowsPrecision}
	})
	counts := b.Counts(len(rows))
	counts["gold_abstain_rows"] = b.Skipped
	summary := b.Summary(block, ci, counts, meanReward, comps, groups, meta, opts)
	key := []report.KeyMetric{
		report.Key(report.KeyF1, f1, true),
		report.Key(report.KeyF1Decided, block.Detection.F1, true),
		report.Key(report.KeyAccuracy, accuracy, true),
		report.Key(report.KeyAccuracyDecided, block.Detection.Accuracy, true),
		report.Key(report.KeyDecidedRate, decidedRate, true),
		report.Key("fnr", block.Detection.FNR, false),
		{Name: "ece", Value: block.Calibration.ECE, HigherIsBetter: false},
		{Name: "aurc", Value: block.Abstention.AURC, HigherIsBetter: false},
		report.Key("evidence_precision", block.Evidence.Precision, true),
		{Name: "mean_reward", Value: meanReward, HigherIsBetter: true},
	}
	report.AttachCIs(key, ci)
	charts := b.Charts()
	if gs := groups["campaign"]; len(gs) > 0 {
		labels, vals, ns := make([]string, len(gs)), make([]float64, len(gs)), make([]int, len(gs))
		for i, g := range gs {
			labels[i], ns[i] = g.Name, g.N
			if g.AccuracyDecided != nil {
				vals[i] = *g.AccuracyDecided
			}
		}
		c := report.Chart{Name: "campaign_accuracy", Title: report.KeyAccuracyDecided + " by campaign type"}
		c.SVG = report.BarChart(c.Title, report.KeyAccuracyDecided+" (n = rows of the campaign)", labels, vals, ns, true)
		charts = append(charts, c)
	}
	headline := []report.Stat{
		b.RowsStat(),
		{Name: report.KeyF1, Value: report.FCI(ci[report.KeyF1], opts.Reps())},
		{Name: report.KeyF1Decided, Value: report.FCI(ci[report.KeyF1Decided], opts.Reps())},
		{Name: report.KeyAccuracy, Value: report.FCI(ci[report.KeyAccuracy], opts.Reps())},
		{Name: report.KeyAccuracyDecided, Value: report.FCI(ci[report.KeyAccuracyDecided], opts.Reps())},
		{Name: report.KeyDecidedRate, Value: report.FOpt(decidedRate)},
		{Name: "FNR (missed phish)", Value: report.FCI(ci["fnr"], opts.Reps())},
		{Name: "FPR", Value: report.FOpt(block.Detection.FPR)},
		{Name: "ECE", Value: report.FCI(ci["ece"], opts.Reps())},
		{Name: "AURC", Value: report.F(block.Abstention.AURC)},
		{Name: "evidence precision / recall", Value: report.FOpt(block.Evidence.Precision) + " / " + report.FOpt(block.Evidence.Recall)},
		{Name: "abstain rate", Value: report.Pct(block.Abstention.AbstainRate)},
		{Name: "mean reward", Value: report.F(meanReward)},
	}
	r := &report.Report{Summary: summary, Headline: headline, Key: key, Charts: charts, Problems: b.Problems}
	r.Markdown = markdown(meta, block, f1, accuracy, decidedRate, ci, counts, meanReward, comps, groups, charts, opts)
	return r, nil
}

func markdown(meta *artifact.Metadata, m ReportMetrics, f1, accuracy, decidedRate *float64, ci map[string]metrics.CI, counts map[string]int,
	meanReward float64, comps map[string]float64, breakdown map[string][]ReportGroup, charts []report.Chart, opts report.Options) string {
	var b bytes.Buffer
	report.WriteTitle(&b, "E4 phishing detection", meta, counts, report.UnparsedClause(counts)+fmt.Sprintf(", %d gold-Abstain rows excluded", counts["gold_abstain_rows"]))
	reps := opts.Reps()
	b.WriteString("## Headline\n\n")
	b.WriteString(report.Table([]string{"metric", "value", "95% CI"}, [][]string{
		{report.KeyF1, report.FOpt(f1), report.CICell(ci[report.KeyF1], reps)},
		{report.KeyF1Decided, report.FOpt(m.Detection.F1), report.CICell(ci[report.KeyF1Decided], reps)},
		{report.KeyAccuracy, report.FOpt(accuracy), report.CICell(ci[report.KeyAccuracy], reps)},
		{report.KeyAccuracyDecided, report.FOpt(m.Detection.Accuracy), report.CICell(ci[report.KeyAccuracyDecided], reps)},
		{report.KeyDecidedRate, report.FOpt(decidedRate), ""},
		{"FNR (missed phishing)", report.FOpt(m.Detection.FNR), report.CICell(ci["fnr"], reps)},
		{"FPR", report.FOpt(m.Detection.FPR), ""},
		{"ECE (10 bins)", report.F(m.Calibration.ECE), report.CICell(ci["ece"], reps)},
		{"Brier", report.F(m.Calibration.Brier), ""},
		{"AURC", report.F(m.Abstention.AURC), ""},
		{"cost-weighted accuracy (FN 10, FP 1)", report.F(m.Cost.CostWeightedAccuracy), ""},
		{"total cost", fmt.Sprintf("%g", m.Cost.TotalCost), ""},
		{"abstain rate", report.Pct(m.Abstention.AbstainRate), ""},
		{"evidence precision", fmt.Sprintf("%s (%d rows)", report.FOpt(m.Evidence.Precision), m.Evidence.RowsPrecision), ""},
		{"evidence recall", fmt.Sprintf("%s (%d rows)", report.FOpt(m.Evidence.Recall), m.Evidence.RowsRecall), ""},
		{"mean reward", report.F(meanReward), ""},
	}))
	b.WriteString("\n## Detection\n\n")
	b.WriteString(report.Table([]string{"precision", "recall", "FNR", "FPR", report.KeyF1Decided, report.KeyAccuracyDecided}, [][]string{{
		report.FOpt(m.Detection.Precision), report.FOpt(m.Detection.Recall), report.FOpt(m.Detection.FNR), report.FOpt(m.Detection.FPR), report.FOpt(m.Detection.F1), report.FOpt(m.Detection.Accuracy),
	}}))
	report.WriteConfusionAndCharts(&b, m.Confusion, charts)
	for _, field := range breakdownFields {
		gs, ok := breakdown[field]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "## By %s\n\n", field)
		var trs [][]string
		for _, g := range gs {
			recall, evp := report.FOpt(g.Recall), report.FOpt(g.EvidencePr)
			if g.Positives == 0 {
				recall = "—"
			}
			if g.EvidenceRows == 0 {
				evp = "—"
			}
			trs = append(trs, []string{g.Name, fmt.Sprint(g.N), report.FOpt(g.Accuracy), report.FOpt(g.AccuracyDecided), recall, report.FOpt(g.FPR), report.F(g.ECE), report.Pct(g.AbstainRate), evp, report.F(g.MeanReward)})
		}
		b.WriteString(report.Table([]string{field, "n", report.KeyAccuracy, report.KeyAccuracyDecided, "recall", "FPR", "ECE", "abstain", "evidence precision", "mean reward"}, trs))
		b.WriteString("\n")
	}
	report.WriteComponents(&b, comps, meanReward)
	b.WriteString(`## Notes on definitions

- Positive class is Phishing. As in the reference's E1 report, abstentions are removed before the confusion
  matrix; accuracy_decided, f1_decided, precision, recall, FNR, FPR, ECE, Brier, cost and AURC are over
  non-abstained (decided) rows; f1, accuracy, decided_rate and abstain rate are over all scored rows.
- Two F1s (positive class Phishing), one name each: **f1** = 2·TP / (2·TP + FP + FN + abstentions on Phishing
  emails) over every scored row: an abstention on a phishing email is a miss, one on a legitimate email is
  neither a hit nor a false alarm, so abstaining scores as answering Legitimate would and can never raise f1;
  it ranks runs. **f1_decided** = F1 over decided rows (summary.json ` + "`metrics.detection.f1`" + `, the reference's);
  one right Phishing call and abstentions everywhere else make it 1.0, so read it beside decided_rate.
- Three accuracies, one name each (as in E1): **accuracy** = correct / all scored rows (an abstention or unparsed
  answer counts as wrong, so abstaining can never raise it); **accuracy_decided** = correct / decided rows
  (summary.json ` + "`metrics.detection.accuracy`" + ` and ` + "`abstention.accuracy_non_abstained`" + `); **decided_rate** = decided /
  scored rows = 1 − abstain rate. accuracy = decided_rate × accuracy_decided.
  Recall (TPR) is 1 − FNR. In breakdowns "—" marks a recall without positives or an evidence precision
  without rows that gave evidence while predicting Phishing.
- A missing or invalid label is counted as an abstention and reported as "unparsed"; ` + "`--strict`" + ` refuses such rows.
  Rows whose gold answer is Abstain are excluded and counted.
- ECE: 10 equal-width bins, the last closed. Brier: mean (confidence − correct)². Cost: FN 10, FP 1.
  AURC: thresholds 0.00…1.00 step 0.01, trapezoid over coverage.
- Evidence precision: mean share of evidence items grounded in the message and in an extracted indicator of
  the claimed type, over rows predicted Phishing that gave evidence. Evidence recall: mean share of the
  message's indicator types the evidence covered, over Phishing rows with indicators.
- 95% CIs: percentile cluster bootstrap over examples (every rollout of a drawn example comes with it), seeded.
`)
	return b.String()
}
