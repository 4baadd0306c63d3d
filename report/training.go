package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/svbench/svbench/ingest"
)

// SmoothWindow is the width, in logged steps, of the centred moving average
// drawn over a training curve's raw points.
const SmoothWindow = 5

// Fractions are the shares of the final reward whose first crossing
// TrainingSummary reports.
var Fractions = []float64{0.5, 0.9}

// StepFigure is one step's figures.
type StepFigure struct {
	Step       int64              `json:"step"`
	Reward     float64            `json:"reward_mean"`
	RewardMin  *float64           `json:"reward_min,omitempty"`
	RewardMax  *float64           `json:"reward_max,omitempty"`
	Components map[string]float64 `json:"components,omitempty"`
	DecodeLen  *float64           `json:"decode_len_mean,omitempty"`
}

// EvalFigures is the trainer's evaluation before and after training.
type EvalFigures struct {
	BeforeStep int64   `json:"before_step"`
	Before     float64 `json:"before"`
	AfterStep  int64   `json:"after_step"`
	After      float64 `json:"after"`
	Delta      float64 `json:"delta"`
}

// TrainingSummary is what summary.json says about a training run from the
// trainer's own step metrics.
type TrainingSummary struct {
	Source string `json:"source"`
	Env    string `json:"env"`
	// Steps counts steps with a training reward.
	Steps int        `json:"steps"`
	First StepFigure `json:"first"`
	Last  StepFigure `json:"last"`
	Best  StepFigure `json:"best"`
	// FinalReward is the smoothed reward at the last step (the centred
	// moving average of SmoothWindow steps, shortened at the edge).
	FinalReward float64      `json:"final_reward_smoothed"`
	Eval        *EvalFigures `json:"eval,omitempty"`
	// StepsToFraction is, per fraction ("50%"), the first step whose
	// smoothed reward reaches that fraction of FinalReward (nil: never, or
	// FinalReward ≤ 0).
	StepsToFraction map[string]*int64 `json:"steps_to_fraction_of_final"`
	// AUC is the trapezoidal area under the mean reward over steps; MeanAUC
	// divides it by the steps spanned (the run's average reward).
	AUC     float64 `json:"auc"`
	MeanAUC float64 `json:"auc_per_step"`
	// Smoothed is the moving average at every step with a reward, for
	// overlaying runs.
	Curve []CurvePoint `json:"curve"`
}

// CurvePoint is one step of a curve: raw mean and smoothed value.
type CurvePoint struct {
	Step     int64   `json:"step"`
	Reward   float64 `json:"reward_mean"`
	Smoothed float64 `json:"smoothed"`
}

