package runner

import (
	"fmt"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
)

// aggregate keeps running totals for metadata without holding rows.
type aggregate struct {
	completed, errors int
	unanswered        int
	// scoredErrors are error rows the runner scored as no answer.
	scoredErrors int
	rewardSum    float64
	compSum      map[string]float64
	compN        map[string]int
	usage        env.Usage
	// perExample[index] = (rollouts, passes) for pass@k.
	perExample map[int]*[2]int
}

func newAggregate() *aggregate {
	return &aggregate{compSum: map[string]float64{}, compN: map[string]int{}, perExample: map[int]*[2]int{}}
}

func (a *aggregate) add(r *artifact.Result) {
	a.usage.Add(r.Usage)
	if r.Error != "" {
		a.errors++
		if !r.FailedButScored() {
			return
		}
		// Scored as no answer: it counts in the averages as the reports
		// count it, and stays an error for --resume to retry.
		a.scoredErrors++
	} else {
		a.completed++
	}
	if r.Unanswered != "" {
		a.unanswered++
	}
	a.rewardSum += r.Reward
	for k, v := range r.Components {
		a.compSum[k] += v
		a.compN[k]++
	}
	pe := a.perExample[r.Index]
	if pe == nil {
		pe = &[2]int{}
		a.perExample[r.Index] = pe
	}
	pe[0]++
	if Passed(r) {
		pe[1]++
	}
}

// Passed decides whether a rollout solved its example, for pass@k, by the
// environment's own verdict (env.Info.SolvedWhen). A row without one (an
// older run, a scoring error) did not pass: guessing from components once
// counted every schema-valid E2 answer as solved.
func Passed(r *artifact.Result) bool {
	return r.Solved != nil && *r.Solved
}

func (a *aggregate) fill(m *artifact.Metadata) {
	m.Completed, m.Errors, m.Usage = a.completed, a.errors, a.usage
	m.Unanswered = a.unanswered
	m.AvgReward = 0
	if n := a.completed + a.scoredErrors; n > 0 {
		m.AvgReward = a.rewardSum / float64(n)
	}
	m.AvgComponents = map[string]float64{}
	for k, s := range a.compSum {
		m.AvgComponents[k] = s / float64(a.compN[k])
	}
	m.PassAtK = nil
	if m.Rollouts > 1 {
		m.PassAtK = passAtK(a.perExample, m.Rollouts)
	}
}

// passAtK uses the unbiased estimator 1 - C(n-c, k)/C(n, k) averaged over
// examples, for k = 1, 2, 4, … up to the rollouts per example.
func passAtK(per map[int]*[2]int, rollouts int) map[string]float64 {
	var ks []int
	for k := 1; k < rollouts; k *= 2 {
		ks = append(ks, k)
	}
	ks = append(ks, rollouts)
	out := map[string]float64{}
	for _, k := range ks {
		sum, n := 0.0, 0
		for _, pe := range per {
			total, pass := pe[0], pe[1]
			if total < k {
				continue
			}
			sum += 1 - comboRatio(total-pass, total, k)
			n++
		}
		if n > 0 {
			out[fmt.Sprintf("pass@%d", k)] = sum / float64(n)
		}
	}
	return out
}

// comboRatio is C(a, k)/C(n, k) computed as a product to stay in range.
func comboRatio(a, n, k int) float64 {
	if a < k {
		return 0
	}
	r := 1.0
	for i := range k {
		r *= float64(a-i) / float64(n-i)
	}
	return r
}
