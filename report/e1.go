package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
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
	Confusion struct {
		TP      int `json:"tp"`
		TN      int `json:"tn"`
		FP      int `json:"fp"`
		FN      int `json:"fn"`
		Abstain int `json:"abstain"`
	} `json:"confusion_matrix"`
}

// e1Obs is one scored row reduced to what the metrics need.
type e1Obs struct {
	out       metrics.Outcome
	conf      float64
	malicious bool // the answer
}

func (o e1Obs) correct() bool { return o.out == metrics.TP || o.out == metrics.TN }

// e1Acc accumulates everything the E1 block needs from a set of rows.
type e1Acc struct {
	conf metrics.Confusion
	cal  metrics.Calibration
	rc   metrics.RiskCoverage
}

func (a *e1Acc) add(o e1Obs) {
	a.conf.Add(o.out)
	if o.out != metrics.Abstain {
		a.cal.Add(o.conf, o.correct())
		a.rc.Add(o.conf, o.correct())
	}
}

func (a *e1Acc) block() E1Metrics {
	var m E1Metrics
	c := a.conf
	m.Detection.TPR, m.Detection.FPR, m.Detection.FNR = c.TPR(), c.FPR(), c.FNR()
	m.Detection.Precision, m.Detection.F1, m.Detection.Accuracy = c.Precision(), c.F1(), c.Accuracy()
	m.Calibration.ECE, m.Calibration.Brier = a.cal.ECE(), a.cal.Brier()
	w := metrics.ReferenceCost
	m.Cost.FNWeight, m.Cost.FPWeight = w.FNWeight, w.FPWeight
	m.Cost.TotalCost, m.Cost.CostWeightedAccuracy = w.Total(c), w.WeightedAccuracy(c)
	m.Abstention.AbstainRate, m.Abstention.AccuracyNonAbstained = c.AbstainRate(), c.Accuracy()
	m.Abstention.AURC = a.rc.AURC()
	m.Confusion.TP, m.Confusion.TN, m.Confusion.FP, m.Confusion.FN, m.Confusion.Abstain = c.TP, c.TN, c.FP, c.FN, c.Abstain
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

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// e1Confidence reads a parsed confidence; anything but a finite number is
// 0, as the reference parser does.
func e1Confidence(v any) float64 {
	f, ok := v.(float64)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return metrics.ClampUnit(f)
}

// breakdownFields are the dataset meta fields E1 reports break down by.
var breakdownFields = []string{"scenario", "difficulty", "attack_family"}

// E1Group is one line of a breakdown table.
type E1Group struct {
	Name        string  `json:"name"`
	N           int     `json:"n"`
	AbstainRate float64 `json:"abstain_rate"`
	Accuracy    float64 `json:"accuracy"`
	F1          float64 `json:"f1"`
	ECE         float64 `json:"ece"`
	MeanReward  float64 `json:"mean_reward"`
}

// BuildE1 is the network-logs (E1) Builder.
func BuildE1(rows []artifact.Result, meta *artifact.Metadata, opts Options) (*Report, error) {
	var (
		obs                                  []e1Obs
		pos                                  []int // row position of each obs
		problems                             []Problem
		errRows, scoreErrRows, unparsed      int
		abstainMal, abstainBen, explicitAbst int
		all                                  e1Acc
	)
	obs = make([]e1Obs, 0, len(rows))
	pos = make([]int, 0, len(rows))
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
		mal, err := E1Answer(r.Answer)
		if err != nil {
			return nil, fmt.Errorf("row %d (index %d, rollout %d): %w; check the dataset's answer field", i+1, r.Index, r.Rollout, err)
		}
		o := e1Obs{conf: e1Confidence(r.Parsed["confidence"]), malicious: mal}
		label, _ := r.Parsed["predicted_label"].(string)
		switch label {
		case "Malicious":
			o.out = metrics.Classify(true, mal, false)
		case "Benign":
			o.out = metrics.Classify(false, mal, false)
		case "Abstain":
			o.out = metrics.Abstain
			explicitAbst++
		default:
			// The reference counts anything but Malicious/Benign as an
			// abstention; so do we, and we also count it apart.
			o.out = metrics.Abstain
			unparsed++
			prob.Kind, prob.Detail = ProblemUnparsed, "no valid label (counted as abstain)"
			problems = append(problems, prob)
		}
		if o.out == metrics.Abstain {
			if mal {
				abstainMal++
			} else {
				abstainBen++
			}
		}
		all.add(o)
		obs = append(obs, o)
		pos = append(pos, i)
	}
	block := all.block()

	// Bootstrap over scored rows, abstentions included: a resample varies
	// how many rows are decided, as a new sample of the dataset would.
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
		confStat(metrics.Confusion.Accuracy), confStat(metrics.Confusion.F1), eceStat,
	}, opts.Reps(), opts.BootstrapSeed(meta))
	ci := map[string]metrics.CI{"accuracy": cis[0], "f1": cis[1], "ece": cis[2]}

	meanReward, comps := RewardStats(rows, pos)

	breakdown := map[string][]E1Group{}
	obsOf := make(map[int]int, len(pos))
	for k, p := range pos {
		obsOf[p] = k
	}
	for _, field := range breakdownFields {
		names, groups := GroupBy(rows, pos, field)
		if names == nil {
			continue
		}
		var gs []E1Group
		for _, name := range names {
			var a e1Acc
			for _, p := range groups[name] {
				a.add(obs[obsOf[p]])
			}
			mr, _ := RewardStats(rows, groups[name])
			gs = append(gs, E1Group{
				Name: name, N: len(groups[name]), AbstainRate: a.conf.AbstainRate(),
				Accuracy: a.conf.Accuracy(), F1: a.conf.F1(), ECE: a.cal.ECE(), MeanReward: mr,
			})
		}
		// Largest groups first; rows lacking the field last.
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
		"unparsed_rows": unparsed, "abstained_explicit": explicitAbst,
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
		{"accuracy", block.Detection.Accuracy, true},
		{"f1", block.Detection.F1, true},
		{"ece", block.Calibration.ECE, false},
		{"aurc", block.Abstention.AURC, false},
		{"cost_weighted_accuracy", block.Cost.CostWeightedAccuracy, true},
		{"mean_reward", meanReward, true},
	}
	cm := block.Confusion
	charts := []Chart{
		{Name: "reliability", Title: fmt.Sprintf("Reliability diagram (ECE %.4f)", block.Calibration.ECE)},
		{Name: "risk_coverage", Title: fmt.Sprintf("Risk–coverage curve (AURC %.4f)", block.Abstention.AURC)},
		{Name: "confusion", Title: "Confusion matrix (positive class: Malicious)"},
	}
	charts[0].SVG = ReliabilityDiagram(charts[0].Title, bins)
	charts[1].SVG = RiskCoverageChart(charts[1].Title, curve)
	charts[2].SVG = ConfusionHeatmap(charts[2].Title, []string{"Malicious", "Benign"}, []string{"Malicious", "Benign", "Abstain"},
		[][]int{{cm.TP, cm.FN, abstainMal}, {cm.FP, cm.TN, abstainBen}})

	headline := []Stat{
		{"rows", fmt.Sprintf("%d scored, %d API errors, %d score errors, %d unparsed", len(obs), errRows, scoreErrRows, unparsed)},
		{"accuracy (decided)", FCI(ci["accuracy"])},
		{"F1 (Malicious)", FCI(ci["f1"])},
		{"ECE", FCI(ci["ece"])},
		{"AURC", F(block.Abstention.AURC)},
		{"cost-weighted accuracy", F(block.Cost.CostWeightedAccuracy)},
		{"abstain rate", Pct(block.Abstention.AbstainRate)},
		{"mean reward", F(meanReward)},
	}

	r := &Report{Summary: summary, Headline: headline, Key: key, Charts: charts, Problems: problems}
	r.Markdown = e1Markdown(meta, block, ci, counts, meanReward, comps, breakdown, charts, opts)
	return r, nil
}

