package rewardsagree

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/stat"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env/judgeutil"
	"github.com/svbench/svbench/metrics"
)

// DefaultTolerance is the per-row agreement tolerance on rewards scaled
// to [0, 1].
const DefaultTolerance = 0.1

// Options tune the analysis.
type Options struct {
	// Tolerance: two sources agree on a row when their rewards, each
	// min–max scaled to [0, 1] over the scored rows, differ by at most this.
	Tolerance float64
	// Reps and Seed drive the bootstrap intervals (seeded, independent of
	// the worker count).
	Reps int
	Seed uint64
}

func (o Options) withDefaults() Options {
	if o.Tolerance <= 0 {
		o.Tolerance = DefaultTolerance
	}
	if o.Reps == 0 {
		o.Reps = metrics.DefaultReps
	}
	return o
}

// Report is the study's result.
type Report struct {
	Run         string `json:"run"`
	Environment string `json:"environment"`
	Model       string `json:"model"`
	Rubric      string `json:"rubric"`
	JudgeModel  string `json:"judge_model"`
	RunStatus   string `json:"run_status"`
	// Rows counts results rows; ModelErrors those without a model answer;
	// Scored those every source scored (the rows every figure uses).
	Rows        int `json:"rows"`
	ModelErrors int `json:"model_errors"`
	Scored      int `json:"scored"`
	// ScoreErrors counts rows each source could not score;
	// JudgeFailures those because the judge gave no verdict (never counted
	// as a "no").
	ScoreErrors   map[string]int `json:"score_errors"`
	JudgeFailures int            `json:"judge_failures"`
	Tolerance     float64        `json:"tolerance"`

	Sources []SourceSummary `json:"sources"`
	Pairs   []PairStats     `json:"pairs"`
	// Solved is the executable verdict (the environment's Solved) against
	// the judge's yes/no.
	Solved Confusion   `json:"solved_confusion"`
	Labels []LabelCell `json:"labels,omitempty"`
	// Quality is each non-executable source's precision and recall against
	// the executable verdict (solved), with Wilson 95% intervals and the
	// first false positives named.
	Quality []metrics.VerdictQuality `json:"reward_quality"`
	Budget  Budget                   `json:"budget"`
	Cost    CacheStats               `json:"judge_cost"`
	// Disagreements counts rows where judge and verifier disagree;
	// DisagreementsFile is where they were written for reading.
	Disagreements     int    `json:"disagreements"`
	DisagreementsFile string `json:"disagreements_file,omitempty"`
}

