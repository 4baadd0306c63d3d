package netlogs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/metrics"
	"github.com/svbench/svbench/report"
)

// KeyMetricsVersion is E1's report.Spec.KeyMetricsVersion. Version 1
// (issue #44): "accuracy" is accuracy over every scored row (it was accuracy
// on decided rows, which abstaining games), accuracy_decided and
// decided_rate join it, and accuracy ranks the scoreboard and leaderboard.
// Version 2 (issue #44 item 4, as E4's version 2): the key metric "f1" is F1
// over every scored row (report.KeyF1: an abstention on a Malicious row is a
// miss, one on a Benign row neither); F1 on decided rows, which it was, is
// f1_decided. The metrics block's detection.f1 is still F1 on decided rows,
// the reference's. accuracy still ranks.
const KeyMetricsVersion = 2

// Labels of the accuracy and F1 quantities in every E1 output
// (report.KeyAccuracy, report.KeyF1 and their siblings): the key metric's
// name itself, so report.md, the terminal headline, the scoreboard, the
// leaderboard and the dashboard print one word for one quantity.
const (
	labelAccuracy        = report.KeyAccuracy
	labelAccuracyDecided = report.KeyAccuracyDecided
	labelDecidedRate     = report.KeyDecidedRate
	labelF1              = report.KeyF1
	labelF1Decided       = report.KeyF1Decided
)

// ReferenceEnvironment is E1's name in the reference's summaries.
const ReferenceEnvironment = "sv-env-network-logs"

// ReportMetrics is svbench's own E1 metrics block (summary.json "metrics"):
// the reference's sections and keys, with every value that is undefined on
// the run (a rate over an empty set) nil, written as null. README.md lists
// when each one is undefined.
type ReportMetrics struct {
	Detection struct {
		TPR       *float64 `json:"tpr"`
		FPR       *float64 `json:"fpr"`
		FNR       *float64 `json:"fnr"`
		Precision *float64 `json:"precision"`
		F1        *float64 `json:"f1"`
		Accuracy  *float64 `json:"accuracy"`
	} `json:"detection"`
	Calibration struct {
		ECE   *float64 `json:"ece"`
		Brier *float64 `json:"brier"`
	} `json:"calibration"`
	Cost struct {
		FNWeight             float64  `json:"fn_cost_weight"`
		FPWeight             float64  `json:"fp_cost_weight"`
		TotalCost            float64  `json:"total_cost"`
		CostWeightedAccuracy *float64 `json:"cost_weighted_accuracy"`
	} `json:"cost"`
	Abstention struct {
		AbstainRate          *float64 `json:"abstain_rate"`
		AccuracyNonAbstained *float64 `json:"accuracy_non_abstained"`
		AURC                 *float64 `json:"aurc"`
	} `json:"abstention"`
	Confusion report.ConfusionCounts `json:"confusion_matrix"`
}

// ReferenceMetrics is the reference report generator's E1 block, field for
// field and key for key, with its conventions for empty sets: a ratio with
// nothing to count is 0, FNR is 1 − TPR, and cost-weighted accuracy is 1
// when nothing was decided.
type ReferenceMetrics struct {
	Detection struct {
		TPR       float64 `json:"tpr"`
		FPR       float64 `json:"fpr"`
		FNR       float64 `json:"fnr"`
		Precision float64 `json:"precision"`
		F1        float64 `json:"f1"`
		Accuracy  float64 `json:"accuracy"`
	} `json:"detection"`
	Calibration report.CalibrationBlock `json:"calibration"`
	Cost        report.CostBlock        `json:"cost"`
	Abstention  report.AbstentionBlock  `json:"abstention"`
	Confusion   report.ConfusionCounts  `json:"confusion_matrix"`
}

var reportTask = report.BinaryTask{Positive: LabelMalicious, Negative: LabelBenign,
	Answer: func(raw json.RawMessage) (bool, bool, error) {
		label, err := parseAnswer(raw)
		if err != nil {
			return false, false, fmt.Errorf("answer %w", err)
		}
		return label == LabelMalicious, false, nil
	}}