func e1Markdown(meta *artifact.Metadata, m E1Metrics, ci map[string]metrics.CI, counts map[string]int,
	meanReward float64, comps map[string]float64, breakdown map[string][]E1Group, charts []Chart, opts Options) string {
	var b bytes.Buffer
	title := "E1 network logs"
	if meta != nil && meta.Model != "" {
		title += " — " + meta.Model
	}
	fmt.Fprintf(&b, "# %s\n\n## Run\n\n%s\n", EscapeCell(title), RunTable(meta))
	fmt.Fprintf(&b, "Rows: %d in the file, %d scored, %d API errors and %d score errors excluded, %d unparsed (counted as abstain).\n\n",
		counts["rows"], counts["scored"], counts["error_rows"], counts["score_error_rows"], counts["unparsed_rows"])

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
	c := m.Confusion
	fmt.Fprintf(&b, "\nConfusion: TP %d, TN %d, FP %d, FN %d, abstain %d.\n\n", c.TP, c.TN, c.FP, c.FN, c.Abstain)

	b.WriteString("## Charts\n\n")
	for _, ch := range charts {
		b.WriteString(ChartRef(ch))
		b.WriteString("\n")
	}

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

	if len(comps) > 0 {
		b.WriteString("## Reward components\n\n")
		var rows [][]string
		for _, k := range SortedKeys(comps) {
			rows = append(rows, []string{k, F(comps[k])})
		}
		rows = append(rows, []string{"**total (weighted)**", F(meanReward)})
		b.WriteString(Table([]string{"component", "mean"}, rows))
		b.WriteString("\n")
	}

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

func ciCell(c metrics.CI, reps int) string {
	if reps <= 0 {
		return "—"
	}
	return fmt.Sprintf("[%s, %s]", F(c.Lo), F(c.Hi))
}
