package configaudit

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/svbench/svbench/envs/configaudit/policypack"
	"github.com/svbench/svbench/report"
)

// PolicyBreakdown is the policy condition's part of the report: results per
// pack and per clause type. The clause types are where copying the
// scanners fails in opposite directions: false positives on exceptions
// (a scanner finding the policy allows), misses on requirements (a rule no
// scanner checks).
type PolicyBreakdown struct {
	Packs       map[string]PackStats       `json:"packs"`
	ClauseTypes map[string]ClauseTypeStats `json:"clause_types"`
}

// PackStats summarises one pack's rows.
type PackStats struct {
	Rows       int      `json:"rows"`
	MeanReward float64  `json:"mean_reward"`
	F1         *float64 `json:"f1_weighted"`
	FixRate    *float64 `json:"patch_fix_rate"`
	Solved     *float64 `json:"solved_rate"`
}

// ClauseTypeStats counts clause-level outcomes of one type: violated
// clauses found or missed, and clauses of the type reported although the
// file complies with them.
type ClauseTypeStats struct {
	Violated       int      `json:"violated"`
	Found          int      `json:"found"`
	Fixed          int      `json:"fixed"`
	FalsePositives int      `json:"false_positives"`
	Recall         *float64 `json:"recall"`
	FixRate        *float64 `json:"fix_rate"`
}

func policyBreakdown(rows []reportRow) *PolicyBreakdown {
	type acc struct {
		n, solved, solvedKnown int
		reward                 float64
		tp, fp, fn             float64
		fixedW, fixableW       float64
	}
	packs := map[string]*acc{}
	types := map[string]*ClauseTypeStats{}
	for _, t := range policypack.ClauseTypes {
		types[string(t)] = &ClauseTypeStats{}
	}
	seen := false
	for _, r := range rows {
		if r.policyPack == "" {
			continue
		}
		seen = true
		a := packs[r.policyPack]
		if a == nil {
			a = &acc{}
			packs[r.policyPack] = a
		}
		a.n++
		a.reward += r.reward
		if r.solved != nil {
			a.solvedKnown++
			if *r.solved {
				a.solved++
			}
		}
		d := ScoreDetection(r.pred, r.oracle, 1)
		a.tp += d.TP
		a.fp += d.FP
		a.fn += d.FN
		if r.patchApplied {
			for _, f := range r.fixable {
				a.fixableW += f.Severity.Weight()
			}
			for _, f := range r.fixed {
				a.fixedW += f.Severity.Weight()
			}
		}
		truth, pred, fixed := set(idList(r.oracle)), set(idList(r.pred)), set(idList(r.fixed))
		for id := range truth {
			st := types[r.clauseTypes[id]]
			if st == nil {
				continue
			}
			st.Violated++
			if pred[id] {
				st.Found++
			}
			if fixed[id] {
				st.Fixed++
			}
		}
		for id := range pred {
			if st := types[r.clauseTypes[id]]; st != nil && !truth[id] {
				st.FalsePositives++
			}
		}
	}
	if !seen {
		return nil
	}
	pb := &PolicyBreakdown{Packs: map[string]PackStats{}, ClauseTypes: map[string]ClauseTypeStats{}}
	for id, a := range packs {
		ps := PackStats{Rows: a.n, MeanReward: a.reward / float64(a.n)}
		if p, r := a.tp/(a.tp+a.fp), a.tp/(a.tp+a.fn); a.tp > 0 {
			f := 2 * p * r / (p + r)
			ps.F1 = &f
		} else if a.fp+a.fn > 0 {
			zero := 0.0
			ps.F1 = &zero
		}
		ps.FixRate = report.Opt(a.fixedW/a.fixableW, a.fixableW > 0)
		ps.Solved = report.Opt(float64(a.solved)/float64(a.solvedKnown), a.solvedKnown > 0)
		pb.Packs[id] = ps
	}
	for t, st := range types {
		st.Recall = report.Opt(float64(st.Found)/float64(st.Violated), st.Violated > 0)
		st.FixRate = report.Opt(float64(st.Fixed)/float64(st.Violated), st.Violated > 0)
		pb.ClauseTypes[t] = *st
	}
	return pb
}

func writePolicySection(b *strings.Builder, pb *PolicyBreakdown) {
	if pb == nil {
		return
	}
	b.WriteString("## Organisation policy (mode=policy)\n\n")
	b.WriteString("Ground truth is each pack's hidden Rego run on the file. Exception clauses make some scanner findings acceptable (copying the scanners shows up as false positives there); requirement clauses are checked by no scanner (copying shows up as misses).\n\n")
	ids := slices.Sorted(maps.Keys(pb.Packs))
	var rows [][]string
	for _, id := range ids {
		p := pb.Packs[id]
		rows = append(rows, []string{id, fmt.Sprint(p.Rows), report.F(p.MeanReward), report.FOpt(p.F1), report.PctOpt(p.FixRate), report.PctOpt(p.Solved)})
	}
	b.WriteString(report.Table([]string{"pack", "rows", "mean reward", "F1 (w)", "fix rate", "solved"}, rows))
	b.WriteString("\n")
	rows = nil
	for _, t := range policypack.ClauseTypes {
		st := pb.ClauseTypes[string(t)]
		rows = append(rows, []string{string(t), fmt.Sprint(st.Violated), fmt.Sprint(st.Found), report.PctOpt(st.Recall), fmt.Sprint(st.FalsePositives), report.PctOpt(st.FixRate)})
	}
	b.WriteString(report.Table([]string{"clause type", "violated", "found", "recall", "false positives", "fixed"}, rows))
	b.WriteString("\n")
}
