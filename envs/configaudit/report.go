package configaudit

import (
	"fmt"
	"strings"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/metrics"
	"github.com/svbench/svbench/report"
	"github.com/svbench/svbench/verify"
)

// ReportPRF is a precision/recall/F1 triple; nil marks a value with nothing
// to measure (precision when nothing was predicted, recall with an empty
// oracle, F1 when both hold).
type ReportPRF struct {
	Precision *float64 `json:"precision"`
	Recall    *float64 `json:"recall"`
	F1        *float64 `json:"f1"`
}

func reportPRF(p metrics.PRF) ReportPRF {
	return ReportPRF{
		Precision: report.Opt(p.Precision, p.PrecisionDefined()),
		Recall:    report.Opt(p.Recall, p.RecallDefined()),
		F1:        report.Opt(p.F1, p.F1Defined()),
	}
}

// ToolStats is one tool's share of the calls.
type ToolStats struct {
	Calls    int     `json:"calls"`
	Errors   int     `json:"errors"`
	Findings int     `json:"findings"`
	MeanMS   float64 `json:"mean_ms"`
	TotalMS  float64 `json:"total_ms"`
}

// SeverityCounts is one row of the per-severity table: oracle findings,
// how many the answer listed, how many the patch fixed.
type SeverityCounts struct {
	Total int `json:"total"`
	Found int `json:"found"`
	Fixed int `json:"fixed"`
}

// ReportMetrics is svbench's own E2 metrics block (summary.json "metrics").
// Detection scores are micro-averaged (pooled over all findings); nil
// values are undefined on the run and written as null. README.md compares
// each with the reference's.
type ReportMetrics struct {
	Weighted            ReportPRF                 `json:"weighted"`
	Unweighted          ReportPRF                 `json:"unweighted"`
	MeanF1Weighted      *float64                  `json:"mean_f1_weighted"`
	PositiveOnlyF1      *float64                  `json:"positive_only_f1"`
	PatchProvidedRate   *float64                  `json:"patch_provided_rate"`
	PatchSuccessRate    *float64                  `json:"patch_success_rate"`
	PatchFixRate        *float64                  `json:"patch_fix_rate"`
	MeanViolationsFixed *float64                  `json:"mean_violations_fixed"`
	NewViolations       int                       `json:"new_violations_introduced"`
	MeanNewViolations   *float64                  `json:"mean_new_violations_introduced"`
	MeanToolCalls       *float64                  `json:"mean_tool_calls"`
	MeanToolTimeMS      *float64                  `json:"mean_tool_time_ms"`
	CallsPerFinding     *float64                  `json:"calls_per_finding"`
	Tools               map[string]ToolStats      `json:"tools"`
	FormatValidRate     *float64                  `json:"format_valid_rate"`
	MeanTurns           *float64                  `json:"mean_turns"`
	CleanRows           int                       `json:"clean_rows"`
	CleanPassRate       *float64                  `json:"clean_pass_rate"`
	FPRateOnClean       *float64                  `json:"false_positive_rate_on_clean"`
	Severity            map[string]SeverityCounts `json:"severity"`
	ByFixture           map[string]ReportPRF      `json:"by_fixture_type"`
}

// reportRow is one scored row as the report reads it from Score.Parsed,
// the tool-call records and the turn count.
type reportRow struct {
	pred, oracle, fixed, fixable, introduced []Violation
	fixtureType                              string
	validJSON, formatValid                   bool
	patchProvided, patchApplied              bool
	turns                                    int
	calls                                    []env.ToolCallRecord
	reward                                   float64
	// The policy condition: the row's pack and the type of each clause it
	// mentions (oracle or predicted).
	policyPack  string
	clauseTypes map[string]string
	solved      *bool
}

// readViolations reads a Parsed list of {id, severity} objects; entries
// without an id are skipped.
func readViolations(v any) []Violation {
	list, _ := v.([]any)
	out := make([]Violation, 0, len(list))
	for _, it := range list {
		obj, ok := it.(map[string]any)
		if !ok {
			continue
		}
		id, _ := obj["id"].(string)
		sev, _ := obj["severity"].(string)
		if id != "" {
			out = append(out, Violation{ID: id, Severity: normSeverity(sev)})
		}
	}
	return out
}

// lastSeverities lists distinct ids in first-seen order with the last
// severity given to each, as a Python dict built from the list keeps them.
func lastSeverities(vs []Violation) ([]string, map[string]verify.Severity) {
	sev := make(map[string]verify.Severity, len(vs))
	for _, v := range vs {
		sev[v.ID] = v.Severity
	}
	return orderedIDs(vs), sev
}