// ownMetrics fills svbench's block: the reference's formulas wherever they
// are defined, nil elsewhere. F1 is 2·TP / (2·TP + FP + FN), which equals
// the harmonic mean whenever precision and recall are both defined and is 0
// when positives exist but none was found (or only false alarms were
// raised); it is undefined only with no positive gold and no positive call.
func ownMetrics(a *report.BinaryAcc) ReportMetrics {
	var m ReportMetrics
	c, w := a.Confusion, metrics.ReferenceCost
	decided := c.Decided() > 0
	d := report.Rates(c)
	m.Detection.TPR, m.Detection.FPR, m.Detection.FNR = d.TPR, d.FPR, d.FNR
	m.Detection.Precision, m.Detection.F1, m.Detection.Accuracy = d.Precision, d.F1, d.Accuracy
	m.Calibration.ECE = report.Opt(a.Calibration.ECE(), decided)
	m.Calibration.Brier = report.Opt(a.Calibration.Brier(), decided)
	m.Cost.FNWeight, m.Cost.FPWeight, m.Cost.TotalCost = w.FNWeight, w.FPWeight, w.Total(c)
	m.Cost.CostWeightedAccuracy = report.Opt(w.WeightedAccuracy(c), decided)
	m.Abstention.AbstainRate = report.Opt(c.AbstainRate(), c.Total() > 0)
	m.Abstention.AccuracyNonAbstained = m.Detection.Accuracy
	m.Abstention.AURC = report.Opt(a.RiskCoverage.AURC(), decided)
	m.Confusion = report.CountsOf(c)
	return m
}

// referenceMetrics fills the reference's block from an accumulator that
// holds the rows the reference counts.
func referenceMetrics(a *report.BinaryAcc) ReferenceMetrics {
	var m ReferenceMetrics
	c := a.Confusion
	m.Detection.TPR, m.Detection.FPR, m.Detection.FNR = c.TPR(), c.FPR(), c.FNR()
	m.Detection.Precision, m.Detection.F1, m.Detection.Accuracy = c.Precision(), c.F1(), c.Accuracy()
	m.Calibration, m.Cost, m.Abstention = a.Blocks()
	m.Confusion = report.CountsOf(c)
	return m
}

// referenceSummary is the reference generator's summary of the run, or nil
// for a run without rows (which the reference refuses to report). Its rows
// are those the reference counts: rows without a valid label are left out
// (svbench's own block counts them as abstentions), while n_examples counts
// every row of the run, as the reference's does.
func referenceSummary(rows []artifact.Result, b *report.BinaryRun, meta *artifact.Metadata) (*report.ReferenceSummary, ReferenceMetrics) {
	var acc report.BinaryAcc
	for _, o := range b.Obs {
		if !o.Unparsed {
			acc.Add(o)
		}
	}
	m := referenceMetrics(&acc)
	if len(rows) == 0 {
		return nil, m
	}
	return report.NewReferenceSummary(ReferenceEnvironment, meta, rows, len(rows), m), m
}

// breakdownFields are the dataset meta fields E1 reports break down by.
var breakdownFields = []string{"scenario", "difficulty", "attack_family"}

// ReportGroup is one line of a breakdown table; nil values are undefined
// for the group (accuracy_decided of a group that always abstained).
// Accuracy, AccuracyDecided, F1 and F1Decided are report.KeyAccuracy,
// report.KeyAccuracyDecided, report.KeyF1 and report.KeyF1Decided over the
// group's rows.
type ReportGroup struct {
	report.GroupHead
	AbstainRate     *float64 `json:"abstain_rate"`
	Accuracy        *float64 `json:"accuracy"`
	AccuracyDecided *float64 `json:"accuracy_decided"`
	F1              *float64 `json:"f1"`
	F1Decided       *float64 `json:"f1_decided"`
	ECE             *float64 `json:"ece"`
	MeanReward      float64  `json:"mean_reward"`
}

