package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/metrics"
)

// This file is the shared core of the binary-detection-with-abstention
// reports (E1 network logs, E4 phishing): how rows become outcomes, the
// accumulators behind the reference's metrics block, the bootstrap, the
// per-meta-field breakdowns, the three standard charts and the Markdown
// sections every such report has. Each environment's file keeps only what
// differs: its labels, its metrics block, its extra columns and its notes.

// binaryTask names a task's classes and reads its gold answers.
type binaryTask struct {
	Positive, Negative string
	// Answer reads a row's gold label. skip marks rows with no binary gold
	// (E4's Abstain answers), which are counted and left out.
	Answer func(raw json.RawMessage) (positive, skip bool, err error)
}

// binaryObs is one scored row reduced to what the metrics need.
type binaryObs struct {
	out      metrics.Outcome
	conf     float64
	positive bool // the gold label
}

func (o binaryObs) correct() bool { return o.out == metrics.TP || o.out == metrics.TN }

// binaryAcc accumulates the confusion, calibration and risk–coverage of a
// set of observations: abstentions enter only the confusion's abstain count.
type binaryAcc struct {
	conf metrics.Confusion
	cal  metrics.Calibration
	rc   metrics.RiskCoverage
}

func (a *binaryAcc) add(o binaryObs) {
	a.conf.Add(o.out)
	if o.out != metrics.Abstain {
		a.cal.Add(o.conf, o.correct())
		a.rc.Add(o.conf, o.correct())
	}
}

// CalibrationBlock, CostBlock and AbstentionBlock are the sections of the
// reference's metrics block that E1 and E4 share, field for field.
type CalibrationBlock struct {
	ECE   float64 `json:"ece"`
	Brier float64 `json:"brier"`
}

// CostBlock uses the reference's weights: a miss costs ten false alarms.
type CostBlock struct {
	FNWeight             float64 `json:"fn_cost_weight"`
	FPWeight             float64 `json:"fp_cost_weight"`
	TotalCost            float64 `json:"total_cost"`
	CostWeightedAccuracy float64 `json:"cost_weighted_accuracy"`
}

// AbstentionBlock covers how often and how well the model abstained.
type AbstentionBlock struct {
	AbstainRate          float64 `json:"abstain_rate"`
	AccuracyNonAbstained float64 `json:"accuracy_non_abstained"`
	AURC                 float64 `json:"aurc"`
}

// blocks computes the shared sections.
func (a *binaryAcc) blocks() (CalibrationBlock, CostBlock, AbstentionBlock) {
	c, w := a.conf, metrics.ReferenceCost
	return CalibrationBlock{ECE: a.cal.ECE(), Brier: a.cal.Brier()},
		CostBlock{FNWeight: w.FNWeight, FPWeight: w.FPWeight, TotalCost: w.Total(c), CostWeightedAccuracy: w.WeightedAccuracy(c)},
		AbstentionBlock{AbstainRate: c.AbstainRate(), AccuracyNonAbstained: c.Accuracy(), AURC: a.rc.AURC()}
}

// binaryRows is every row of a run sorted into observations and problems.
type binaryRows struct {
	task     binaryTask
	obs      []binaryObs
	pos      []int // row position of each observation
	obsOf    map[int]int
	problems []Problem
	all      binaryAcc

	errRows, scoreErrRows, unparsed, explicitAbstain, skipped int
	abstainPos, abstainNeg                                    int
}

