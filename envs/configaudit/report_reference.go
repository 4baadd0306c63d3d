package configaudit

import (
	"fmt"
	"strings"

	"github.com/svbench/svbench/metrics"
	"github.com/svbench/svbench/report"
)

// ReferenceEnvironment is E2's name in the reference's summaries.
const ReferenceEnvironment = "sv-env-config-verification"

// ReferenceMetrics is the reference report generator's E2 block, key for
// key (METRICS_E2.md, summary.schema.json), with its conventions: P/R/F1
// are macro-averaged over episodes, and an empty set gives 0.
type ReferenceMetrics struct {
	FindingQuality struct {
		PrecisionWeighted        float64 `json:"precision_weighted"`
		RecallWeighted           float64 `json:"recall_weighted"`
		F1Weighted               float64 `json:"f1_weighted"`
		PrecisionUnweighted      float64 `json:"precision_unweighted"`
		RecallUnweighted         float64 `json:"recall_unweighted"`
		F1Unweighted             float64 `json:"f1_unweighted"`
		F1WeightedPositiveOnly   float64 `json:"f1_weighted_positive_only"`
		F1UnweightedPositiveOnly float64 `json:"f1_unweighted_positive_only"`
	} `json:"finding_quality"`
	Patch struct {
		PatchProvidedRate   float64 `json:"patch_provided_rate"`
		PatchSuccessRate    float64 `json:"patch_success_rate"`
		PatchFixRate        float64 `json:"patch_fix_rate"`
		MeanViolationsFixed float64 `json:"mean_violations_fixed"`
		// NewViolationsIntroduced is a mean per applied patch.
		NewViolationsIntroduced float64 `json:"new_violations_introduced"`
	} `json:"patch"`
	ToolEconomy struct {
		MeanToolCalls    float64                       `json:"mean_tool_calls"`
		MeanToolTimeMS   float64                       `json:"mean_tool_time_ms"`
		CallsPerFinding  float64                       `json:"calls_per_finding"`
		ToolDistribution map[string]ReferenceToolUsage `json:"tool_distribution"`
	} `json:"tool_economy"`
	Episode struct {
		FormatValidRate          float64 `json:"format_valid_rate"`
		MeanTurns                float64 `json:"mean_turns"`
		CleanPassRate            float64 `json:"clean_pass_rate"`
		FalsePositiveRateOnClean float64 `json:"false_positive_rate_on_clean"`
	} `json:"episode"`
}

// ReferenceToolUsage is one tool's line of the reference's distribution.
type ReferenceToolUsage struct {
	Calls  int     `json:"calls"`
	TimeMS float64 `json:"time_ms"`
}

// referenceScope restricts an episode to the ids the reference scores: when
// ids are tool-style, both sides keep only the primary tool's (kube-linter
// for Kubernetes; trivy for Terraform where the reference ran semgrep; the
// oracle's own tool when it names one svbench does not run), exactly as the
// reference rubric filters them.
func referenceScope(r reportRow) (pred, oracle []Violation) {
	prim := primaryTool(r.fixtureType)
	if t := foreignTool(r.oracle); t != "" {
		prim = t
	}
	return filterPrefix(r.pred, prim), filterPrefix(r.oracle, prim)
}

// referenceToolName is the reference's name for a tool-call function.
func referenceToolName(fn string) string {
	switch fn {
	case FnKubeLinter:
		return "kube-linter"
	case FnOPA:
		return "opa"
	}
	return strings.TrimPrefix(fn, "run_")
}