// BuildReport is the network-logs (E1) report.Builder.
func BuildReport(rows []artifact.Result, meta *artifact.Metadata, opts report.Options) (*report.Report, error) {
	b, err := report.ScanBinary(rows, reportTask)
	if err != nil {
		return nil, err
	}
	block := ownMetrics(&b.All)
	c := b.All.Confusion
	scored := len(b.Obs) > 0
	accuracy := report.Opt(report.AllRowsAccuracy(c), scored)
	decidedRate := report.Opt(report.DecidedRate(c), scored)
	f1 := report.Opt(report.AllRowsF1(c, b.AbstainedPositives()), report.AllRowsF1Defined(c, b.AbstainedPositives()))
	ci := b.Bootstrap([]string{report.KeyAccuracy, report.KeyAccuracyDecided, report.KeyF1, report.KeyF1Decided, "ece"}, []report.BinaryStat{
		report.ConfusionOf(report.AllRowsAccuracy), report.ConfusionOf(metrics.Confusion.Accuracy), report.AllRowsF1Of, report.ConfusionOf(metrics.Confusion.F1), report.ECEOf,
	}, meta, opts)
	// An interval around an undefined point would read as a score.
	for name, v := range map[string]*float64{report.KeyAccuracy: accuracy, report.KeyAccuracyDecided: block.Detection.Accuracy,
		report.KeyF1: f1, report.KeyF1Decided: block.Detection.F1, "ece": block.Calibration.ECE} {
		if v == nil {
			delete(ci, name)
		}
	}
	meanReward, comps := report.RewardStats(rows, b.Pos)
	groups := report.Breakdown(rows, b, breakdownFields, func(h report.GroupHead, obs []report.BinaryObs, rowPos []int) ReportGroup {
		var a report.BinaryAcc
		abstainedPos := 0
		for _, o := range obs {
			a.Add(o)
			if o.Outcome == metrics.Abstain && o.Positive {
				abstainedPos++
			}
		}
		g := ownMetrics(&a)
		mr, _ := report.RewardStats(rows, rowPos)
		return ReportGroup{GroupHead: h, AbstainRate: g.Abstention.AbstainRate,
			Accuracy: report.Opt(report.AllRowsAccuracy(a.Confusion), len(obs) > 0), AccuracyDecided: g.Detection.Accuracy,
			F1:        report.Opt(report.AllRowsF1(a.Confusion, abstainedPos), report.AllRowsF1Defined(a.Confusion, abstainedPos)),
			F1Decided: g.Detection.F1, ECE: g.Calibration.ECE, MeanReward: mr}
	})
	counts := b.Counts(len(rows))
	summary := b.Summary(block, ci, counts, meanReward, comps, groups, meta, opts)
	ref, refBlock := referenceSummary(rows, b, meta)
	if ref != nil {
		summary[report.ReferenceSummaryKey] = ref
	}
	// The first key ranks the scoreboard and the leaderboard: accuracy over
	// every row, which an abstention can only lower. accuracy_decided
	// stands beside it with its decided_rate, never first: a model that
	// abstains on all rows but one it gets right has accuracy_decided 1.
	// f1 (every scored row, an abstention on a Malicious row a miss) and
	// f1_decided (the reference's detection.f1) follow, as in E4.
	key := []report.KeyMetric{
		report.Key(report.KeyAccuracy, accuracy, true),
		report.Key(report.KeyAccuracyDecided, block.Detection.Accuracy, true),
		report.Key(report.KeyDecidedRate, decidedRate, true),
		report.Key(report.KeyF1, f1, true),
		report.Key(report.KeyF1Decided, block.Detection.F1, true),
		report.Key("ece", block.Calibration.ECE, false),
		report.Key("aurc", block.Abstention.AURC, false),
		report.Key("cost_weighted_accuracy", block.Cost.CostWeightedAccuracy, true),
		report.Key("mean_reward", report.Opt(meanReward, scored), true),
	}
	report.AttachCIs(key, ci)
	charts := b.Charts()
	withCI := func(name string, v *float64) string {
		if v == nil {
			return "n/a"
		}
		return report.FCI(ci[name], opts.Reps())
	}
	headline := []report.Stat{
		b.RowsStat(),
		{Name: labelAccuracy, Value: withCI(report.KeyAccuracy, accuracy)},
		{Name: labelAccuracyDecided, Value: withCI(report.KeyAccuracyDecided, block.Detection.Accuracy)},
		{Name: labelDecidedRate, Value: report.FOpt(decidedRate)},
		{Name: labelF1, Value: withCI(report.KeyF1, f1)},
		{Name: labelF1Decided, Value: withCI(report.KeyF1Decided, block.Detection.F1)},
		{Name: "ECE", Value: withCI("ece", block.Calibration.ECE)},
		{Name: "AURC", Value: report.FOpt(block.Abstention.AURC)},
		{Name: "cost-weighted accuracy", Value: report.FOpt(block.Cost.CostWeightedAccuracy)},
		{Name: "abstain rate", Value: report.PctOpt(block.Abstention.AbstainRate)},
		{Name: "mean reward", Value: report.FOpt(report.Opt(meanReward, scored))},
	}
	r := &report.Report{Summary: summary, Headline: headline, Key: key, Charts: charts, Problems: b.Problems}
	r.Markdown = markdown(meta, block, f1, accuracy, decidedRate, ref, refBlock, b.Unparsed, ci, counts, meanReward, comps, groups, charts, opts)
	return r, nil
}