func idList(vs []Violation) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.ID
	}
	return out
}

func parsedBool(v any) bool { b, _ := v.(bool); return b }

// runRows is a run's rows sorted into scored rows and problems.
type runRows struct {
	scored   []reportRow
	pos      []int // row position of each scored row
	problems []report.Problem

	errRows, scoreErrRows, unparsed int
}

// readRows sorts rows into scored rows and problems. API-error and
// score-error rows are excluded from every metric; a row without a JSON
// answer is scored (as predicting nothing) and listed as unparsed.
func readRows(rows []artifact.Result) (*runRows, error) {
	rr := &runRows{}
	for i := range rows {
		r := &rows[i]
		if prob, excluded := report.ExcludedRow(i, r); excluded {
			if prob.Kind == report.ProblemError {
				rr.errRows++
			} else {
				rr.scoreErrRows++
			}
			rr.problems = append(rr.problems, prob)
			continue
		}
		if r.Parsed == nil || r.Parsed["oracle"] == nil {
			return nil, fmt.Errorf("row %d (index %d, rollout %d): parsed.oracle is missing; score the run with the config-verification environment", i+1, r.Index, r.Rollout)
		}
		p := r.Parsed
		if !parsedBool(p["valid_json"]) {
			rr.unparsed++
			rr.problems = append(rr.problems, report.Problem{Row: i, Index: r.Index, Rollout: r.Rollout, Kind: report.ProblemUnparsed, Detail: "no JSON object with a violations list"})
		}
		ft, _ := p["fixture_type"].(string)
		rr.scored = append(rr.scored, reportRow{
			pred: readViolations(p["predicted"]), oracle: readViolations(p["oracle"]),
			fixed: readViolations(p["fixed"]), fixable: readViolations(p["fixable"]), introduced: readViolations(p["introduced"]),
			fixtureType: ft, validJSON: parsedBool(p["valid_json"]), formatValid: parsedBool(p["format_valid"]),
			patchProvided: parsedBool(p["patch_provided"]), patchApplied: parsedBool(p["patch_applied"]),
			turns: r.Turns, calls: r.ToolCalls, reward: r.Reward, solved: r.Solved,
		})
		if pp, _ := p["policy_pack"].(string); pp != "" {
			last := &rr.scored[len(rr.scored)-1]
			last.policyPack = pp
			last.clauseTypes = map[string]string{}
			ct, _ := p["clause_types"].(map[string]any)
			for k, v := range ct {
				if s, ok := v.(string); ok {
					last.clauseTypes[k] = s
				}
			}
		}
		rr.pos = append(rr.pos, i)
	}
	return rr, nil
}

// obs is what the bootstrap resamples: one row's tallies.
type obs struct {
	w                metrics.PRF
	fixedW, fixableW float64
	reward           float64
}

