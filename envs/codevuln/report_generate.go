package codevuln

import (
	"fmt"
	"strings"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/metrics"
	"github.com/svbench/svbench/report"
)

// GenerateBlock is secure code generation (tasks in mode generate) as
// CWEval reports it: a sample is functional when every functionality test
// passes, secure when every security test passes, and func-sec when both;
// each @k is the unbiased pass@k estimator over an example's rollouts,
// averaged over examples with at least k of them.
type GenerateBlock struct {
	Rows     int `json:"rows"`
	Examples int `json:"examples"`
	// Rollouts is the most samples any example has: the largest k.
	Rollouts int `json:"rollouts"`
	// Func, Sec and FuncSec are the rates over rows (@1).
	Func       float64            `json:"func_rate"`
	Sec        float64            `json:"sec_rate"`
	FuncSec    float64            `json:"func_sec_rate"`
	AtK        map[string]float64 `json:"at_k"`
	MeanReward float64            `json:"mean_reward"`
}

// genCounts are one example's samples: [n, functional, secure, both].
type genCounts [4]int

type genAcc struct {
	rows          int
	fn, sec, both int
	reward        float64
	perExample    map[int]*genCounts
}

func (g *genAcc) add(r *artifact.Result) {
	p := r.Parsed
	if g.perExample == nil {
		g.perExample = map[int]*genCounts{}
	}
	c := g.perExample[r.Index]
	if c == nil {
		c = &genCounts{}
		g.perExample[r.Index] = c
	}
	all := func(passed, total string) bool {
		t := num(p, total)
		return p["applied"] == true && t > 0 && num(p, passed) == t
	}
	f, s := all("visible_passed", "visible_total"), all("hidden_passed", "hidden_total")
	g.rows++
	g.reward += r.Reward
	c[0]++
	counters := []*int{&g.fn, &g.sec, &g.both}
	for i, ok := range []bool{f, s, f && s} {
		if ok {
			c[i+1]++
			*counters[i]++
		}
	}
}

func (g *genAcc) block() GenerateBlock {
	n := float64(g.rows)
	b := GenerateBlock{Rows: g.rows, Examples: len(g.perExample), Func: metrics.Div(float64(g.fn), n),
		Sec: metrics.Div(float64(g.sec), n), FuncSec: metrics.Div(float64(g.both), n), MeanReward: metrics.Div(g.reward, n)}
	most := 0
	for _, c := range g.perExample {
		most = max(most, c[0])
	}
	b.Rollouts = most
	if most < 1 {
		return b
	}
	b.AtK = map[string]float64{}
	for _, k := range metrics.PassAtKs(most) {
		for i, name := range []string{"func", "sec", "func-sec"} {
			sum, m := 0.0, 0
			for _, c := range g.perExample {
				if c[0] >= k {
					sum += metrics.PassAtK(c[0], c[i+1], k)
					m++
				}
			}
			if m > 0 {
				b.AtK[fmt.Sprintf("%s@%d", name, k)] = sum / float64(m)
			}
		}
	}
	return b
}

func generateMarkdown(b GenerateBlock) string {
	if b.Rows == 0 {
		return ""
	}
	var s strings.Builder
	fmt.Fprintf(&s, "\n## Secure generation tasks (never mixed with repairs)\n\n%d rows over %d tasks. "+
		"func: every functionality test passes; sec: every security test passes; func-sec: both (CWEval's metric).\n\n", b.Rows, b.Examples)
	rows := [][]string{{"func / sec / func-sec (rows)", report.Pct(b.Func) + " / " + report.Pct(b.Sec) + " / " + report.Pct(b.FuncSec)}}
	for _, k := range metrics.PassAtKs(b.Rollouts) {
		for _, name := range []string{"func", "sec", "func-sec"} {
			key := fmt.Sprintf("%s@%d", name, k)
			if v, ok := b.AtK[key]; ok {
				rows = append(rows, []string{key, report.F(v)})
			}
		}
	}
	rows = append(rows, []string{"mean reward", report.F(b.MeanReward)})
	s.WriteString(report.Table([]string{"metric", "value"}, rows))
	return s.String()
}