func markdown(meta *artifact.Metadata, m ReportMetrics, f1, accuracy, decidedRate *float64, ref *report.ReferenceSummary, rm ReferenceMetrics, unparsed int,
	ci map[string]metrics.CI, counts map[string]int, meanReward float64, comps map[string]float64,
	breakdown map[string][]ReportGroup, charts []report.Chart, opts report.Options) string {
	var b bytes.Buffer
	report.WriteTitle(&b, "E1 network logs", meta, counts, report.UnparsedClause(counts))

	b.WriteString("## Headline\n\n")
	reps := opts.Reps()
	ciCell := func(name string) string {
		if c, ok := ci[name]; ok {
			return report.CICell(c, reps)
		}
		return ""
	}
	b.WriteString(report.Table([]string{"metric", "value", "95% CI"}, [][]string{
		{labelAccuracy, report.FOpt(accuracy), ciCell(report.KeyAccuracy)},
		{labelAccuracyDecided, report.FOpt(m.Detection.Accuracy), ciCell(report.KeyAccuracyDecided)},
		{labelDecidedRate, report.FOpt(decidedRate), ""},
		{labelF1, report.FOpt(f1), ciCell(report.KeyF1)},
		{labelF1Decided, report.FOpt(m.Detection.F1), ciCell(report.KeyF1Decided)},
		{"ECE (10 bins)", report.FOpt(m.Calibration.ECE), ciCell("ece")},
		{"Brier", report.FOpt(m.Calibration.Brier), ""},
		{"AURC", report.FOpt(m.Abstention.AURC), ""},
		{"cost-weighted accuracy (FN 10, FP 1)", report.FOpt(m.Cost.CostWeightedAccuracy), ""},
		{"total cost", fmt.Sprintf("%g", m.Cost.TotalCost), ""},
		{"abstain rate", report.PctOpt(m.Abstention.AbstainRate), ""},
		{"mean reward", report.FOpt(report.Opt(meanReward, counts["scored"] > 0)), ""},
	}))

	b.WriteString("\n## Detection\n\n")
	b.WriteString(report.Table([]string{"TPR", "FPR", "FNR", "precision", labelF1Decided, labelAccuracyDecided}, [][]string{{
		report.FOpt(m.Detection.TPR), report.FOpt(m.Detection.FPR), report.FOpt(m.Detection.FNR),
		report.FOpt(m.Detection.Precision), report.FOpt(m.Detection.F1), report.FOpt(m.Detection.Accuracy),
	}}))
	report.WriteConfusionAndCharts(&b, m.Confusion, charts)

	for _, field := range breakdownFields {
		gs, ok := breakdown[field]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "## By %s\n\n", strings.ReplaceAll(field, "_", " "))
		var rows [][]string
		for _, g := range gs {
			rows = append(rows, []string{g.Name, fmt.Sprint(g.N), report.FOpt(g.Accuracy), report.FOpt(g.AccuracyDecided), report.FOpt(g.F1), report.FOpt(g.F1Decided), report.FOpt(g.ECE), report.PctOpt(g.AbstainRate), report.F(g.MeanReward)})
		}
		b.WriteString(report.Table([]string{field, "n", labelAccuracy, labelAccuracyDecided, labelF1, labelF1Decided, "ECE", "abstain", "mean reward"}, rows))
		b.WriteString("\n")
	}

	report.WriteComponents(&b, comps, meanReward)
	writeReferenceSection(&b, m, ref, rm, unparsed)

	b.WriteString(`## Notes on definitions

- Positive class is Malicious. Abstentions are removed before the confusion matrix; accuracy_decided,
  f1_decided, precision, TPR, FPR, FNR, ECE, Brier, cost and AURC are over non-abstained (decided) rows; accuracy,
  f1, decided_rate and abstain rate are over all scored rows.
- Two F1s (positive class Malicious), one name each (as in E4): **f1** = 2·TP / (2·TP + FP + FN + abstentions on
  Malicious rows) over every scored row: an abstention on a Malicious row is a miss, one on a Benign row is neither
  a hit nor a false alarm, so abstaining scores as answering Benign would and can never raise f1.
  **f1_decided** = 2·TP / (2·TP + FP + FN) over decided rows (summary.json ` + "`metrics.detection.f1`" + `, the
  reference's); one right Malicious call and abstentions everywhere else make it 1.0, so read it beside decided_rate.
- Three accuracies, one name each in report.md, summary.json, the scoreboard, the leaderboard and the dashboard:
  **accuracy** = correct / all scored rows (an abstention or unparsed answer counts as wrong, so abstaining can
  never raise it; it ranks runs, and the ` + "`default`" + ` rubric's ` + "`accuracy`" + ` reward component has this mean);
  **accuracy_decided** = correct / decided rows (the reference's ` + "`detection.accuracy`" + ` and
  ` + "`abstention.accuracy_non_abstained`" + ` in summary.json ` + "`metrics`" + `; abstaining on every row but one right answer
  makes it 1.0, so read it beside decided_rate); **decided_rate** = decided / scored rows = 1 − abstain rate.
  accuracy = decided_rate × accuracy_decided.
- An empty or invalid label (the model gave no parsable Malicious/Benign/Abstain) is **counted as an
  abstention** and also reported as "unparsed"; ` + "`--strict`" + ` refuses such rows. The reference's report generator
  leaves such rows out instead (see the reference-comparable summary).
- Rows whose model call failed (API errors) or whose scoring failed are excluded from every metric and counted.
- ECE: 10 equal-width bins on [0, 1], bin b holds b/10 ≤ c < (b+1)/10, the last bin is closed.
  Brier: mean (confidence − correct)².
- Cost: FN weight 10, FP weight 1; cost-weighted accuracy = 1 − cost / (n × 10) with n the non-abstained rows.
- AURC: thresholds 0.00…1.00 step 0.01; coverage = share of non-abstained rows with confidence ≥ t, risk = error
  rate among them; a threshold nobody reaches counts as coverage 0, risk 0; trapezoid rule over coverage.
- n/a marks a value with nothing to compute it from (precision when nothing was called Malicious, anything
  over decided rows when every row abstained); summary.json writes it as null.
- 95% CIs: percentile cluster bootstrap over examples (every rollout of a drawn example comes with it; abstentions included), seeded, so reports are reproducible.
`)
	return b.String()
}