// scanBinary classifies rows. API-error and score-error rows are problems
// excluded from every metric; a missing or invalid predicted label counts
// as an abstention (as the reference does) and is also a problem, so
// --strict can refuse it.
func scanBinary(rows []artifact.Result, task binaryTask) (*binaryRows, error) {
	b := &binaryRows{task: task, obs: make([]binaryObs, 0, len(rows)), pos: make([]int, 0, len(rows))}
	for i := range rows {
		r := &rows[i]
		prob := Problem{Row: i, Index: r.Index, Rollout: r.Rollout}
		if r.Error != "" {
			b.errRows++
			prob.Kind, prob.Detail = ProblemError, clip(r.Error, 160)
			b.problems = append(b.problems, prob)
			continue
		}
		if r.ScoreError != "" {
			b.scoreErrRows++
			prob.Kind, prob.Detail = ProblemScoreError, clip(r.ScoreError, 160)
			b.problems = append(b.problems, prob)
			continue
		}
		positive, skip, err := task.Answer(r.Answer)
		if err != nil {
			return nil, fmt.Errorf("row %d (index %d, rollout %d): %w; check the dataset's answer field", i+1, r.Index, r.Rollout, err)
		}
		if skip {
			b.skipped++
			continue
		}
		o := binaryObs{conf: confidence(r.Parsed["confidence"]), positive: positive}
		label, _ := r.Parsed["predicted_label"].(string)
		switch label {
		case task.Positive:
			o.out = metrics.Classify(true, positive, false)
		case task.Negative:
			o.out = metrics.Classify(false, positive, false)
		case "Abstain":
			o.out = metrics.Abstain
			b.explicitAbstain++
		default:
			o.out = metrics.Abstain
			b.unparsed++
			prob.Kind, prob.Detail = ProblemUnparsed, "no valid label (counted as abstain)"
			b.problems = append(b.problems, prob)
		}
		if o.out == metrics.Abstain {
			if positive {
				b.abstainPos++
			} else {
				b.abstainNeg++
			}
		}
		b.all.add(o)
		b.obs = append(b.obs, o)
		b.pos = append(b.pos, i)
	}
	b.obsOf = make(map[int]int, len(b.pos))
	for k, p := range b.pos {
		b.obsOf[p] = k
	}
	return b, nil
}

