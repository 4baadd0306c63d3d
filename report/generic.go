package report

import (
	"bytes"
	"fmt"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/metrics"
)

// GenericGroup is one line of a generic breakdown table.
type GenericGroup struct {
	GroupHead
	MeanReward float64 `json:"mean_reward"`
	// SolvedRate is nil when no row of the group says whether it was
	// solved (rows written before environments declared it).
	SolvedRate *float64 `json:"solved_rate"`
}

// Generic returns the report every environment without a builder of its own
// gets: mean reward and solved rate with 95% bootstrap intervals (a cluster
// bootstrap over examples, as every builder's: all rollouts of a drawn
// example come with it),
// the mean of each reward component, and a breakdown by each of the given
// Example.Meta fields (env.Spec.Breakdown). Error and score-error rows are
// listed as problems and left out of every metric.
func Generic(fields []string) Builder {
	fields = append([]string(nil), fields...)
	return func(rows []artifact.Result, meta *artifact.Metadata, opts Options) (*Report, error) {
		var (
			problems []Problem
			pos      []int
		)
		for i := range rows {
			if p, bad := ExcludedRow(i, &rows[i]); bad {
				problems = append(problems, p)
				continue
			}
			pos = append(pos, i)
		}
		mean, comps := RewardStats(rows, pos)
		solved := solvedRate(rows, pos)
		summary := map[string]any{
			"mean_reward": mean, "solved_rate": solved, "mean_components": comps,
			"scored_rows": len(pos), "problems": len(problems),
		}
		keys := []KeyMetric{{Name: "mean_reward", Value: mean, HigherIsBetter: true}, Key("solved_rate", solved, true)}
		if len(pos) == 0 {
			keys[0].Undefined = true
		}
		var ci map[string]metrics.CI
		if reps := opts.Reps(); reps > 0 && len(pos) > 1 {
			stats := []metrics.Stat{
				func(idx []int) float64 {
					s := 0.0
					for _, k := range idx {
						s += rows[pos[k]].Reward
					}
					return metrics.Div(s, float64(len(idx)))
				},
			}
			names := []string{"mean_reward"}
			if solved != nil {
				names = append(names, "solved_rate")
				stats = append(stats, func(idx []int) float64 {
					s := 0.0
					for _, k := range idx {
						if r := rows[pos[k]].Solved; r != nil && *r {
							s++
						}
					}
					return metrics.Div(s, float64(len(idx)))
				})
			}
			cis := metrics.ClusterBootstrapMulti(ExampleClusters(rows, pos), stats, reps, opts.BootstrapSeed(meta))
			ci = map[string]metrics.CI{}
			for i, n := range names {
				ci[n] = cis[i]
			}
			summary["ci95"] = ci
			summary["bootstrap"] = map[string]any{"reps": reps, "seed": opts.BootstrapSeed(meta), "method": BootstrapMethod}
			AttachCIs(keys, ci)
		}
		breakdown := map[string][]GenericGroup{}
		for _, f := range fields {
			names, groups := GroupBy(rows, pos, f)
			for _, n := range names {
				m, _ := RewardStats(rows, groups[n])
				breakdown[f] = append(breakdown[f], GenericGroup{GroupHead: GroupHead{Name: n, N: len(groups[n])}, MeanReward: m, SolvedRate: solvedRate(rows, groups[n])})
			}
		}
		if len(breakdown) > 0 {
			summary["breakdown"] = breakdown
		}

		var b bytes.Buffer
		counts := map[string]int{"rows": len(rows), "scored": len(pos)}
		for _, p := range problems {
			counts[p.Kind+"_rows"]++
		}
		summary["counts"] = counts
		WriteTitle(&b, "Report", meta, counts, "")
		cell := func(name string, v string) string {
			if c, ok := ci[name]; ok {
				return v + " " + CICell(c, opts.Reps())
			}
			return v
		}
		b.WriteString("## Metrics\n\n")
		b.WriteString(Table([]string{"metric", "value"}, [][]string{
			{"mean reward", cell("mean_reward", F(mean))},
			{"solved", cell("solved_rate", PctOpt(solved))},
		}))
		WriteComponents(&b, comps, mean)
		for _, f := range fields {
			gs := breakdown[f]
			if len(gs) == 0 {
				continue
			}
			fmt.Fprintf(&b, "\n## By %s\n\n", EscapeCell(f))
			var tr [][]string
			for _, g := range gs {
				tr = append(tr, []string{EscapeCell(g.Name), fmt.Sprint(g.N), F(g.MeanReward), PctOpt(g.SolvedRate)})
			}
			b.WriteString(Table([]string{f, "n", "mean reward", "solved"}, tr))
		}
		if len(problems) > 0 {
			fmt.Fprintf(&b, "\n## Problems\n\n%d row(s) failed (model call or scoring) and are left out of every metric.\n", len(problems))
		}
		return &Report{
			Summary:  summary,
			Markdown: b.String(),
			Headline: []Stat{{Name: "rows", Value: fmt.Sprintf("%d (%d scored)", len(rows), len(pos))}, {Name: "mean reward", Value: cell("mean_reward", F(mean))}, {Name: "solved", Value: cell("solved_rate", PctOpt(solved))}},
			Key:      keys,
			Problems: problems,
		}, nil
	}
}

// solvedRate is the share of rows solved among those that say; nil when
// none says.
func solvedRate(rows []artifact.Result, pos []int) *float64 {
	n, s := 0, 0
	for _, p := range pos {
		if r := rows[p].Solved; r != nil {
			n++
			if *r {
				s++
			}
		}
	}
	if n == 0 {
		return nil
	}
	v := float64(s) / float64(n)
	return &v
}
