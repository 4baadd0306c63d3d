package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/metrics"
)

// This file is the shared core of the binary-detection-with-abstention
// reports (E1 network logs, E4 phishing): how rows become outcomes, the
// accumulators behind the reference's metrics block, the bootstrap, the
// per-meta-field breakdowns, the three standard charts and the Markdown
// sections every such report has. Each environment's builder keeps only
// what differs: its labels, its metrics block, its extra columns and its
// notes.

// BinaryTask names a binary task's classes and reads its gold answers.
type BinaryTask struct {
	Positive, Negative string // predicted labels, e.g. "Malicious", "Benign"
	// Answer reads a row's gold label. skip marks rows with no binary gold
	// (E4's Abstain answers), which are counted and left out.
	Answer func(raw json.RawMessage) (positive, skip bool, err error)
}

// BinaryObs is one scored row reduced to what the metrics need.
type BinaryObs struct {
	Outcome    metrics.Outcome
	Confidence float64
	Positive   bool // the gold label
	// Unparsed marks a row without a valid predicted label; its Outcome is
	// Abstain (svbench's convention) but the reference's report generator
	// leaves such rows out altogether.
	Unparsed bool
}

// Correct reports whether the row was decided and right.
func (o BinaryObs) Correct() bool { return o.Outcome == metrics.TP || o.Outcome == metrics.TN }

// BinaryAcc accumulates the confusion, calibration and risk–coverage of a
// set of observations: abstentions enter only the confusion's abstain
// count. The zero value is ready to use.
type BinaryAcc struct {
	Confusion    metrics.Confusion
	Calibration  metrics.Calibration
	RiskCoverage metrics.RiskCoverage
}