// confidence reads a parsed confidence; anything but a finite number is 0,
// as the reference parser does.
func confidence(v any) float64 {
	f, ok := num(v)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return metrics.ClampUnit(f)
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

// confusionStat and eceStat are bootstrap statistics over observations.
// Resampling includes abstentions: a resample varies how many rows are
// decided, as a new sample of the dataset would.
func (b *binaryRows) confusionStat(f func(metrics.Confusion) float64) metrics.Stat {
	return func(idx []int) float64 {
		var c metrics.Confusion
		for _, k := range idx {
			c.Add(b.obs[k].out)
		}
		return f(c)
	}
}

func (b *binaryRows) eceStat(idx []int) float64 {
	var cal metrics.Calibration
	for _, k := range idx {
		if o := b.obs[k]; o.out != metrics.Abstain {
			cal.Add(o.conf, o.correct())
		}
	}
	return cal.ECE()
}

// bootstrap computes named percentile CIs in one pass of resamples.
func (b *binaryRows) bootstrap(names []string, stats []metrics.Stat, meta *artifact.Metadata, opts Options) map[string]metrics.CI {
	cis := metrics.BootstrapMulti(len(b.obs), stats, opts.Reps(), opts.BootstrapSeed(meta))
	out := make(map[string]metrics.CI, len(names))
	for i, n := range names {
		out[n] = cis[i]
	}
	return out
}

// groupHead is what every breakdown line has.
type groupHead struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

func (g groupHead) head() groupHead { return g }

// breakdown groups the observations by each meta field and summarises each
// group with line; groups come largest first, rows lacking the field last.
func breakdown[G interface{ head() groupHead }](rows []artifact.Result, b *binaryRows, fields []string,
	line func(head groupHead, obs []binaryObs, rowPos []int) G) map[string][]G {
	out := map[string][]G{}
	for _, field := range fields {
		names, groups := GroupBy(rows, b.pos, field)
		if names == nil {
			continue
		}
		var gs []G
		for _, name := range names {
			obs := make([]binaryObs, 0, len(groups[name]))
			for _, p := range groups[name] {
				obs = append(obs, b.obs[b.obsOf[p]])
			}
			gs = append(gs, line(groupHead{Name: name, N: len(groups[name])}, obs, groups[name]))
		}
		sort.SliceStable(gs, func(i, j int) bool {
			hi, hj := gs[i].head(), gs[j].head()
			if ni, nj := hi.Name == "(none)", hj.Name == "(none)"; ni != nj {
				return nj
			}
			return hi.N > hj.N
		})
		out[field] = gs
	}
	return out
}

// counts is the summary's row accounting.
func (b *binaryRows) counts(rows int) map[string]int {
	return map[string]int{
		"rows": rows, "scored": len(b.obs), "error_rows": b.errRows, "score_error_rows": b.scoreErrRows,
		"unparsed_rows": b.unparsed, "abstained_explicit": b.explicitAbstain,
	}
}

// summary holds the parts of summary.json every binary report shares.
func (b *binaryRows) summary(block any, ci map[string]metrics.CI, counts map[string]int, meanReward float64,
	comps map[string]float64, breakdown any, meta *artifact.Metadata, opts Options) map[string]any {
	return map[string]any{
		"metrics":        block,
		"ci95":           ci,
		"counts":         counts,
		"bootstrap":      map[string]any{"reps": opts.Reps(), "seed": opts.BootstrapSeed(meta), "method": "percentile, resampling scored rows"},
		"reward":         map[string]any{"mean": meanReward, "components": comps},
		"breakdown":      breakdown,
		"reliability":    b.all.cal.Bins(),
		"risk_coverage":  b.all.rc.Curve(),
		"unparsed_label": "abstain",
	}
}

// charts draws the reliability diagram, the risk–coverage curve and the
// confusion matrix with its abstain column.
func (b *binaryRows) charts() []Chart {
	c := b.all.conf
	charts := []Chart{
		{Name: "reliability", Title: fmt.Sprintf("Reliability diagram (ECE %.4f)", b.all.cal.ECE())},
		{Name: "risk_coverage", Title: fmt.Sprintf("Risk–coverage curve (AURC %.4f)", b.all.rc.AURC())},
		{Name: "confusion", Title: fmt.Sprintf("Confusion matrix (positive class: %s)", b.task.Positive)},
	}
	charts[0].SVG = ReliabilityDiagram(charts[0].Title, b.all.cal.Bins())
	charts[1].SVG = RiskCoverageChart(charts[1].Title, b.all.rc.Curve())
	charts[2].SVG = ConfusionHeatmap(charts[2].Title, []string{b.task.Positive, b.task.Negative},
		[]string{b.task.Positive, b.task.Negative, "Abstain"},
		[][]int{{c.TP, c.FN, b.abstainPos}, {c.FP, c.TN, b.abstainNeg}})
	return charts
}

// rowsStat is the headline's first line.
func (b *binaryRows) rowsStat() Stat {
	return Stat{"rows", fmt.Sprintf("%d scored, %d API errors, %d score errors, %d unparsed", len(b.obs), b.errRows, b.scoreErrRows, b.unparsed)}
}

// writeTitle starts a report: title, run table and row accounting.
func writeTitle(b *bytes.Buffer, title string, meta *artifact.Metadata, counts map[string]int, extra string) {
	if meta != nil && meta.Model != "" {
		title += " — " + meta.Model
	}
	fmt.Fprintf(b, "# %s\n\n## Run\n\n%s\n", EscapeCell(title), RunTable(meta))
	fmt.Fprintf(b, "Rows: %d in the file, %d scored, %d API errors and %d score errors excluded, %d unparsed (counted as abstain)%s.\n\n",
		counts["rows"], counts["scored"], counts["error_rows"], counts["score_error_rows"], counts["unparsed_rows"], extra)
}

// writeConfusionAndCharts writes the confusion counts and the chart links.
func writeConfusionAndCharts(b *bytes.Buffer, c ConfusionCounts, charts []Chart) {
	fmt.Fprintf(b, "\nConfusion: TP %d, TN %d, FP %d, FN %d, abstain %d.\n\n", c.TP, c.TN, c.FP, c.FN, c.Abstain)
	b.WriteString("## Charts\n\n")
	for _, ch := range charts {
		b.WriteString(ChartRef(ch))
		b.WriteString("\n")
	}
}

// writeComponents writes the mean of each reward component.
func writeComponents(b *bytes.Buffer, comps map[string]float64, meanReward float64) {
	if len(comps) == 0 {
		return
	}
	b.WriteString("## Reward components\n\n")
	var trs [][]string
	for _, k := range SortedKeys(comps) {
		trs = append(trs, []string{k, F(comps[k])})
	}
	trs = append(trs, []string{"**total (weighted)**", F(meanReward)})
	b.WriteString(Table([]string{"component", "mean"}, trs))
	b.WriteString("\n")
}

func ciCell(c metrics.CI, reps int) string {
	if reps <= 0 {
		return "—"
	}
	return fmt.Sprintf("[%s, %s]", F(c.Lo), F(c.Hi))
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// ConfusionCounts is the confusion_matrix block of E1 and E4 summaries.
type ConfusionCounts struct {
	TP      int `json:"tp"`
	TN      int `json:"tn"`
	FP      int `json:"fp"`
	FN      int `json:"fn"`
	Abstain int `json:"abstain"`
}

func countsOf(c metrics.Confusion) ConfusionCounts {
	return ConfusionCounts{TP: c.TP, TN: c.TN, FP: c.FP, FN: c.FN, Abstain: c.Abstain}
}
