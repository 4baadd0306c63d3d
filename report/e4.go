package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
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
	Calibration struct {
		ECE   float64 `json:"ece"`
		Brier float64 `json:"brier"`
	} `json:"calibration"`
	Cost struct {
		FNWeight             float64 `json:"fn_cost_weight"`
		FPWeight             float64 `json:"fp_cost_weight"`
		TotalCost            float64 `json:"total_cost"`
		CostWeightedAccuracy float64 `json:"cost_weighted_accuracy"`
	} `json:"cost"`
	Abstention struct {
		AbstainRate          float64 `json:"abstain_rate"`
		AccuracyNonAbstained float64 `json:"accuracy_non_abstained"`
		AURC                 float64 `json:"aurc"`
	} `json:"abstention"`
	Evidence struct {
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
	Confusion struct {
		TP      int `json:"tp"`
		TN      int `json:"tn"`
		FP      int `json:"fp"`
		FN      int `json:"fn"`
		Abstain int `json:"abstain"`
	} `json:"confusion_matrix"`
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

type e4Obs struct {
	out       metrics.Outcome
	conf      float64
	phishing  bool
	evPrec    float64
	hasPrec   bool
	evRecall  float64
	hasRecall bool
	items     float64
}

func (o e4Obs) correct() bool { return o.out == metrics.TP || o.out == metrics.TN }

type e4Acc struct {
	conf                 metrics.Confusion
	cal                  metrics.Calibration
	rc                   metrics.RiskCoverage
	precSum, recSum, its float64
	precN, recN, n       int
}

func (a *e4Acc) add(o e4Obs) {
	a.conf.Add(o.out)
	if o.out != metrics.Abstain {
		a.cal.Add(o.conf, o.correct())
		a.rc.Add(o.conf, o.correct())
	}
	if o.hasPrec {
		a.precSum += o.evPrec
		a.precN++
	}
	if o.hasRecall {
		a.recSum += o.evRecall
		a.recN++
	}
	a.its += o.items
	a.n++
}

func (a *e4Acc) block() E4Metrics {
	var m E4Metrics
	c := a.conf
	m.Detection.Precision, m.Detection.Recall, m.Detection.F1 = c.Precision(), c.TPR(), c.F1()
	m.Detection.FNR, m.Detection.FPR, m.Detection.Accuracy = c.FNR(), c.FPR(), c.Accuracy()
	m.Calibration.ECE, m.Calibration.Brier = a.cal.ECE(), a.cal.Brier()
	w := metrics.ReferenceCost
	m.Cost.FNWeight, m.Cost.FPWeight = w.FNWeight, w.FPWeight
	m.Cost.TotalCost, m.Cost.CostWeightedAccuracy = w.Total(c), w.WeightedAccuracy(c)
	m.Abstention.AbstainRate, m.Abstention.AccuracyNonAbstained = c.AbstainRate(), c.Accuracy()
	m.Abstention.AURC = a.rc.AURC()
	m.Evidence.Precision = metrics.Div(a.precSum, float64(a.precN))
	m.Evidence.Recall = metrics.Div(a.recSum, float64(a.recN))
	m.Evidence.RowsPrecision, m.Evidence.RowsRecall = a.precN, a.recN
	m.Evidence.MeanItems = metrics.Div(a.its, float64(a.n))
	m.Confusion.TP, m.Confusion.TN, m.Confusion.FP, m.Confusion.FN, m.Confusion.Abstain = c.TP, c.TN, c.FP, c.FN, c.Abstain
	return m
}

func num(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// e4BreakdownFields are the meta fields E4 reports break down by.
var e4BreakdownFields = []string{"campaign", "difficulty", "language"}

// E4Group is one line of a breakdown table.
type E4Group struct {
	Name        string  `json:"name"`
	N           int     `json:"n"`
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
	var (
		obs                             []e4Obs
		pos                             []int
		problems                        []Problem
		errRows, scoreErrRows, unparsed int
		goldAbstain, explicitAbst       int
		abstainPhish, abstainLegit      int
		all                             e4Acc
	)
	for i := range rows {
		r := &rows[i]
		prob := Problem{Row: i, Index: r.Index, Rollout: r.Rollout}
		if r.Error != "" {
			errRows++
			prob.Kind, prob.Detail = ProblemError, clip(r.Error, 160)
			problems = append(problems, prob)
			continue
		}
		if r.ScoreError != "" {
			scoreErrRows++
			prob.Kind, prob.Detail = ProblemScoreError, clip(r.ScoreError, 160)
			problems = append(problems, prob)
			continue
		}
		gold, err := E4Answer(r.Answer)
		if err != nil {
			return nil, fmt.Errorf("row %d (index %d, rollout %d): %w; check the dataset's answer field", i+1, r.Index, r.Rollout, err)
		}
		if gold == "Abstain" {
			// Undecidable rows have no place in a binary confusion matrix.
			goldAbstain++
			continue
		}
		phish := gold == "Phishing"
		o := e4Obs{phishing: phish}
		if c, ok := num(r.Parsed["confidence"]); ok {
			o.conf = metrics.ClampUnit(c)
		}
		label, _ := r.Parsed["predicted_label"].(string)
		switch label {
		case "Phishing":
			o.out = metrics.Classify(true, phish, false)
		case "Legitimate":
			o.out = metrics.Classify(false, phish, false)
		case "Abstain":
			o.out = metrics.Abstain
			explicitAbst++
		default:
			o.out = metrics.Abstain
			unparsed++
			prob.Kind, prob.Detail = ProblemUnparsed, "no valid label (counted as abstain)"
			problems = append(problems, prob)
		}
		if o.out == metrics.Abstain {
			if phish {
				abstainPhish++
			} else {
				abstainLegit++
			}
		}
		o.items, _ = num(r.Parsed["evidence_items"])
		if p, ok := num(r.Parsed["evidence_precision"]); ok && label == "Phishing" && o.items > 0 {
			o.evPrec, o.hasPrec = p, true
		}
		if rc, ok := num(r.Parsed["evidence_recall"]); ok && phish {
			o.evRecall, o.hasRecall = rc, true
		}
		all.add(o)
		obs = append(obs, o)
		pos = append(pos, i)
	}
	block := all.block()

	confStat := func(f func(metrics.Confusion) float64) metrics.Stat {
		return func(idx []int) float64 {
			var c metrics.Confusion
			for _, k := range idx {
				c.Add(obs[k].out)
			}
			return f(c)
		}
	}
	eceStat := func(idx []int) float64 {
		var cal metrics.Calibration
		for _, k := range idx {
			if o := obs[k]; o.out != metrics.Abstain {
				cal.Add(o.conf, o.correct())
			}
		}
		return cal.ECE()
	}
	cis := metrics.BootstrapMulti(len(obs), []metrics.Stat{
		confStat(metrics.Confusion.Accuracy), confStat(metrics.Confusion.F1), confStat(metrics.Confusion.FNR), eceStat,
	}, opts.Reps(), opts.BootstrapSeed(meta))
	ci := map[string]metrics.CI{"accuracy": cis[0], "f1": cis[1], "fnr": cis[2], "ece": cis[3]}

	meanReward, comps := RewardStats(rows, pos)
	obsOf := make(map[int]int, len(pos))
	for k, p := range pos {
		obsOf[p] = k
	}
	breakdown := map[string][]E4Group{}
	for _, field := range e4BreakdownFields {
		names, groups := GroupBy(rows, pos, field)
		if names == nil {
			continue
		}
		var gs []E4Group
		for _, name := range names {
			var a e4Acc
			for _, p := range groups[name] {
				a.add(obs[obsOf[p]])
			}
			mr, _ := RewardStats(rows, groups[name])
			b := a.block()
			gs = append(gs, E4Group{
				Name: name, N: len(groups[name]), Accuracy: b.Detection.Accuracy, Recall: b.Detection.Recall,
				FPR: b.Detection.FPR, AbstainRate: b.Abstention.AbstainRate, ECE: b.Calibration.ECE,
				EvidencePr: b.Evidence.Precision, MeanReward: mr,
				Positives: a.conf.TP + a.conf.FN, EvidenceRows: b.Evidence.RowsPrecision,
			})
		}
		sort.SliceStable(gs, func(i, j int) bool {
			if ni, nj := gs[i].Name == "(none)", gs[j].Name == "(none)"; ni != nj {
				return nj
			}
			return gs[i].N > gs[j].N
		})
		breakdown[field] = gs
	}

	curve := all.rc.Curve()
	bins := all.cal.Bins()
	counts := map[string]int{
		"rows": len(rows), "scored": len(obs), "error_rows": errRows, "score_error_rows": scoreErrRows,
		"unparsed_rows": unparsed, "abstained_explicit": explicitAbst, "gold_abstain_rows": goldAbstain,
	}
	summary := map[string]any{
		"metrics":        block,
		"ci95":           ci,
		"counts":         counts,
		"bootstrap":      map[string]any{"reps": opts.Reps(), "seed": opts.BootstrapSeed(meta), "method": "percentile, resampling scored rows"},
		"reward":         map[string]any{"mean": meanReward, "components": comps},
		"breakdown":      breakdown,
		"reliability":    bins,
		"risk_coverage":  curve,
		"unparsed_label": "abstain",
	}
	key := []KeyMetric{
		{"f1", block.Detection.F1, true},
		{"accuracy", block.Detection.Accuracy, true},
		{"fnr", block.Detection.FNR, false},
		{"ece", block.Calibration.ECE, false},
		{"aurc", block.Abstention.AURC, false},
		{"evidence_precision", block.Evidence.Precision, true},
		{"mean_reward", meanReward, true},
	}
	cm := block.Confusion
	charts := []Chart{
		{Name: "reliability", Title: fmt.Sprintf("Reliability diagram (ECE %.4f)", block.Calibration.ECE)},
		{Name: "risk_coverage", Title: fmt.Sprintf("Risk–coverage curve (AURC %.4f)", block.Abstention.AURC)},
		{Name: "confusion", Title: "Confusion matrix (positive class: Phishing)"},
	}
	charts[0].SVG = ReliabilityDiagram(charts[0].Title, bins)
	charts[1].SVG = RiskCoverageChart(charts[1].Title, curve)
	charts[2].SVG = ConfusionHeatmap(charts[2].Title, []string{"Phishing", "Legitimate"}, []string{"Phishing", "Legitimate", "Abstain"},
		[][]int{{cm.TP, cm.FN, abstainPhish}, {cm.FP, cm.TN, abstainLegit}})
	if gs := breakdown["campaign"]; len(gs) > 0 {
		labels, vals := make([]string, len(gs)), make([]float64, len(gs))
		for i, g := range gs {
			labels[i], vals[i] = g.Name, g.Accuracy
		}
		charts = append(charts, Chart{Name: "campaign_accuracy", Title: "Accuracy by campaign type (non-abstained)"})
		charts[len(charts)-1].SVG = BarChart(charts[len(charts)-1].Title, labels, vals, true)
	}

	headline := []Stat{
		{"rows", fmt.Sprintf("%d scored, %d API errors, %d score errors, %d unparsed", len(obs), errRows, scoreErrRows, unparsed)},
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
	r := &Report{Summary: summary, Headline: headline, Key: key, Charts: charts, Problems: problems}
	r.Markdown = e4Markdown(meta, block, ci, counts, meanReward, comps, breakdown, charts, opts)
	return r, nil
}

func e4Markdown(meta *artifact.Metadata, m E4Metrics, ci map[string]metrics.CI, counts map[string]int,
	meanReward float64, comps map[string]float64, breakdown map[string][]E4Group, charts []Chart, opts Options) string {
	var b bytes.Buffer
	title := "E4 phishing detection"
	if meta != nil && meta.Model != "" {
		title += " — " + meta.Model
	}
	fmt.Fprintf(&b, "# %s\n\n## Run\n\n%s\n", EscapeCell(title), RunTable(meta))
	fmt.Fprintf(&b, "Rows: %d in the file, %d scored, %d API errors and %d score errors excluded, %d unparsed (counted as abstain), %d gold-Abstain rows excluded.\n\n",
		counts["rows"], counts["scored"], counts["error_rows"], counts["score_error_rows"], counts["unparsed_rows"], counts["gold_abstain_rows"])
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
	c := m.Confusion
	fmt.Fprintf(&b, "\nConfusion: TP %d, TN %d, FP %d, FN %d, abstain %d.\n\n", c.TP, c.TN, c.FP, c.FN, c.Abstain)
	b.WriteString("## Charts\n\n")
	for _, ch := range charts {
		b.WriteString(ChartRef(ch))
		b.WriteString("\n")
	}
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
	if len(comps) > 0 {
		b.WriteString("## Reward components\n\n")
		var trs [][]string
		for _, k := range SortedKeys(comps) {
			trs = append(trs, []string{k, F(comps[k])})
		}
		trs = append(trs, []string{"**total (weighted)**", F(meanReward)})
		b.WriteString(Table([]string{"component", "mean"}, trs))
		b.WriteString("\n")
	}
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
