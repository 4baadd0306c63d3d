package runner

import (
	"fmt"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/metrics"
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

// passAtK averages metrics.PassAtK over examples, for k = 1, 2, 4, … up
// to the rollouts per example.
func passAtK(per map[int]*[2]int, rollouts int) map[string]float64 {
	out := map[string]float64{}
	for _, k := range metrics.PassAtKs(rollouts) {
		sum, n := 0.0, 0
		for _, pe := range per {
			if pe[0] < k {
				continue
			}
			sum += metrics.PassAtK(pe[0], pe[1], k)
			n++
		}
		if n > 0 {
			out[fmt.Sprintf("pass@%d", k)] = sum / float64(n)
		}
	}
	return out
}