// ownMetrics computes svbench's block and the per-row tallies behind it.
func ownMetrics(rows []reportRow) (ReportMetrics, []obs) {
	var (
		pooledW, pooledU                  metrics.PRF
		byFixture                         = map[string]metrics.PRF{}
		sumF1, sumPosF1                   float64
		nPos, provided, applied, fmtValid int
		fixedW, fixableW, toolMS          float64
		fixedCount, introduced            int
		calls, findings, turns            int
		cleanRows, cleanPass              int
		tools                             = map[string]ToolStats{}
		sev                               = map[string]SeverityCounts{"low": {}, "med": {}, "high": {}}
		out                               = make([]obs, 0, len(rows))
	)
	for _, r := range rows {
		w := metrics.WeightedSetPRF(weighted(r.pred), weighted(r.oracle))
		u := metrics.SetPRF(idList(r.pred), idList(r.oracle))
		pooledW, pooledU = pooledW.Add(w), pooledU.Add(u)
		byFixture[r.fixtureType] = byFixture[r.fixtureType].Add(w)
		o := obs{w: w, reward: r.reward}
		sumF1 += w.F1

		predIDs, _ := lastSeverities(r.pred)
		oracleIDs, oracleSev := lastSeverities(r.oracle)
		inPred := set(predIDs)
		fixedIDs, fixedSev := lastSeverities(r.fixed)
		for _, id := range oracleIDs {
			st := sev[string(oracleSev[id])]
			st.Total++
			if inPred[id] {
				st.Found++
			}
			if _, ok := fixedSev[id]; ok {
				st.Fixed++
			}
			sev[string(oracleSev[id])] = st
		}
		if len(oracleIDs) > 0 {
			sumPosF1 += w.F1
			nPos++
		} else {
			cleanRows++
			if len(predIDs) == 0 {
				cleanPass++
			}
		}
		if r.patchProvided {
			provided++
			if r.patchApplied {
				applied++
				fixableIDs, fixableSev := lastSeverities(r.fixable)
				for _, id := range fixableIDs {
					o.fixableW += fixableSev[id].Weight()
				}
				for _, id := range fixedIDs {
					o.fixedW += fixedSev[id].Weight()
				}
				fixableW += o.fixableW
				fixedW += o.fixedW
			}
		}
		introIDs, _ := lastSeverities(r.introduced)
		fixedCount += len(fixedIDs)
		introduced += len(introIDs)
		if r.formatValid {
			fmtValid++
		}
		turns += r.turns
		for _, tc := range r.calls {
			calls++
			n := 0
			if tc.Findings != nil {
				n = *tc.Findings
			}
			findings += n
			toolMS += tc.DurationMS
			st := tools[tc.Name]
			st.Calls++
			st.Findings += n
			st.TotalMS += tc.DurationMS
			if tc.Error != "" && n == 0 {
				st.Errors++
			}
			tools[tc.Name] = st
		}
		out = append(out, o)
	}
	n := float64(len(rows))
	for k, st := range tools {
		st.MeanMS = metrics.Div(st.TotalMS, float64(st.Calls))
		tools[k] = st
	}
	perRow := func(x float64) *float64 { return report.Opt(metrics.Div(x, n), n > 0) }
	m := ReportMetrics{
		Weighted:            reportPRF(pooledW),
		Unweighted:          reportPRF(pooledU),
		MeanF1Weighted:      perRow(sumF1),
		PositiveOnlyF1:      report.Opt(metrics.Div(sumPosF1, float64(nPos)), nPos > 0),
		PatchProvidedRate:   perRow(float64(provided)),
		PatchSuccessRate:    report.Opt(metrics.Div(float64(applied), float64(provided)), provided > 0),
		PatchFixRate:        report.Opt(metrics.Div(fixedW, fixableW), fixableW > 0),
		MeanViolationsFixed: perRow(float64(fixedCount)),
		NewViolations:       introduced,
		MeanNewViolations:   perRow(float64(introduced)),
		MeanToolCalls:       perRow(float64(calls)),
		MeanToolTimeMS:      perRow(toolMS),
		CallsPerFinding:     report.Opt(metrics.Div(float64(calls), float64(findings)), findings > 0),
		Tools:               tools,
		FormatValidRate:     perRow(float64(fmtValid)),
		MeanTurns:           perRow(float64(turns)),
		CleanRows:           cleanRows,
		CleanPassRate:       report.Opt(metrics.Div(float64(cleanPass), float64(cleanRows)), cleanRows > 0),
		FPRateOnClean:       report.Opt(metrics.Div(float64(cleanRows-cleanPass), float64(cleanRows)), cleanRows > 0),
		Severity:            sev,
		ByFixture:           map[string]ReportPRF{},
	}
	for ft, p := range byFixture {
		m.ByFixture[ft] = reportPRF(p)
	}
	return m, out
}