// SourceSummary is one source's mean reward and pass rate (solved for the
// executable and hybrid sources, the judge's yes rate for llm_judge).
type SourceSummary struct {
	Source   string     `json:"source"`
	Reward   metrics.CI `json:"reward"`
	PassRate metrics.CI `json:"pass_rate"`
	// Min and Max are the observed reward range the agreement scaling uses.
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// PairStats compares two sources row by row. Correlations are nil when
// either side is constant (no association can be measured).
type PairStats struct {
	A        string   `json:"a"`
	B        string   `json:"b"`
	Pearson  *float64 `json:"pearson"`
	Spearman *float64 `json:"spearman"`
	// Agreement is the share of rows whose scaled rewards differ by at most
	// the tolerance; MeanAbsDiff is the mean scaled difference.
	Agreement   float64 `json:"agreement"`
	MeanAbsDiff float64 `json:"mean_abs_diff"`
}

// Confusion is verifier solved × judge yes.
type Confusion struct {
	BothPass     int     `json:"solved_judge_yes"`
	VerifierOnly int     `json:"solved_judge_no"`
	JudgeOnly    int     `json:"unsolved_judge_yes"`
	Neither      int     `json:"unsolved_judge_no"`
	Agreement    float64 `json:"agreement"`
	// Kappa is Cohen's κ (agreement beyond chance); nil when undefined
	// (both raters constant and equal).
	Kappa *float64 `json:"kappa"`
}

// LabelCell is one (gold, predicted) label pair: how the verifier and the
// judge treat that kind of answer.
type LabelCell struct {
	Gold       string  `json:"gold"`
	Predicted  string  `json:"predicted"`
	N          int     `json:"n"`
	Solved     float64 `json:"solved_rate"`
	JudgeYes   float64 `json:"judge_yes_rate"`
	Executable float64 `json:"mean_executable"`
	Hybrid     float64 `json:"mean_hybrid"`
}

// Budget records the reference's budget-parity fields for the run; the
// three sources share them because they score the same rollouts.
type Budget struct {
	Fields map[string]string `json:"fields"`
	Note   string            `json:"note"`
}

// BudgetFields are compare_rewards.py's parity fields, in its order.
var BudgetFields = []string{"environment_id", "dataset_id", "dataset_revision", "split", "model_id", "model_revision_or_digest",
	"max_steps", "rollouts_per_example", "max_tokens", "max_turns", "tool_budget", "trainer"}

// Analyse computes the report over rows every source scored.
func Analyse(run *Run, rows []Row, modelErrors int, opts Options) *Report {
	opts = opts.withDefaults()
	rep := &Report{Rows: len(rows) + modelErrors, ModelErrors: modelErrors, ScoreErrors: map[string]int{}, Tolerance: opts.Tolerance}
	if run != nil {
		rep.Run = run.Dir
		if m := run.Meta; m != nil {
			rep.Environment, rep.Model, rep.Rubric, rep.JudgeModel, rep.RunStatus = m.Environment, m.Model, m.Rubric, m.Launch.JudgeModel, m.Status
		}
		rep.Budget = budget(run)
	}
	var ok []*Row
	for i := range rows {
		r := &rows[i]
		judgeFailed := false
		for _, s := range Sources {
			if v := r.Sources[s]; v != nil && v.Error != "" {
				rep.ScoreErrors[s]++
				judgeFailed = judgeFailed || v.JudgeFailed
			}
		}
		if judgeFailed {
			rep.JudgeFailures++
		}
		if r.scored() {
			ok = append(ok, r)
		}
	}
	rep.Scored = len(ok)
	if len(ok) == 0 {
		return rep
	}
	rewards := map[string][]float64{}
	pass := map[string][]float64{}
	for _, s := range Sources {
		rewards[s] = make([]float64, len(ok))
		pass[s] = make([]float64, len(ok))
		for i, r := range ok {
			v := r.Sources[s]
			rewards[s][i] = v.Reward
			pass[s][i] = passOf(s, v)
		}
	}
	scaled := map[string][]float64{}
	for k, s := range Sources {
		lo, hi := slices.Min(rewards[s]), slices.Max(rewards[s])
		mean := func(xs []float64) metrics.Stat {
			return func(idx []int) float64 {
				t := 0.0
				for _, i := range idx {
					t += xs[i]
				}
				return t / float64(len(idx))
			}
		}
		cis := metrics.BootstrapMulti(len(ok), []metrics.Stat{mean(rewards[s]), mean(pass[s])}, opts.Reps, opts.Seed+uint64(k))
		rep.Sources = append(rep.Sources, SourceSummary{Source: s, Reward: cis[0], PassRate: cis[1], Min: lo, Max: hi})
		scaled[s] = make([]float64, len(ok))
		for i, x := range rewards[s] {
			if hi > lo {
				scaled[s][i] = (x - lo) / (hi - lo)
			}
		}
	}
	for _, p := range [][2]string{{Sources[0], Sources[1]}, {Sources[0], Sources[2]}, {Sources[1], Sources[2]}} {
		ps := PairStats{A: p[0], B: p[1], Pearson: corr(rewards[p[0]], rewards[p[1]]), Spearman: corr(metrics.Ranks(rewards[p[0]]), metrics.Ranks(rewards[p[1]]))}
		within := 0
		for i := range ok {
			d := math.Abs(scaled[p[0]][i] - scaled[p[1]][i])
			ps.MeanAbsDiff += d
			if d <= opts.Tolerance+1e-12 {
				within++
			}
		}
		ps.Agreement = float64(within) / float64(len(ok))
		ps.MeanAbsDiff /= float64(len(ok))
		rep.Pairs = append(rep.Pairs, ps)
	}
	rep.Solved = confusion(ok)
	rep.Disagreements = rep.Solved.VerifierOnly + rep.Solved.JudgeOnly
	rep.Labels = labels(ok)
	rep.Quality = quality(ok)
	return rep
}

// PositiveRule says what each source's positive verdict is (passOf).
var PositiveRule = map[string]string{
	judgeutil.SourceExecutable: "solved",
	judgeutil.SourceJudge:      "the judge said yes (judge component ≥ 1)",
	judgeutil.SourceHybrid:     "solved and the judge said yes",
}

// quality measures each non-executable source's pass (passOf) against the
// executable source's solved.
func quality(rows []*Row) []metrics.VerdictQuality {
	var out []metrics.VerdictQuality
	for _, s := range Sources[1:] {
		q := metrics.VerdictQuality{Source: s, Positive: PositiveRule[s]}
		for _, r := range rows {
			q.Add(passOf(s, r.Sources[s]) == 1, r.Sources[judgeutil.SourceExecutable].Solved, r.ExampleID+"/r"+strconv.Itoa(r.Rollout))
		}
		out = append(out, q)
	}
	return out
}

// passOf is the source's binary verdict: the environment's Solved for the
// executable source, the judge's yes for llm_judge, both for hybrid.
func passOf(source string, v *Verdict) float64 {
	switch source {
	case judgeutil.SourceJudge:
		return judgeYes(v)
	case judgeutil.SourceHybrid:
		return b2f(v.Solved) * judgeYes(v)
	}
	return b2f(v.Solved)
}

func judgeYes(v *Verdict) float64 {
	if v.Judge != nil && *v.Judge >= 1 {
		return 1
	}
	return 0
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func corr(x, y []float64) *float64 {
	if len(x) < 2 {
		return nil
	}
	c := stat.Correlation(x, y, nil)
	if math.IsNaN(c) || math.IsInf(c, 0) {
		return nil
	}
	return &c
}

func confusion(rows []*Row) Confusion {
	var c Confusion
	for _, r := range rows {
		solved := r.Sources[judgeutil.SourceExecutable].Solved
		yes := judgeYes(r.Sources[judgeutil.SourceJudge]) == 1
		switch {
		case solved && yes:
			c.BothPass++
		case solved:
			c.VerifierOnly++
		case yes:
			c.JudgeOnly++
		default:
			c.Neither++
		}
	}
	n := float64(len(rows))
	po := float64(c.BothPass+c.Neither) / n
	c.Agreement = po
	pv, pj := float64(c.BothPass+c.VerifierOnly)/n, float64(c.BothPass+c.JudgeOnly)/n
	pe := pv*pj + (1-pv)*(1-pj)
	if pe < 1 {
		k := (po - pe) / (1 - pe)
		c.Kappa = &k
	}
	return c
}

func labels(rows []*Row) []LabelCell {
	type key struct{ g, p string }
	cells := map[key]*LabelCell{}
	any := false
	for _, r := range rows {
		if r.Gold != "" || r.Predicted != "" {
			any = true
		}
		k := key{orNone(r.Gold), orNone(r.Predicted)}
		c := cells[k]
		if c == nil {
			c = &LabelCell{Gold: k.g, Predicted: k.p}
			cells[k] = c
		}
		c.N++
		c.Solved += b2f(r.Sources[judgeutil.SourceExecutable].Solved)
		c.JudgeYes += judgeYes(r.Sources[judgeutil.SourceJudge])
		c.Executable += r.Sources[judgeutil.SourceExecutable].Reward
		c.Hybrid += r.Sources[judgeutil.SourceHybrid].Reward
	}
	if !any {
		return nil
	}
	out := make([]LabelCell, 0, len(cells))
	for _, c := range cells {
		n := float64(c.N)
		c.Solved, c.JudgeYes, c.Executable, c.Hybrid = c.Solved/n, c.JudgeYes/n, c.Executable/n, c.Hybrid/n
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b LabelCell) int {
		return cmp.Or(cmp.Compare(a.Gold, b.Gold), cmp.Compare(a.Predicted, b.Predicted))
	})
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// maxTokens reads the manifest's max_tokens: its schema needs a number, so
// "not sent" is stored as artifact.UnboundedTokens, which a reader is
// told as the server's default, never as 2147483647 tokens.
func maxTokens(n int) string {
	if n == artifact.UnboundedTokens {
		return "server default"
	}
	return strconv.Itoa(n)
}

func budget(run *Run) Budget {
	m := run.Manifest
	b := Budget{Fields: map[string]string{}, Note: "the executable, llm_judge and hybrid scores come from the same rollouts, so every budget field is equal across the three sources by construction"}
	if m == nil {
		return b
	}
	vals := []string{m.EnvironmentID, m.DatasetID, m.DatasetRevision, m.Split, m.ModelID, m.ModelRevision,
		strconv.Itoa(m.MaxSteps), strconv.Itoa(m.RolloutsPerExample), maxTokens(m.MaxTokens), strconv.Itoa(m.MaxTurns), strconv.Itoa(m.ToolBudget), m.Trainer}
	for i, f := range BudgetFields {
		b.Fields[f] = vals[i]
	}
	return b
}