// writeReferenceSection sets svbench's figures beside the reference
// generator's and says why they can differ.
func writeReferenceSection(b *bytes.Buffer, m ReportMetrics, ref *report.ReferenceSummary, rm ReferenceMetrics, unparsed int) {
	b.WriteString("## Reference-comparable summary\n\n")
	if ref == nil {
		b.WriteString("No rows, so no `reference_summary` (the reference refuses to report an empty run).\n\n")
		return
	}
	fmt.Fprintf(b, "summary.json `%s` is the reference report generator's summary (%s, metrics version %s, %d examples), "+
		"computed with its definitions. They differ from svbench's own on purpose in two places: rows without a valid label "+
		"are left out there (%d here) but count as abstentions in svbench's block, and where a value is undefined the reference "+
		"writes 0 (FNR 1, cost-weighted accuracy 1) while svbench writes n/a.\n\n",
		report.ReferenceSummaryKey, ref.Environment, ref.Version, ref.NExamples, unparsed)
	b.WriteString(report.Table([]string{"metric", "svbench", "reference"}, [][]string{
		{labelAccuracyDecided + " (detection.accuracy)", report.FOpt(m.Detection.Accuracy), report.F(rm.Detection.Accuracy)},
		{"precision", report.FOpt(m.Detection.Precision), report.F(rm.Detection.Precision)},
		{"TPR", report.FOpt(m.Detection.TPR), report.F(rm.Detection.TPR)},
		{"FPR", report.FOpt(m.Detection.FPR), report.F(rm.Detection.FPR)},
		{"FNR", report.FOpt(m.Detection.FNR), report.F(rm.Detection.FNR)},
		{labelF1Decided + " (detection.f1)", report.FOpt(m.Detection.F1), report.F(rm.Detection.F1)},
		{"ECE", report.FOpt(m.Calibration.ECE), report.F(rm.Calibration.ECE)},
		{"Brier", report.FOpt(m.Calibration.Brier), report.F(rm.Calibration.Brier)},
		{"cost-weighted accuracy", report.FOpt(m.Cost.CostWeightedAccuracy), report.F(rm.Cost.CostWeightedAccuracy)},
		{"abstain rate", report.FOpt(m.Abstention.AbstainRate), report.F(rm.Abstention.AbstainRate)},
		{"AURC", report.FOpt(m.Abstention.AURC), report.F(rm.Abstention.AURC)},
	}))
	b.WriteString("\n")
}
