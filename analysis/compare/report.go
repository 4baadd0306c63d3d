package compare

import (
	"fmt"
	"math"
	"strings"
)

// Comparison is `svbench compare`'s result for one pair of runs (B against
// the baseline A).
type Comparison struct {
	A          string     `json:"baseline"`
	B          string     `json:"candidate"`
	ModelA     string     `json:"baseline_model,omitempty"`
	ModelB     string     `json:"candidate_model,omitempty"`
	Pairs      int        `json:"pairs"`
	OnlyA      int        `json:"unpaired_baseline_rows"`
	OnlyB      int        `json:"unpaired_candidate_rows"`
	Mismatches []Mismatch `json:"mismatches,omitempty"`
	Quantities []Quantity `json:"quantities"`
	// Metrics are run-level (non-decomposable) metrics of classification
	// runs: macro-F1, ECE, accuracy on decided rows.
	Metrics []Quantity `json:"run_metrics,omitempty"`
	Slices  []Slice    `json:"slices,omitempty"`
}

// Runs compares candidate against baseline. opts.AllowUnpaired permits
// rows without a partner (they are counted and left out); a budget
// mismatch is always refused unless opts.AllowMismatch. The CLI and the
// dashboard both call it, with the same Options.
func Runs(a, b *Run, opts Options) (*Comparison, error) {
	c := &Comparison{A: a.Dir, B: b.Dir}
	if a.Meta != nil {
		c.ModelA = a.Meta.Model
	}
	if b.Meta != nil {
		c.ModelB = b.Meta.Model
	}
	c.Mismatches = Mismatches(a.Meta, b.Meta)
	if len(c.Mismatches) > 0 && !opts.AllowMismatch {
		var d []string
		for _, m := range c.Mismatches {
			d = append(d, m.String())
		}
		return nil, fmt.Errorf("%s and %s are not comparable: %s (match the budgets and settings, or pass --allow-mismatch to compare anyway and say so)", a.Dir, b.Dir, strings.Join(d, "; "))
	}
	p := Pair(a.Rows, b.Rows)
	c.Pairs, c.OnlyA, c.OnlyB = len(p.A), p.OnlyA, p.OnlyB
	if c.Pairs == 0 {
		return nil, fmt.Errorf("%s and %s share no (example, rollout) pair: were they run on the same dataset and seed?", a.Dir, b.Dir)
	}
	if (c.OnlyA > 0 || c.OnlyB > 0) && !opts.AllowUnpaired {
		return nil, fmt.Errorf("%s and %s are not fully paired: %d rows only in the baseline, %d only in the candidate (finish the runs with --resume, or pass --allow-unpaired to compare the %d shared pairs)", a.Dir, b.Dir, c.OnlyA, c.OnlyB, c.Pairs)
	}
	names := intersect(a.Names, b.Names)
	c.Quantities = Quantities(p, names, opts)
	c.Metrics = RunMetrics(p, opts)
	c.Slices = Slices(p, a.Fields, names, opts)
	return c, nil
}

func intersect(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if in[x] {
			out = append(out, x)
		}
	}
	return out
}

// Markdown renders the comparison.
func (c *Comparison) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s → %s\n\n", orDash(c.ModelA, c.A), orDash(c.ModelB, c.B))
	fmt.Fprintf(&b, "Baseline `%s`, candidate `%s`: %d paired rollouts", c.A, c.B, c.Pairs)
	if c.OnlyA+c.OnlyB > 0 {
		fmt.Fprintf(&b, " (%d baseline and %d candidate rows unpaired, left out)", c.OnlyA, c.OnlyB)
	}
	b.WriteString(".\n\n")
	for _, m := range c.Mismatches {
		fmt.Fprintf(&b, "**Not budget-matched:** %s.\n\n", m)
	}
	b.WriteString(quantityTable(c.Quantities))
	b.WriteString("\nΔ is candidate − baseline with a paired bootstrap 95% interval; p from the paired test named; d_z = mean Δ / sd Δ; McNemar for pass/fail quantities. **bold** = the interval excludes 0 and has width (a degenerate interval, every resample equal, is never bold) and p < 0.05.\n")
	if len(c.Metrics) > 0 {
		b.WriteString("\n### Run-level metrics\n\n| metric | examples | baseline | candidate | Δ | 95% CI | p |\n|---|---|---|---|---|---|---|\n")
		for _, q := range c.Metrics {
			name := q.Name
			if q.Name == MetricECE {
				name += " ↓"
			}
			fmt.Fprintf(&b, "| %s | %d | %.4f | %.4f | %s | [%.4f, %.4f] | %.3g |\n", name, q.N, q.MeanA, q.MeanB, diffCell(q), q.DiffLo, q.DiffHi, q.P)
		}
		b.WriteString("\nNot means of per-row values: the interval resamples whole examples (both runs with the same draw) and p comes from swapping the two runs' answers to each example at random. macro_f1 averages F1 over the gold classes (an abstention or unparsed answer is a miss); ece uses the stated confidence of decided rows; accuracy_decided leaves abstentions out.\n")
	}
	if len(c.Slices) > 0 {
		b.WriteString("\n### By slice (reward)\n\n")
		// Untested slices are folded into one line per field: a row of
		// dashes each (25 of them on a 150-row E1 run) buried the few
		// slices that were tested.
		var untested []string
		var fields []string
		byField := map[string][]string{}
		tested := 0
		for _, s := range c.Slices {
			if s.Tested() {
				tested++
				continue
			}
			if _, ok := byField[s.Field]; !ok {
				fields = append(fields, s.Field)
			}
			byField[s.Field] = append(byField[s.Field], fmt.Sprintf("%s (%d)", s.Value, s.N))
		}
		for _, f := range fields {
			untested = append(untested, f+": "+strings.Join(byField[f], ", "))
		}
		if tested > 0 {
			b.WriteString("| field | value | n | Δ | 95% CI | p | p (Holm) |\n|---|---|---|---|---|---|---|\n")
			for _, s := range c.Slices {
				if !s.Tested() {
					continue
				}
				for _, q := range s.Quantity {
					if q.Name != "reward" {
						continue
					}
					fmt.Fprintf(&b, "| %s | %s | %d | %s | [%.4f, %.4f] | %.3g | %.3g |\n", s.Field, s.Value, q.N, diffCell(q), q.DiffLo, q.DiffHi, q.P, q.AdjustedP())
				}
			}
			fmt.Fprintf(&b, "\np (Holm) adjusts each quantity's p-values over all tested slices (Holm's step-down method, family-wise error rate); a slice is **bold** only when its interval excludes 0 and has width and its Holm-adjusted p is under %g.\n", Alpha)
		}
		if len(untested) > 0 {
			fmt.Fprintf(&b, "\nNot tested (fewer than %d pairs; value (pairs)): %s.\n", MinSliceN, strings.Join(untested, "; "))
		}
	}
	return b.String()
}

