package report

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/metrics"
)

// StepPoint is one training step of a learning curve.
type StepPoint struct {
	Step       int64              `json:"step"`
	N          int                `json:"n"`
	Reward     float64            `json:"reward_mean"`
	RewardLo   float64            `json:"reward_ci_lo"`
	RewardHi   float64            `json:"reward_ci_hi"`
	Components map[string]float64 `json:"components"`
	// ComponentLo/Hi are the components' 95% intervals.
	ComponentLo map[string]float64 `json:"components_ci_lo"`
	ComponentHi map[string]float64 `json:"components_ci_hi"`
	// FormatValid and Abstain are shares of the step's rows, nil when the
	// environment does not report them.
	FormatValid *float64 `json:"format_valid_rate,omitempty"`
	Abstain     *float64 `json:"abstain_rate,omitempty"`
}

// learningCurve draws reward and every component against the training step
// for rows a trainer wrote (their Trainer.Step), with seeded bootstrap 95%
// bands per step, plus the format-valid and abstention rates. It returns
// nothing for rows without steps.
func learningCurve(rows []artifact.Result, seed uint64, reps int) ([]StepPoint, []Chart, string) {
	bySteps := map[int64][]int{}
	for i := range rows {
		r := &rows[i]
		if r.Trainer == nil || r.Trainer.Step == nil || r.Error != "" || r.ScoreError != "" || r.Unverifiable != "" {
			continue
		}
		bySteps[*r.Trainer.Step] = append(bySteps[*r.Trainer.Step], i)
	}
	if len(bySteps) < 2 {
		return nil, nil, ""
	}
	steps := slices.Sorted(maps.Keys(bySteps))
	names := map[string]bool{}
	for _, idx := range bySteps {
		for _, i := range idx {
			for k := range rows[i].Components {
				names[k] = true
			}
		}
	}
	comps := slices.Sorted(maps.Keys(names))
	var pts []StepPoint
	for _, st := range steps {
		idx := bySteps[st]
		pt := StepPoint{Step: st, N: len(idx), Components: map[string]float64{}, ComponentLo: map[string]float64{}, ComponentHi: map[string]float64{}}
		mean := func(f func(r *artifact.Result) float64) metrics.Stat {
			return func(sample []int) float64 {
				s := 0.0
				for _, j := range sample {
					s += f(&rows[idx[j]])
				}
				return s / float64(len(sample))
			}
		}
		stats := []metrics.Stat{mean(func(r *artifact.Result) float64 { return r.Reward })}
		for _, c := range comps {
			stats = append(stats, mean(func(r *artifact.Result) float64 { return r.Components[c] }))
		}
		cis := metrics.BootstrapMulti(len(idx), stats, reps, seed^uint64(st))
		pt.Reward, pt.RewardLo, pt.RewardHi = cis[0].Point, cis[0].Lo, cis[0].Hi
		for k, c := range comps {
			pt.Components[c], pt.ComponentLo[c], pt.ComponentHi[c] = cis[k+1].Point, cis[k+1].Lo, cis[k+1].Hi
		}
		pt.FormatValid = shareOf(rows, idx, func(r *artifact.Result) (bool, bool) {
			v, ok := r.Parsed["format_valid"].(bool)
			return v, ok
		})
		pt.Abstain = shareOf(rows, idx, func(r *artifact.Result) (bool, bool) {
			v, ok := r.Parsed["predicted_label"].(string)
			return v == "Abstain", ok
		})
		pts = append(pts, pt)
	}

	x := make([]float64, len(pts))
	for i, p := range pts {
		x[i] = float64(p.Step)
	}
	col := func(f func(StepPoint) float64) []float64 {
		out := make([]float64, len(pts))
		for i, p := range pts {
			out[i] = f(p)
		}
		return out
	}
	var charts []Chart
	reward := Chart{Name: "learning_curve_reward", Title: "Reward by training step (mean, 95% band)"}
	reward.SVG = LineChart(reward.Title, "training step", "reward", x, []Series{{Name: "reward",
		Mean: col(func(p StepPoint) float64 { return p.Reward }), Lo: col(func(p StepPoint) float64 { return p.RewardLo }), Hi: col(func(p StepPoint) float64 { return p.RewardHi })}}, false)
	charts = append(charts, reward)
	if len(comps) > 0 {
		var series []Series
		for _, c := range comps {
			series = append(series, Series{Name: c,
				Mean: col(func(p StepPoint) float64 { return p.Components[c] }),
				Lo:   col(func(p StepPoint) float64 { return p.ComponentLo[c] }),
				Hi:   col(func(p StepPoint) float64 { return p.ComponentHi[c] })})
		}
		ch := Chart{Name: "learning_curve_components", Title: "Reward components by training step (mean, 95% band)"}
		ch.SVG = LineChart(ch.Title, "training step", "component value", x, series, false)
		charts = append(charts, ch)
	}
	var rates []Series
	if pts[0].FormatValid != nil {
		rates = append(rates, Series{Name: "format valid", Mean: col(func(p StepPoint) float64 { return deref(p.FormatValid) })})
	}
	if pts[0].Abstain != nil {
		rates = append(rates, Series{Name: "abstain", Mean: col(func(p StepPoint) float64 { return deref(p.Abstain) })})
	}
	if len(rates) > 0 {
		ch := Chart{Name: "learning_curve_rates", Title: "Format-valid and abstention rates by training step"}
		ch.SVG = LineChart(ch.Title, "training step", "share of rollouts", x, rates, true)
		charts = append(charts, ch)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "\n## Learning curve\n\n%d training steps (%d–%d), %s rollouts per step. Bands are seeded bootstrap 95%% intervals of the step's mean.\n\n",
		len(pts), pts[0].Step, pts[len(pts)-1].Step, rangeOfN(pts))
	for _, c := range charts {
		b.WriteString(ChartRef(c))
	}
	header := []string{"step", "n", "reward [95% CI]"}
	header = append(header, comps...)
	var trows [][]string
	for _, p := range sampleSteps(pts, 12) {
		row := []string{fmt.Sprint(p.Step), fmt.Sprint(p.N), fmt.Sprintf("%s [%s, %s]", F(p.Reward), F(p.RewardLo), F(p.RewardHi))}
		for _, c := range comps {
			row = append(row, F(p.Components[c]))
		}
		trows = append(trows, row)
	}
	b.WriteString("\n" + Table(header, trows))
	return pts, charts, b.String()
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// shareOf is the share of rows where f says true, among rows where f knows;
// nil when it knows of none.
func shareOf(rows []artifact.Result, idx []int, f func(*artifact.Result) (bool, bool)) *float64 {
	yes, known := 0, 0
	for _, i := range idx {
		if v, ok := f(&rows[i]); ok {
			known++
			if v {
				yes++
			}
		}
	}
	if known == 0 {
		return nil
	}
	s := float64(yes) / float64(known)
	return &s
}

func rangeOfN(pts []StepPoint) string {
	lo := slices.MinFunc(pts, func(a, b StepPoint) int { return cmp.Compare(a.N, b.N) }).N
	hi := slices.MaxFunc(pts, func(a, b StepPoint) int { return cmp.Compare(a.N, b.N) }).N
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// sampleSteps keeps at most n evenly spaced steps, first and last included,
// so a 1,000-step run gives a readable table (the chart has them all).
func sampleSteps(pts []StepPoint, n int) []StepPoint {
	if len(pts) <= n {
		return pts
	}
	var out []StepPoint
	for i := range n {
		out = append(out, pts[i*(len(pts)-1)/(n-1)])
	}
	return out
}