// Training summarises and draws a trainer's per-step metrics: reward (raw
// points, smoothed line, min–max band), each reward component, and decode
// length. ok is false when no step has a reward.
func Training(sm *ingest.StepMetrics) (sum TrainingSummary, charts []Chart, md string, ok bool) {
	var steps []ingest.Step
	for _, s := range sm.Steps {
		if s.Reward != nil {
			steps = append(steps, s)
		}
	}
	if len(steps) == 0 {
		return sum, nil, "", false
	}
	x := make([]float64, len(steps))
	raw := make([]float64, len(steps))
	for i, s := range steps {
		x[i], raw[i] = float64(s.Step), *s.Reward
	}
	smooth := MovingAverage(raw, SmoothWindow)
	fig := func(s ingest.Step) StepFigure {
		return StepFigure{Step: s.Step, Reward: *s.Reward, RewardMin: s.RewardMin, RewardMax: s.RewardMax, Components: s.Components, DecodeLen: s.DecodeLen}
	}
	best := 0
	for i := range raw {
		if raw[i] > raw[best] {
			best = i
		}
	}
	sum = TrainingSummary{Source: sm.Source, Env: sm.Env, Steps: len(steps),
		First: fig(steps[0]), Last: fig(steps[len(steps)-1]), Best: fig(steps[best]),
		FinalReward: smooth[len(smooth)-1], StepsToFraction: map[string]*int64{}}
	for _, f := range Fractions {
		var hit *int64
		if sum.FinalReward > 0 {
			for i, v := range smooth {
				if v >= f*sum.FinalReward {
					st := steps[i].Step
					hit = &st
					break
				}
			}
		}
		sum.StepsToFraction[fmt.Sprintf("%.0f%%", 100*f)] = hit
	}
	for i := 1; i < len(x); i++ {
		sum.AUC += (x[i] - x[i-1]) * (raw[i] + raw[i-1]) / 2
	}
	if span := x[len(x)-1] - x[0]; span > 0 {
		sum.MeanAUC = sum.AUC / span
	} else {
		sum.MeanAUC = raw[0]
	}
	for i := range steps {
		sum.Curve = append(sum.Curve, CurvePoint{Step: steps[i].Step, Reward: raw[i], Smoothed: smooth[i]})
	}
	var evals []ingest.Step
	for _, s := range sm.Steps {
		if s.Eval != nil {
			evals = append(evals, s)
		}
	}
	if len(evals) >= 2 {
		a, b := evals[0], evals[len(evals)-1]
		sum.Eval = &EvalFigures{BeforeStep: a.Step, Before: *a.Eval, AfterStep: b.Step, After: *b.Eval, Delta: *b.Eval - *a.Eval}
	}

	// Reward: min–max band, raw points, smoothed line.
	lo, hi := col(steps, func(s ingest.Step) *float64 { return s.RewardMin }), col(steps, func(s ingest.Step) *float64 { return s.RewardMax })
	var series []Series
	if lo != nil && hi != nil {
		series = append(series, Series{Name: "min–max", Mean: smooth, Lo: lo, Hi: hi, Color: "#9ecae1"})
	}
	series = append(series,
		Series{Name: "mean (each step)", Mean: raw, Points: true, Color: colBlue},
		Series{Name: fmt.Sprintf("smoothed (%d-step average)", SmoothWindow), Mean: smooth, Color: colOrange})
	ch := Chart{Name: "training_reward", Title: "Training reward by step (trainer's metrics)"}
	ch.SVG = LineChart(ch.Title, "training step", "reward", x, series, false)
	charts = append(charts, ch)

	comps := map[string]bool{}
	for _, s := range steps {
		for k := range s.Components {
			comps[k] = true
		}
	}
	if len(comps) > 0 {
		var cs []Series
		for i, c := range slices.Sorted(maps.Keys(comps)) {
			vals := make([]float64, len(steps))
			for j, s := range steps {
				v, ok := s.Components[c]
				if !ok {
					v = math.NaN()
				}
				vals[j] = v
			}
			color := seriesColors[i%len(seriesColors)]
			cs = append(cs, Series{Name: c, Mean: vals, Points: true, Color: color},
				Series{Name: c + " (smoothed)", Mean: MovingAverage(vals, SmoothWindow), Color: color})
		}
		ch := Chart{Name: "training_components", Title: "Reward components by step (trainer's metrics)"}
		ch.SVG = LineChart(ch.Title, "training step", "component mean", x, cs, false)
		charts = append(charts, ch)
	}
	if dl := col(steps, func(s ingest.Step) *float64 { return s.DecodeLen }); dl != nil {
		series := []Series{}
		if lo, hi := col(steps, func(s ingest.Step) *float64 { return s.DecodeLenMin }), col(steps, func(s ingest.Step) *float64 { return s.DecodeLenMax }); lo != nil && hi != nil {
			series = append(series, Series{Name: "min–max", Mean: MovingAverage(dl, SmoothWindow), Lo: lo, Hi: hi, Color: "#9ecae1"})
		}
		series = append(series, Series{Name: "mean (each step)", Mean: dl, Points: true, Color: colBlue},
			Series{Name: "smoothed", Mean: MovingAverage(dl, SmoothWindow), Color: colOrange})
		ch := Chart{Name: "training_decode_len", Title: "Decode length by step (tokens, trainer's metrics)"}
		ch.SVG = LineChart(ch.Title, "training step", "tokens", x, series, false)
		charts = append(charts, ch)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "\n## Training curves (the trainer's own step metrics)\n\nRead from `%s` (environment `%s`): %d steps with a training reward (%d–%d). Points are each step's mean over its rollouts, the line a centred moving average over %d steps, the band the step's min–max.\n\n",
		sm.Source, sm.Env, len(steps), steps[0].Step, steps[len(steps)-1].Step, SmoothWindow)
	for _, c := range charts {
		b.WriteString(ChartRef(c))
	}
	rows := [][]string{
		{"first step", fmt.Sprintf("step %d: %s", sum.First.Step, F(sum.First.Reward))},
		{"last step", fmt.Sprintf("step %d: %s", sum.Last.Step, F(sum.Last.Reward))},
		{"best step", fmt.Sprintf("step %d: %s", sum.Best.Step, F(sum.Best.Reward))},
		{"final reward (smoothed)", F(sum.FinalReward)},
		{"area under the curve", fmt.Sprintf("%s (%s per step)", F(sum.AUC), F(sum.MeanAUC))},
	}
	for _, f := range Fractions {
		k := fmt.Sprintf("%.0f%%", 100*f)
		v := "never"
		if s := sum.StepsToFraction[k]; s != nil {
			v = fmt.Sprintf("step %d", *s)
		}
		rows = append(rows, []string{"first step at " + k + " of the final reward", v})
	}
	if e := sum.Eval; e != nil {
		rows = append(rows, []string{"eval (trainer's avg@1)", fmt.Sprintf("%s at step %d → %s at step %d (Δ %+.4f)", F(e.Before), e.BeforeStep, F(e.After), e.AfterStep, e.Delta)})
	}
	b.WriteString("\n" + Table([]string{"figure", "value"}, rows))
	return sum, charts, b.String(), true
}

// col is a per-step column, nil unless every step has a value.
func col(steps []ingest.Step, f func(ingest.Step) *float64) []float64 {
	out := make([]float64, len(steps))
	for i, s := range steps {
		v := f(s)
		if v == nil {
			return nil
		}
		out[i] = *v
	}
	return out
}

// MovingAverage is the centred moving average of width w (odd; shortened at
// the edges), skipping NaN values; NaN where a window holds none.
func MovingAverage(v []float64, w int) []float64 {
	h := max(w, 1) / 2
	out := make([]float64, len(v))
	for i := range v {
		sum, n := 0.0, 0
		for _, x := range v[max(0, i-h):min(len(v), i+h+1)] {
			if !math.IsNaN(x) {
				sum += x
				n++
			}
		}
		out[i] = math.NaN()
		if n > 0 {
			out[i] = sum / float64(n)
		}
	}
	return out
}