func set(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// BuildReport is the config-verification (E2) report.Builder. Everything
// comes from results rows alone: Score.Parsed (predicted, oracle, fixed,
// fixable, introduced, patch flags), the tool-call records and the turn
// counts.
func BuildReport(rows []artifact.Result, meta *artifact.Metadata, opts report.Options) (*report.Report, error) {
	rr, err := readRows(rows)
	if err != nil {
		return nil, err
	}
	scored := rr.scored
	m, obs := ownMetrics(scored)
	meanReward, comps := report.RewardStats(rows, rr.pos)
	hasRows := len(scored) > 0
	ci := bootstrap(obs, report.ExampleClusters(rows, rr.pos), meta, opts)
	for name, v := range map[string]*float64{"f1_weighted": m.Weighted.F1, "patch_fix_rate": m.PatchFixRate, "mean_reward": report.Opt(meanReward, hasRows)} {
		if v == nil {
			delete(ci, name)
		}
	}
	nPos := 0
	for _, r := range scored {
		if len(r.oracle) > 0 {
			nPos++
		}
	}
	summary := map[string]any{
		"metrics":     m,
		"mean_reward": report.Opt(meanReward, hasRows),
		"components":  comps,
		"ci95":        ci,
		"bootstrap":   map[string]any{"reps": opts.Reps(), "seed": opts.BootstrapSeed(meta), "method": report.BootstrapMethod},
		"counts": map[string]int{
			"scored": len(scored), "errors": rr.errRows, "score_errors": rr.scoreErrRows, "unparsed": rr.unparsed,
			"positive": nPos, "clean": m.CleanRows,
		},
	}
	pb := policyBreakdown(scored)
	if pb != nil {
		summary["policy"] = pb
	}
	var ref *report.ReferenceSummary
	refBlock, refSev := referenceMetrics(scored)
	if hasRows && pb == nil {
		ref = report.NewReferenceSummary(ReferenceEnvironment, meta, rows, len(scored), refBlock)
		ref.SeverityBreakdown = refSev
		summary[report.ReferenceSummaryKey] = ref
	}
	key := []report.KeyMetric{
		report.Key("f1_weighted", m.Weighted.F1, true),
		report.Key("patch_fix_rate", m.PatchFixRate, true),
		report.Key("false_positive_rate_on_clean", m.FPRateOnClean, false),
		report.Key("format_valid_rate", m.FormatValidRate, true),
		report.Key("mean_tool_calls", m.MeanToolCalls, false),
		report.Key("mean_reward", report.Opt(meanReward, hasRows), true),
	}
	report.AttachCIs(key, ci)
	charts := reportCharts(m, len(scored))
	withCI := func(name string, v *float64) string {
		if v == nil {
			return "n/a"
		}
		return report.FCI(ci[name], opts.Reps())
	}
	headline := []report.Stat{
		{Name: "rows", Value: fmt.Sprintf("%d scored, %d API errors, %d score errors, %d unparsed", len(scored), rr.errRows, rr.scoreErrRows, rr.unparsed)},
		{Name: "F1 weighted", Value: withCI("f1_weighted", m.Weighted.F1)},
		{Name: "F1 unweighted", Value: report.FOpt(m.Unweighted.F1)},
		{Name: "positive-only F1", Value: report.FOpt(m.PositiveOnlyF1)},
		{Name: "patch provided / applied / fix rate", Value: report.PctOpt(m.PatchProvidedRate) + " / " + report.PctOpt(m.PatchSuccessRate) + " / " + report.PctOpt(m.PatchFixRate)},
		{Name: "new violations introduced", Value: fmt.Sprint(m.NewViolations)},
		{Name: "clean pass / FP on clean", Value: report.PctOpt(m.CleanPassRate) + " / " + report.PctOpt(m.FPRateOnClean)},
		{Name: "tool calls / episode", Value: report.FOpt(m.MeanToolCalls)},
		{Name: "patch fix rate", Value: withCI("patch_fix_rate", m.PatchFixRate)},
		{Name: "mean reward", Value: withCI("mean_reward", report.Opt(meanReward, hasRows))},
	}
	r := &report.Report{Summary: summary, Headline: headline, Key: key, Charts: charts, Problems: rr.problems}
	r.Markdown = markdown(meta, m, ref, refBlock, meanReward, comps, charts, len(scored), rr.unparsed, ci, opts.Reps())
	if pb != nil {
		var b strings.Builder
		writePolicySection(&b, pb)
		r.Markdown = strings.Replace(r.Markdown, "## Clean files\n", b.String()+"## Clean files\n", 1)
		r.Markdown = strings.Replace(r.Markdown, "No scored rows, so no `reference_summary` (the reference refuses to report an empty run).\n",
			"The policy condition has no reference counterpart (the reference has no policy packs), so there is no `reference_summary`.\n", 1)
	}
	return r, nil
}

// bootstrap gives percentile CIs for the micro weighted F1, the patch fix
// rate and the mean reward, resampling examples (clusters of obs indices:
// all rollouts of a drawn example).
func bootstrap(obs []obs, clusters [][]int, meta *artifact.Metadata, opts report.Options) map[string]metrics.CI {
	f1 := func(idx []int) float64 {
		var p metrics.PRF
		for _, k := range idx {
			p = p.Add(obs[k].w)
		}
		return p.F1
	}
	fix := func(idx []int) float64 {
		var fixed, fixable float64
		for _, k := range idx {
			fixed, fixable = fixed+obs[k].fixedW, fixable+obs[k].fixableW
		}
		return metrics.Div(fixed, fixable)
	}
	reward := func(idx []int) float64 {
		var sum float64
		for _, k := range idx {
			sum += obs[k].reward
		}
		return metrics.Div(sum, float64(len(idx)))
	}
	cis := metrics.ClusterBootstrapMulti(clusters, []metrics.Stat{f1, fix, reward}, opts.Reps(), opts.BootstrapSeed(meta))
	return map[string]metrics.CI{"f1_weighted": cis[0], "patch_fix_rate": cis[1], "mean_reward": cis[2]}
}