// Add records one observation.
func (a *BinaryAcc) Add(o BinaryObs) {
	a.Confusion.Add(o.Outcome)
	if o.Outcome != metrics.Abstain {
		a.Calibration.Add(o.Confidence, o.Correct())
		a.RiskCoverage.Add(o.Confidence, o.Correct())
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

// Blocks computes the shared sections with the reference generator's
// conventions: a ratio with nothing to count is 0, and cost-weighted
// accuracy is 1 when nothing was decided.
func (a *BinaryAcc) Blocks() (CalibrationBlock, CostBlock, AbstentionBlock) {
	c, w := a.Confusion, metrics.ReferenceCost
	return CalibrationBlock{ECE: a.Calibration.ECE(), Brier: a.Calibration.Brier()},
		CostBlock{FNWeight: w.FNWeight, FPWeight: w.FPWeight, TotalCost: w.Total(c), CostWeightedAccuracy: w.WeightedAccuracy(c)},
		AbstentionBlock{AbstainRate: c.AbstainRate(), AccuracyNonAbstained: c.Accuracy(), AURC: a.RiskCoverage.AURC()}
}

// BinaryRun is every row of a run sorted into observations and problems.
type BinaryRun struct {
	Task     BinaryTask
	Obs      []BinaryObs
	Pos      []int // row position of each observation
	Example  []int // example index of each observation (the bootstrap's cluster)
	Problems []Problem
	All      BinaryAcc // every observation

	ErrorRows, ScoreErrorRows int // excluded from every metric
	Unparsed                  int // no valid label: counted as abstentions
	ExplicitAbstain           int // the model answered Abstain
	Skipped                   int // no binary gold (BinaryTask.Answer's skip)

	obsOf                  map[int]int
	abstainPos, abstainNeg int
}

// ScanBinary classifies rows. API-error and score-error rows are problems
// excluded from every metric; a missing or invalid predicted label counts
// as an abstention and is also a problem, so --strict can refuse it. An
// unreadable gold answer is an error naming the row.
func ScanBinary(rows []artifact.Result, task BinaryTask) (*BinaryRun, error) {
	b := &BinaryRun{Task: task, Obs: make([]BinaryObs, 0, len(rows)), Pos: make([]int, 0, len(rows)), Example: make([]int, 0, len(rows))}
	for i := range rows {
		r := &rows[i]
		if prob, excluded := ExcludedRow(i, r); excluded {
			if prob.Kind == ProblemError {
				b.ErrorRows++
			} else {
				b.ScoreErrorRows++
			}
			b.Problems = append(b.Problems, prob)
			continue
		}
		prob := Problem{Row: i, Index: r.Index, Rollout: r.Rollout}
		positive, skip, err := task.Answer(r.Answer)
		if err != nil {
			return nil, fmt.Errorf("row %d (index %d, rollout %d): %w; check the dataset's answer field", i+1, r.Index, r.Rollout, err)
		}
		if skip {
			b.Skipped++
			continue
		}
		o := BinaryObs{Confidence: Confidence(r.Parsed["confidence"]), Positive: positive}
		label, _ := r.Parsed["predicted_label"].(string)
		switch label {
		case task.Positive:
			o.Outcome = metrics.Classify(true, positive, false)
		case task.Negative:
			o.Outcome = metrics.Classify(false, positive, false)
		case "Abstain":
			o.Outcome = metrics.Abstain
			b.ExplicitAbstain++
		default:
			o.Outcome, o.Unparsed = metrics.Abstain, true
			b.Unparsed++
			prob.Kind, prob.Detail = ProblemUnparsed, "no valid label (counted as abstain)"
			b.Problems = append(b.Problems, prob)
		}
		if o.Outcome == metrics.Abstain {
			if positive {
				b.abstainPos++
			} else {
				b.abstainNeg++
			}
		}
		b.All.Add(o)
		b.Obs = append(b.Obs, o)
		b.Pos = append(b.Pos, i)
		b.Example = append(b.Example, r.Index)
	}
	b.obsOf = make(map[int]int, len(b.Pos))
	for k, p := range b.Pos {
		b.obsOf[p] = k
	}
	return b, nil
}

// Confidence reads a parsed confidence; anything but a finite number is 0,
// as the reference parser does, and the rest is clamped to [0, 1].
func Confidence(v any) float64 {
	f, ok := Number(v)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return metrics.ClampUnit(f)
}

// Number reads a JSON number held in a Parsed map (float64, int or
// json.Number).
func Number(v any) (float64, bool) {
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

// AbstainedPositives counts the observations on positive rows that
// abstained (unparsed answers included): KeyF1 counts them as misses.
func (b *BinaryRun) AbstainedPositives() int { return b.abstainPos }

// BinarySample is what one pass over a resample of a binary run's
// observations counts; every binary statistic is a function of it, so a
// bootstrap of several statistics reads each resample once.
type BinarySample struct {
	// Confusion counts every observation. Resampling includes
	// abstentions: a resample varies how many rows are decided, as a new
	// sample of the dataset would.
	Confusion metrics.Confusion
	// AbstainedPositives counts abstentions on positive rows (KeyF1's
	// misses).
	AbstainedPositives int
	// Calibration holds the decided observations.
	Calibration metrics.Calibration
}

// Sample counts the observations idx names.
func (b *BinaryRun) Sample(idx []int) BinarySample {
	var s BinarySample
	for _, k := range idx {
		o := &b.Obs[k]
		s.Confusion.Add(o.Outcome)
		if o.Outcome == metrics.Abstain {
			if o.Positive {
				s.AbstainedPositives++
			}
			continue
		}
		s.Calibration.Add(o.Confidence, o.Correct())
	}
	return s
}

// BinaryStat is a bootstrap statistic of a binary run.
type BinaryStat func(*BinarySample) float64

// ConfusionOf is the statistic of a confusion-matrix metric.
func ConfusionOf(f func(metrics.Confusion) float64) BinaryStat {
	return func(s *BinarySample) float64 { return f(s.Confusion) }
}

// AllRowsF1Of is KeyF1 (AllRowsF1): an abstention on a positive row is a
// miss, one on a negative row is neither a hit nor a false alarm.
func AllRowsF1Of(s *BinarySample) float64 { return AllRowsF1(s.Confusion, s.AbstainedPositives) }

// ECEOf is the ECE over decided rows.
func ECEOf(s *BinarySample) float64 { return s.Calibration.ECE() }

// Bootstrap computes named percentile CIs in one pass of resamples over the
// observations' examples (a cluster bootstrap: all rollouts of a drawn
// example come with it), seeded as opts says.
func (b *BinaryRun) Bootstrap(names []string, stats []BinaryStat, meta *artifact.Metadata, opts Options) map[string]metrics.CI {
	cis := metrics.ClusterBootstrapVec(metrics.Clusters(len(b.Example), func(k int) int { return b.Example[k] }), len(stats), func(idx []int, out []float64) {
		s := b.Sample(idx)
		for i, f := range stats {
			out[i] = f(&s)
		}
	}, opts.Reps(), opts.BootstrapSeed(meta))
	out := make(map[string]metrics.CI, len(names))
	for i, n := range names {
		out[n] = cis[i]
	}
	return out
}

// GroupHead is what every breakdown line has; builders embed it in their
// group type.
type GroupHead struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

// Head returns the group's name and size.
func (g GroupHead) Head() GroupHead { return g }

// Breakdown groups the observations by each meta field and summarises each
// group with line; groups come largest first, rows lacking the field last.
// A field no row has gets no entry.
func Breakdown[G interface{ Head() GroupHead }](rows []artifact.Result, b *BinaryRun, fields []string,
	line func(head GroupHead, obs []BinaryObs, rowPos []int) G) map[string][]G {
	out := map[string][]G{}
	for _, field := range fields {
		names, groups := GroupBy(rows, b.Pos, field)
		if names == nil {
			continue
		}
		var gs []G
		for _, name := range names {
			obs := make([]BinaryObs, 0, len(groups[name]))
			for _, p := range groups[name] {
				obs = append(obs, b.Obs[b.obsOf[p]])
			}
			gs = append(gs, line(GroupHead{Name: name, N: len(groups[name])}, obs, groups[name]))
		}
		sort.SliceStable(gs, func(i, j int) bool {
			hi, hj := gs[i].Head(), gs[j].Head()
			if ni, nj := hi.Name == "(none)", hj.Name == "(none)"; ni != nj {
				return nj
			}
			return hi.N > hj.N
		})
		out[field] = gs
	}
	return out
}

// Counts is the summary's row accounting.
func (b *BinaryRun) Counts(rows int) map[string]int {
	return map[string]int{
		"rows": rows, "scored": len(b.Obs), "error_rows": b.ErrorRows, "score_error_rows": b.ScoreErrorRows,
		"unparsed_rows": b.Unparsed, "abstained_explicit": b.ExplicitAbstain,
	}
}

// Summary holds the parts of summary.json every binary report shares;
// block is the environment's metrics block.
func (b *BinaryRun) Summary(block any, ci map[string]metrics.CI, counts map[string]int, meanReward float64,
	comps map[string]float64, breakdown any, meta *artifact.Metadata, opts Options) map[string]any {
	return map[string]any{
		"metrics":        block,
		"ci95":           ci,
		"counts":         counts,
		"bootstrap":      map[string]any{"reps": opts.Reps(), "seed": opts.BootstrapSeed(meta), "method": BootstrapMethod},
		"reward":         map[string]any{"mean": meanReward, "components": comps},
		"breakdown":      breakdown,
		"reliability":    b.All.Calibration.Bins(),
		"risk_coverage":  b.All.RiskCoverage.Curve(),
		"unparsed_label": "abstain",
	}
}

// Charts draws the reliability diagram, the risk–coverage curve and the
// confusion matrix with its abstain column.
func (b *BinaryRun) Charts() []Chart {
	c := b.All.Confusion
	charts := []Chart{
		{Name: "reliability", Title: fmt.Sprintf("Reliability diagram (ECE %.4f)", b.All.Calibration.ECE())},
		{Name: "risk_coverage", Title: fmt.Sprintf("Risk–coverage curve (AURC %.4f)", b.All.RiskCoverage.AURC())},
		{Name: "confusion", Title: fmt.Sprintf("Confusion matrix (positive class: %s)", b.Task.Positive)},
	}
	charts[0].SVG = ReliabilityDiagram(charts[0].Title, b.All.Calibration.Bins())
	charts[1].SVG = RiskCoverageChart(charts[1].Title, b.All.RiskCoverage.Curve())
	charts[2].SVG = ConfusionHeatmap(charts[2].Title, []string{b.Task.Positive, b.Task.Negative},
		[]string{b.Task.Positive, b.Task.Negative, "Abstain"},
		[][]int{{c.TP, c.FN, b.abstainPos}, {c.FP, c.TN, b.abstainNeg}})
	return charts
}

// RowsStat is the headline's first line.
func (b *BinaryRun) RowsStat() Stat {
	return Stat{"rows", fmt.Sprintf("%d scored, %d API errors, %d score errors, %d unparsed", len(b.Obs), b.ErrorRows, b.ScoreErrorRows, b.Unparsed)}
}

// WriteTitle starts a binary report: title, run table and row accounting
// (counts as BinaryRun.Counts returns them; extra is appended to the
// accounting sentence).
func WriteTitle(b *bytes.Buffer, title string, meta *artifact.Metadata, counts map[string]int, extra string) {
	if meta != nil && meta.Model != "" {
		title += " — " + meta.Model
	}
	fmt.Fprintf(b, "# %s\n\n## Run\n\n%s\n", EscapeCell(title), RunTable(meta))
	fmt.Fprintf(b, "Rows: %d in the file, %d scored, %d API errors and %d score errors excluded%s.\n\n",
		counts["rows"], counts["scored"], counts["error_rows"], counts["score_error_rows"], extra)
}

// UnparsedClause is the row-count clause of a classification report
// (E1, E4): rows with no valid label, which those rubrics count as
// abstentions. Other environments have no such rule, so WriteTitle does
// not say it for them.
func UnparsedClause(counts map[string]int) string {
	return fmt.Sprintf(", %d unparsed (counted as abstain)", counts["unparsed_rows"])
}

// WriteConfusionAndCharts writes the confusion counts and the chart links.
func WriteConfusionAndCharts(b *bytes.Buffer, c ConfusionCounts, charts []Chart) {
	fmt.Fprintf(b, "\nConfusion: TP %d, TN %d, FP %d, FN %d, abstain %d.\n\n", c.TP, c.TN, c.FP, c.FN, c.Abstain)
	b.WriteString("## Charts\n\n")
	for _, ch := range charts {
		b.WriteString(ChartRef(ch))
		b.WriteString("\n")
	}
}

// WriteComponents writes the mean of each reward component.
func WriteComponents(b *bytes.Buffer, comps map[string]float64, meanReward float64) {
	if len(comps) == 0 {
		return
	}
	b.WriteString("## Reward components\n\n")
	var trs [][]string
	for _, k := range slices.Sorted(maps.Keys(comps)) {
		trs = append(trs, []string{k, F(comps[k])})
	}
	trs = append(trs, []string{"**total (weighted)**", F(meanReward)})
	b.WriteString(Table([]string{"component", "mean"}, trs))
	b.WriteString("\n")
}

// ConfusionCounts is the confusion_matrix block of E1 and E4 summaries.
type ConfusionCounts struct {
	TP      int `json:"tp"`
	TN      int `json:"tn"`
	FP      int `json:"fp"`
	FN      int `json:"fn"`
	Abstain int `json:"abstain"`
}

// CountsOf copies a confusion matrix into its summary block.
func CountsOf(c metrics.Confusion) ConfusionCounts {
	return ConfusionCounts{TP: c.TP, TN: c.TN, FP: c.FP, FN: c.FN, Abstain: c.Abstain}
}