// referenceMetrics computes the reference generator's E2 block and its
// severity breakdown.
func referenceMetrics(rows []reportRow) (ReferenceMetrics, map[string]SeverityCounts) {
	var (
		m                                ReferenceMetrics
		pw, rw, fw, pu, ru, fu           float64
		posW, posU                       float64
		nPos, provided, applied          int
		fixedW, oracleW                  float64
		fixedCount, newCount             int
		calls, findings, fmtValid, turns int
		toolMS                           float64
		clean, cleanPass, cleanFP        int
		dist                             = map[string]ReferenceToolUsage{"opa": {}, "kube-linter": {}, "semgrep": {}}
		sev                              = map[string]SeverityCounts{"low": {}, "med": {}, "high": {}}
	)
	for _, r := range rows {
		pred, oracle := referenceScope(r)
		w := metrics.WeightedSetPRF(weighted(pred), weighted(oracle))
		u := metrics.SetPRF(idList(pred), idList(oracle))
		pw, rw, fw = pw+w.Precision, rw+w.Recall, fw+w.F1
		pu, ru, fu = pu+u.Precision, ru+u.Recall, fu+u.F1
		switch {
		case len(oracle) > 0:
			posW, posU = posW+w.F1, posU+u.F1
			nPos++
		case len(pred) == 0:
			clean++
			cleanPass++
		default:
			clean++
			cleanFP++
		}
		predIDs, _ := lastSeverities(pred)
		oracleIDs, oracleSev := lastSeverities(oracle)
		fixed := set(idList(r.fixed))
		for _, v := range oracle {
			st := sev[string(v.Severity)]
			st.Total++
			if r.patchApplied && fixed[v.ID] {
				st.Fixed++
			}
			sev[string(v.Severity)] = st
		}
		for _, id := range predIDs {
			if s, ok := oracleSev[id]; ok {
				st := sev[string(s)]
				st.Found++
				sev[string(s)] = st
			}
		}
		if r.patchProvided {
			provided++
			if r.patchApplied {
				applied++
				for _, id := range oracleIDs {
					if fixed[id] {
						fixedCount++
					}
				}
				introIDs, _ := lastSeverities(r.introduced)
				newCount += len(introIDs)
				for _, v := range oracle {
					oracleW += v.Severity.Weight()
					if fixed[v.ID] {
						fixedW += v.Severity.Weight()
					}
				}
			}
		}
		for _, tc := range r.calls {
			calls++
			toolMS += tc.DurationMS
			name := referenceToolName(tc.Name)
			d := dist[name]
			d.Calls++
			d.TimeMS += tc.DurationMS
			dist[name] = d
		}
		findings += len(pred)
		if r.validJSON {
			fmtValid++
		}
		turns += max(r.turns, 1)
	}
	n := float64(len(rows))
	fq := &m.FindingQuality
	fq.PrecisionWeighted, fq.RecallWeighted, fq.F1Weighted = metrics.Div(pw, n), metrics.Div(rw, n), metrics.Div(fw, n)
	fq.PrecisionUnweighted, fq.RecallUnweighted, fq.F1Unweighted = metrics.Div(pu, n), metrics.Div(ru, n), metrics.Div(fu, n)
	fq.F1WeightedPositiveOnly, fq.F1UnweightedPositiveOnly = metrics.Div(posW, float64(nPos)), metrics.Div(posU, float64(nPos))
	m.Patch.PatchProvidedRate = metrics.Div(float64(provided), n)
	m.Patch.PatchSuccessRate = metrics.Div(float64(applied), float64(provided))
	m.Patch.PatchFixRate = metrics.Div(fixedW, oracleW)
	m.Patch.MeanViolationsFixed = metrics.Div(float64(fixedCount), float64(applied))
	m.Patch.NewViolationsIntroduced = metrics.Div(float64(newCount), float64(applied))
	m.ToolEconomy.MeanToolCalls = metrics.Div(float64(calls), n)
	m.ToolEconomy.MeanToolTimeMS = metrics.Div(toolMS, n)
	m.ToolEconomy.CallsPerFinding = metrics.Div(float64(calls), float64(findings))
	m.ToolEconomy.ToolDistribution = dist
	m.Episode.FormatValidRate = metrics.Div(float64(fmtValid), n)
	m.Episode.MeanTurns = metrics.Div(float64(turns), n)
	m.Episode.CleanPassRate = metrics.Div(float64(cleanPass), float64(clean))
	m.Episode.FalsePositiveRateOnClean = metrics.Div(float64(cleanFP), float64(clean))
	return m, sev
}

// writeReferenceSection shows the reference generator's figures and says
// where svbench's own differ on purpose.
func writeReferenceSection(b *strings.Builder, ref *report.ReferenceSummary, rm ReferenceMetrics) {
	b.WriteString("## Reference-comparable summary\n\n")
	if ref == nil {
		b.WriteString("No scored rows, so no `reference_summary` (the reference refuses to report an empty run).\n")
		return
	}
	fmt.Fprintf(b, "summary.json `%s` is the reference report generator's summary (%s, metrics version %s, %d episodes), computed with its definitions:\n\n",
		report.ReferenceSummaryKey, ref.Environment, ref.Version, ref.NExamples)
	fq, p, te, ep := rm.FindingQuality, rm.Patch, rm.ToolEconomy, rm.Episode
	b.WriteString(report.Table([]string{"metric", "weighted", "unweighted"}, [][]string{
		{"precision (macro over episodes)", report.F(fq.PrecisionWeighted), report.F(fq.PrecisionUnweighted)},
		{"recall (macro over episodes)", report.F(fq.RecallWeighted), report.F(fq.RecallUnweighted)},
		{"F1 (macro over episodes)", report.F(fq.F1Weighted), report.F(fq.F1Unweighted)},
		{"F1, episodes with a non-empty oracle", report.F(fq.F1WeightedPositiveOnly), report.F(fq.F1UnweightedPositiveOnly)},
	}))
	b.WriteString("\n")
	b.WriteString(report.Table([]string{"metric", "value"}, [][]string{
		{"patch provided / success / fix rate", report.F(p.PatchProvidedRate) + " / " + report.F(p.PatchSuccessRate) + " / " + report.F(p.PatchFixRate)},
		{"mean violations fixed / new violations, per applied patch", report.F(p.MeanViolationsFixed) + " / " + report.F(p.NewViolationsIntroduced)},
		{"mean tool calls / tool ms / calls per predicted finding", report.F(te.MeanToolCalls) + " / " + report.F(te.MeanToolTimeMS) + " / " + report.F(te.CallsPerFinding)},
		{"format valid (JSON) / mean turns", report.F(ep.FormatValidRate) + " / " + report.F(ep.MeanTurns)},
		{"clean pass / false positives on clean", report.F(ep.CleanPassRate) + " / " + report.F(ep.FalsePositiveRateOnClean)},
	}))
	b.WriteString(`
Where svbench's own figures above differ on purpose:
- Detection is micro-averaged (pooled over all findings) in svbench's block and macro-averaged over episodes in the
  reference's, where a clean file answered with an empty list scores P = R = F1 = 0.
- The reference block scores only the primary tool's ids (kube-linter; trivy for Terraform, where the reference ran
  semgrep), as the reference does; svbench's scores every id of the run's oracle.
- Patch fix rate: the reference divides by all oracle weight of episodes with an applied patch, svbench by the weight of
  findings a verifier here can re-check. Violations fixed and introduced are per applied patch in the reference and per
  row in svbench; "introduced" means reported after the patch but not before it.
- Calls per finding: the reference divides tool calls by predicted violations, svbench by findings the tools returned.
- Format valid: the reference counts valid JSON, svbench schema-valid answers. The reference counts a 0-turn episode as 1 turn.
- Undefined values (nothing predicted, no clean file, no patch) are 0 in the reference block and n/a in svbench's.
- API-error and score-error rows are left out of both (the reference would count an API error as an invalid episode).
`)
}