func quantityTable(qs []Quantity) string {
	var b strings.Builder
	b.WriteString("| quantity | n | baseline | candidate | Δ | 95% CI | p | d_z | McNemar (A only / B only, p) |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, q := range qs {
		es := "n/a"
		if q.EffectSize != nil {
			es = fmt.Sprintf("%.3f", *q.EffectSize)
		}
		mc := "—"
		if q.McNemar != nil {
			mc = fmt.Sprintf("%d / %d, %.3g", q.McNemar.OnlyA, q.McNemar.OnlyB, q.McNemar.P)
		}
		fmt.Fprintf(&b, "| %s | %d | %.4f | %.4f | %s | [%.4f, %.4f] | %.3g (%s) | %s | %s |\n",
			q.Name, q.N, q.MeanA, q.MeanB, diffCell(q), q.DiffLo, q.DiffHi, q.P, q.Test, es, mc)
	}
	return b.String()
}

func diffCell(q Quantity) string {
	s := fmt.Sprintf("%+.4f", q.Diff)
	if q.Bold() {
		return "**" + s + "**"
	}
	return s
}

func orDash(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// GateRule is one metric's allowed drop.
type GateRule struct {
	Metric string
	// MaxDrop is the largest relative drop allowed (0.03 = 3%).
	MaxDrop float64
	// LowerIsBetter flips the direction (a rise is a regression).
	LowerIsBetter bool
}

// GateResult is one rule's verdict.
type GateResult struct {
	Metric      string  `json:"metric"`
	Baseline    float64 `json:"baseline"`
	Candidate   float64 `json:"candidate"`
	RelDrop     float64 `json:"relative_drop"`
	MaxDrop     float64 `json:"max_drop"`
	Significant bool    `json:"significant"`
	// Verdict is "pass", "fail", "noise" (over the limit but the paired
	// interval includes 0) or "missing".
	Verdict string `json:"verdict"`
}

// Gate applies the rules to a comparison. A drop beyond the limit fails
// only when the paired 95% interval excludes 0 (or always, when strict).
func Gate(c *Comparison, rules []GateRule, strict bool) ([]GateResult, bool) {
	byName := map[string]Quantity{}
	for _, q := range c.Metrics {
		byName[q.Name] = q
	}
	for _, q := range c.Quantities {
		byName[q.Name] = q
	}
	ok := true
	var out []GateResult
	for _, r := range rules {
		q, found := byName[r.Metric]
		if !found {
			out = append(out, GateResult{Metric: r.Metric, MaxDrop: r.MaxDrop, Verdict: "missing"})
			ok = false
			continue
		}
		drop := q.MeanA - q.MeanB
		if r.LowerIsBetter {
			drop = -drop
		}
		rel := drop / math.Max(math.Abs(q.MeanA), 1e-12)
		g := GateResult{Metric: r.Metric, Baseline: q.MeanA, Candidate: q.MeanB, RelDrop: rel, MaxDrop: r.MaxDrop, Significant: q.Significant(), Verdict: "pass"}
		if rel > r.MaxDrop {
			switch {
			case q.Significant() || strict:
				g.Verdict, ok = "fail", false
			default:
				g.Verdict = "noise"
			}
		}
		out = append(out, g)
	}
	return out, ok
}
