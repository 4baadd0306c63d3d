package configaudit

import (
	"context"
	"errors"
	"fmt"
	"github.com/svbench/svbench/base/clip"
	"math"
	"slices"
	"strings"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/verify"
	"github.com/svbench/svbench/verify/nesting"
	"github.com/svbench/svbench/verify/yamlsafe"
)

// Rubric names.
const (
	RubricDefault   = "default"
	RubricReference = "reference"
)

// Component weights (both rubrics share names and weights).
const (
	WeightAuditing = 1.0
	WeightFormat   = 0.05
	WeightToolObs  = 0.2
)

// Strict-rubric constants; README.md explains each.
const (
	strictFPFactor      = 2.0 // an FP costs twice its weight in precision
	penaltyDestructive  = 0.5 // patch breaks parsing or drops an object/container/image/resource
	penaltyNotApplied   = 0.1 // patch given but does not apply
	penaltyIntroducedW  = 0.5 // per unit of severity weight of new findings
	penaltyIntroducedMx = 1.0
	sizeAllowanceBase   = 4    // changed lines every patch may use
	sizeAllowancePerFix = 8    // extra changed lines per fixed violation id
	penaltyPerLine      = 0.01 // per changed line beyond the allowance
	penaltySizeMax      = 0.3
	penaltySuppression  = 0.25 // patch adds a scanner suppression (removed before re-verification)
)

// evaluation is everything one scoring pass computes; Parsed is built from
// it so the report needs only results rows.
type evaluation struct {
	out          Output
	oracle       []Violation
	pred         []Violation
	det          Detection
	detUnw       Detection
	patchGiven   bool
	patchApplied bool
	patchKind    string
	patchError   string
	structOK     bool
	structError  string
	fixed        []Violation
	introduced   []Violation
	checkable    []Violation
	changed      int
	// suppressions lists the scanner suppressions the patch added; they
	// are removed before re-verification (suppress.go).
	suppressions []string
	// capability lists the privilege growth and surviving capabilities
	// the patch leaves (capability.go).
	capability []string
	// rewordings lists what the patched file was canonicalised to before
	// re-verification (canonical.go): what it says, judged by what it means.
	rewordings []string
	fixScore   float64
	penalty    float64
	auditing   float64
	toolObs    float64
	patchDelta float64 // reference: -1 when no patch was scored
	scanError  string
	// unverifiable says why the reference reward cannot be recomputed here.
	unverifiable string
}

// Score evaluates a rollout.
func (e *Env) Score(ctx context.Context, ex env.Example, r *env.Rollout, rubric string) (env.Score, error) {
	if rubric == "" {
		rubric = RubricDefault
	}
	if rubric != RubricDefault && rubric != RubricReference {
		return env.Score{}, fmt.Errorf("unknown rubric %q for %s (known: %s, %s)", rubric, ID, RubricDefault, RubricReference)
	}
	fx, err := e.payload(ex)
	if err != nil {
		return env.Score{}, err
	}
	if fx.Pack != nil && rubric != RubricDefault {
		return env.Score{}, fmt.Errorf("the %s rubric has no policy condition (the reference has no policy packs); use the default rubric", rubric)
	}
	v, err := e.verifiers(ctx)
	if err != nil {
		return env.Score{}, fmt.Errorf("config-verification: starting verifiers: %w", err)
	}
	var msgs []env.Message
	if r != nil {
		msgs = r.Completion
	}
	text := env.LastAssistantText(msgs)
	var ev evaluation
	switch {
	case fx.Pack != nil:
		if ev, err = evaluatePolicy(ctx, fx, text); err != nil {
			return env.Score{}, fmt.Errorf("%s: %w", ID, err)
		}
	case rubric == RubricReference:
		ev = evaluateReference(ctx, v, fx, text, msgs)
	default:
		ev = evaluateStrict(ctx, v, fx, text, msgs)
	}
	if ev.unverifiable != "" {
		return env.Score{}, fmt.Errorf("%s: %w: %s", ID, env.ErrUnverifiable, ev.unverifiable)
	}
	s := rubricOf(rubric, fx.Pack != nil).Evaluate(ex, &ev, ev.view(fx))
	s.Solved = ev.solved()
	// The judge joins as in E1 and E4: alone under llm_judge, at
	// judge_weight beside the executable components under hybrid.
	return e.judging.Apply(s, func() (float64, error) { return e.judge(ctx, fx, text) })
}

// rubricOf is the named rubric's reward functions; both rubrics share
// names, weights and ranges (config_auditing is clamped to [0, 2] by
// either evaluation). The policy condition has no tool_observation:
// scanner ids in tool results say nothing about a policy's clauses.
func rubricOf(name string, policy bool) env.Rubric[*evaluation] {
	rewards := []env.Reward[*evaluation]{
		{Name: "config_auditing", Weight: WeightAuditing, Min: 0, Max: 2, Fn: func(_ env.Example, ev *evaluation) float64 { return ev.auditing }},
		{Name: "format", Weight: WeightFormat, Min: 0, Max: 1, Fn: func(_ env.Example, ev *evaluation) float64 { return b2f(ev.out.SchemaValid) }},
	}
	if !policy {
		rewards = append(rewards, env.Reward[*evaluation]{Name: "tool_observation", Weight: WeightToolObs, Min: 0, Max: 1, Fn: func(_ env.Example, ev *evaluation) float64 { return ev.toolObs }})
	}
	return env.Rubric[*evaluation]{Name: name, Rewards: rewards}
}

// DescribeRubric describes the named rubric ("" = default) as this instance
// scores with it: mode=policy drops tool_observation (and has no reference
// rubric), the reward source may add the judge (env.RubricDescriber). An
// instance in another mode still scores a row naming a policy pack (svbench
// score, the reward server) with the policy condition's components.
func (e *Env) DescribeRubric(rubric string) (env.RubricInfo, error) {
	switch rubric {
	case "":
		rubric = RubricDefault
	case RubricDefault, RubricReference:
	default:
		return env.RubricInfo{}, env.UnknownRubric(ID, rubric, RubricDefault, RubricReference)
	}
	policy := e.mode == ModePolicy
	if policy && rubric != RubricDefault {
		return env.RubricInfo{}, fmt.Errorf("the %s rubric has no policy condition (the reference has no policy packs); use the default rubric", rubric)
	}
	return e.judging.Describe(rubricOf(rubric, policy).Info()), nil
}

// SolvedWhenPolicy is the same definition in the policy condition.
const SolvedWhenPolicy = "the answer lists exactly the policy clauses the pack's Rego reports on the file and a patch after which the Rego reports none; the patch applies, keeps every object/container/image/resource, violates no new clause and adds no scanner suppression"

// SolvedWhen is E2's definition of a solved rollout (pass@k counts it).
const SolvedWhen = "the answer lists exactly the ground-truth findings (none missed, no false positive) and, when any of them can be re-verified here, a patch that fixes all of them; any patch given applies, keeps every object/container/image/resource, introduces no new finding and adds no scanner suppression"

func (ev *evaluation) solved() bool {
	if !ev.out.JSON {
		return false
	}
	want := map[string]bool{}
	for _, o := range ev.oracle {
		want[o.ID] = true
	}
	got := map[string]bool{}
	for _, p := range ev.pred {
		if !want[p.ID] {
			return false
		}
		got[p.ID] = true
	}
	if len(got) != len(want) {
		return false
	}
	// Whatever the file, a patch given must be one a reviewer would merge.
	patchOK := ev.patchApplied && ev.structOK && len(ev.introduced) == 0 && len(ev.suppressions) == 0 && len(ev.capability) == 0
	if ev.patchGiven && !patchOK {
		return false
	}
	if len(ev.checkable) == 0 {
		return true
	}
	if !patchOK {
		return false
	}
	fixed := map[string]bool{}
	for _, f := range ev.fixed {
		fixed[f.ID] = true
	}
	for _, c := range ev.checkable {
		if !fixed[c.ID] {
			return false
		}
	}
	return true
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// filterPrefix keeps tool-style ids of one tool (the reference's
// primary-tool filter); ids without a tool prefix are kept as they are.
func filterPrefix(vs []Violation, tool string) []Violation {
	tooly := false
	for _, v := range vs {
		if strings.Contains(v.ID, "/") {
			tooly = true
			break
		}
	}
	if !tooly {
		return vs
	}
	var out []Violation
	for _, v := range vs {
		if strings.HasPrefix(v.ID, tool+"/") {
			out = append(out, v)
		}
	}
	return out
}

// foreignTool returns the tool prefix of the first oracle id that names a
// tool svbench does not run, or "".
func foreignTool(oracle []Violation) string {
	for _, o := range oracle {
		if tool, _, ok := strings.Cut(o.ID, "/"); ok && !runsTool(tool) {
			return tool
		}
	}
	return ""
}

func runsTool(tool string) bool {
	switch tool {
	case ToolKubeLinter, ToolTrivy, ToolOPA:
		return true
	}
	return false
}

// evaluateReference reproduces the reference rubric: oracle = the row's
// labels, both sides filtered to the primary tool, patch delta from a
// re-scan by the primary tool, final = F1 + delta + format bonus/penalty,
// then max(0, ·) and 0 when invalid or empty.
func evaluateReference(ctx context.Context, v *verifiers, fx *fixture, text string, msgs []env.Message) evaluation {
	ev := evaluation{out: ParseOutput(text), patchDelta: -1}
	prim := primaryTool(fx.Type)
	if t := foreignTool(fx.Oracle); t != "" {
		// The reference labelled this row with a tool svbench does not
		// run (semgrep for Terraform): its ids still score detection.
		prim = t
	}
	ev.oracle = filterPrefix(fx.Oracle, prim)
	ev.pred = filterPrefix(ev.out.Violations, prim)
	ev.det = ScoreDetection(ev.pred, ev.oracle, 1)
	ev.detUnw = unweighted(ev.pred, ev.oracle)
	ev.patchGiven = strings.TrimSpace(ev.out.Patch) != ""
	if ev.patchGiven && ev.out.JSON {
		patched, kind, err := applyFixPatch(fx, ev.out.Patch)
		ev.patchKind = kind
		var tooDeep error
		if err == nil {
			tooDeep = checkNesting(fx.Type, fx.Path, patched)
		}
		switch {
		case err != nil:
			ev.patchError = err.Error()
		case tooDeep != nil:
			// The reference pays a patch whose file the primary tool cannot
			// read (no findings: full patch_delta); a file over the nesting
			// bound is not handed to any parser and earns no patch credit.
			ev.patchApplied = true
			ev.structError = "patched file is over the nesting bound: " + tooDeep.Error()
		case !runsTool(prim):
			ev.unverifiable = fmt.Sprintf("the oracle holds %s ids and svbench does not run %s, so the patched file cannot be re-scanned for the reference's patch_delta (detection F1 alone is %.4f)", prim, prim, ev.det.F1)
		default:
			ev.patchApplied = true
			r := v.scan(ctx, prim, fx.Type, verify.File{Path: fx.Path, Content: patched}, contentHash(patched))
			if r.err != nil {
				ev.scanError = r.err.Error()
			}
			post := findingViolations(r.findings)
			ev.patchDelta = PatchDelta(ev.oracle, post)
			ev.fixed = goneIDs(ev.oracle, post)
			orig := v.scan(ctx, prim, fx.Type, verify.File{Path: fx.Path, Content: fx.Content}, fx.Hash)
			ev.introduced = newIDs(findingViolations(orig.findings), post)
			ev.structOK = true
		}
	}
	if ev.out.JSON && len(ev.out.Violations) > 0 {
		ev.auditing = math.Max(0, ReferenceFinal(ev.det.F1, ev.patchDelta, ev.out.JSON))
	}
	ev.toolObs = toolObservation(msgs, ev.oracle, 1)
	ev.checkable = ev.oracle
	return ev
}

// evaluateStrict is the default rubric; see README.md.
func evaluateStrict(ctx context.Context, v *verifiers, fx *fixture, text string, msgs []env.Message) evaluation {
	ev := evaluation{out: ParseOutput(text), patchDelta: -1}
	file := verify.File{Path: fx.Path, Content: fx.Content}
	origFindings, origUnjudged, err := v.judge(ctx, fx.Type, file, fx.Hash)
	if err != nil {
		ev.scanError = err.Error()
	}
	origV := findingViolations(origFindings)
	ev.oracle = mergeOracle(fx.Oracle, origV)
	ev.pred = ev.out.Violations
	ev.det = ScoreDetection(ev.pred, ev.oracle, strictFPFactor)
	ev.detUnw = unweighted(ev.pred, ev.oracle)
	ev.toolObs = toolObservation(msgs, ev.oracle, strictFPFactor)
	if !ev.out.JSON {
		return ev
	}
	detection := ev.det.F1
	if len(ev.oracle) == 0 {
		// A clean file: the right answer is an empty list.
		detection = b2f(len(ev.pred) == 0)
	}
	// Only ids a verifier here can re-check earn fix credit.
	tools := map[string]bool{}
	for _, t := range toolsFor(fx.Type) {
		tools[t] = true
	}
	for _, o := range ev.oracle {
		if i := strings.IndexByte(o.ID, '/'); i > 0 && tools[o.ID[:i]] {
			ev.checkable = append(ev.checkable, o)
		}
	}
	ev.patchGiven = strings.TrimSpace(ev.out.Patch) != ""
	if ev.patchGiven {
		ev.strictPatch(ctx, v, fx, origV, len(origUnjudged))
	}
	ev.auditing = math.Max(0, math.Min(2, detection+ev.fixScore-ev.penalty))
	return ev
}

func (ev *evaluation) strictPatch(ctx context.Context, v *verifiers, fx *fixture, origV []Violation, origUnjudged int) {
	ev.patchAndReverify(fx, func(patched verify.File) ([]Violation, error) {
		ph := contentHash(patched.Content)
		if v.noCache {
			ph = ""
		}
		post, unjudged, err := v.judge(ctx, fx.Type, patched, ph)
		if err != nil {
			return nil, fmt.Errorf("patched file fails verification: %w", err)
		}
		if len(unjudged) > origUnjudged {
			// A document the verifier can no longer decode, or whose kind it
			// no longer knows, reports nothing: that is hiding, not fixing.
			return nil, fmt.Errorf("patched file has documents the verifiers cannot judge: %s", strings.Join(limitList(unjudged, 3), "; "))
		}
		return findingViolations(post), nil
	}, origV)
}

// patchAndReverify applies the answer's patch and scores it: suppressions
// the patch adds are removed (and cost), the structure must survive, and
// reverify judges the patched file (the scanners, or a policy pack's
// Rego). origV is what the verifier reported on the original.
func (ev *evaluation) patchAndReverify(fx *fixture, reverify func(patched verify.File) ([]Violation, error), origV []Violation) {
	patched, kind, err := applyFixPatch(fx, ev.out.Patch)
	ev.patchKind = kind
	if err != nil {
		ev.patchError = err.Error()
		if errors.Is(err, nesting.ErrTooDeep) {
			// A JSON Patch over the nesting bound would put its nesting
			// into the file: destructive, as a file over the bound is.
			ev.structError = "patch is over the nesting bound: " + err.Error()
			ev.penalty += penaltyDestructive
			return
		}
		ev.penalty += penaltyNotApplied
		return
	}
	ev.patchApplied = true
	ev.changed = changedLines(sizeBase(fx, kind), patched)
	patched, ev.suppressions, err = neutraliseSuppressions(fx.Type, fx.Content, patched)
	if len(ev.suppressions) > 0 || err != nil {
		ev.penalty += penaltySuppression
	}
	if err != nil {
		ev.structError = "patch adds a scanner suppression: " + err.Error()
		ev.penalty += penaltyDestructive
		return
	}
	before, err := fx.inventory()
	if err != nil {
		// The original does not parse: nothing to preserve, nothing to verify.
		ev.structError = "original does not parse: " + err.Error()
		return
	}
	// The patched manifest is parsed once for the structure check and the
	// verifiers that read YAML.
	file := verify.File{Path: fx.Path, Content: patched}
	if fx.Type == FixtureK8s {
		file.YAML = yamlsafe.Parse(fx.Path, patched, yamlLimits)
	}
	after, err := inventoryOf(fx.Type, file)
	if err != nil {
		// A file over the nesting bound is refused before it is parsed and
		// scored as one that does not parse: destructive, no fix credit.
		what := "does not parse"
		if errors.Is(err, nesting.ErrTooDeep) {
			what = "is over the nesting bound"
		}
		ev.structError = "patched file " + what + ": " + err.Error()
		ev.penalty += penaltyDestructive
		return
	}
	// A policy pack may require any other image; the scanners' condition
	// keeps the image's repository path and lets its registry change
	// (imagePath).
	if miss := before.missing(after, fx.Pack != nil); len(miss) > 0 {
		ev.structError = "patch removes or replaces " + strings.Join(limitList(miss, 5), ", ")
		ev.penalty += penaltyDestructive
		return
	}
	capability := judgeCapability(fx.Type, fx.Content, patched, ev.checkable)
	if len(capability.invalid) > 0 {
		ev.structError = "patched configuration is not valid: " + strings.Join(limitList(capability.invalid, 3), "; ")
		ev.penalty += penaltyDestructive
		return
	}
	ev.capability = append(capability.grown, capability.heldWhy...)
	ev.structOK = true
	var canonPatched []byte
	canonPatched, ev.rewordings = canonicalise(fx.Type, fx.Content, patched)
	if len(ev.rewordings) > 0 {
		file = verify.File{Path: fx.Path, Content: canonPatched}
		if fx.Type == FixtureK8s {
			file.YAML = yamlsafe.Parse(fx.Path, canonPatched, yamlLimits)
		}
	}
	// What the original already meant is not introduced by the patch: the
	// original is canonicalised the same way and its findings are the
	// baseline for "introduced".
	if canonOrig, notes := canonicalise(fx.Type, fx.Content, fx.Content); len(notes) > 0 {
		of := verify.File{Path: fx.Path, Content: canonOrig}
		if fx.Type == FixtureK8s {
			of.YAML = yamlsafe.Parse(fx.Path, canonOrig, yamlLimits)
		}
		if cv, err := reverify(of); err == nil {
			origV = dedupViolations(append(append([]Violation(nil), origV...), cv...))
		}
	}
	postV, err := reverify(file)
	if err != nil {
		ev.structOK = false
		ev.structError = err.Error()
		ev.penalty += penaltyDestructive
		return
	}
	// A finding whose capability survives is still there, whatever the
	// scanners no longer match.
	postV = append(postV, capability.held...)
	ev.fixed = goneIDs(ev.checkable, postV)
	ev.introduced = newIDs(origV, postV)
	if len(capability.grown) > 0 {
		// Privilege moved, not removed: no fix credit, and the cost of one
		// new high-severity finding.
		ev.fixed = nil
		ev.penalty += penaltyIntroducedW * verify.SeverityHigh.Weight()
	}
	var fixedW, totalW, introW float64
	for _, c := range ev.checkable {
		totalW += c.Severity.Weight()
	}
	for _, f := range ev.fixed {
		fixedW += f.Severity.Weight()
	}
	for _, n := range ev.introduced {
		introW += n.Severity.Weight()
	}
	if totalW > 0 {
		ev.fixScore = fixedW / totalW
	}
	ev.penalty += math.Min(penaltyIntroducedMx, penaltyIntroducedW*introW)
	allow := sizeAllowanceBase + sizeAllowancePerFix*len(ev.fixed)
	if excess := ev.changed - allow; excess > 0 {
		ev.penalty += math.Min(penaltySizeMax, penaltyPerLine*float64(excess))
	}
}

func limitList(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("and %d more", len(s)-n))
}

// mergeOracle is the strict ground truth: the row's labels (mutation-mapped
// ids, severity as labelled) plus every verifier finding on the original.
func mergeOracle(labels, found []Violation) []Violation {
	return dedupViolations(append(append([]Violation(nil), labels...), found...))
}

// goneIDs are oracle entries no longer reported after the patch.
func goneIDs(oracle, post []Violation) []Violation {
	still := map[string]bool{}
	for _, p := range post {
		still[p.ID] = true
	}
	var out []Violation
	for _, o := range dedupViolations(oracle) {
		if !still[o.ID] {
			out = append(out, o)
		}
	}
	return out
}

// newIDs are ids reported after the patch that were not reported before.
func newIDs(orig, post []Violation) []Violation {
	had := map[string]bool{}
	for _, o := range orig {
		had[o.ID] = true
	}
	var out []Violation
	for _, p := range dedupViolations(post) {
		if !had[p.ID] {
			out = append(out, p)
		}
	}
	return out
}

func unweighted(pred, oracle []Violation) Detection {
	flat := func(vs []Violation) []Violation {
		out := make([]Violation, len(vs))
		for i, v := range vs {
			out[i] = Violation{ID: v.ID, Severity: verify.SeverityHigh} // weight 1
		}
		return out
	}
	return ScoreDetection(flat(pred), flat(oracle), 1)
}

// toolObservation scores what the tool calls surfaced: the F1 of the ids in
// tool results against the oracle (0 without tool results).
func toolObservation(msgs []env.Message, oracle []Violation, fpFactor float64) float64 {
	obs := observedIDs(msgs)
	if len(obs) == 0 {
		return 0
	}
	return ScoreDetection(obs, oracle, fpFactor).F1
}

func ids(vs []Violation) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.ID)
	}
	slices.Sort(out)
	return out
}

// view is Score.Parsed: everything the E2 report computes from.
func (ev *evaluation) view(fx *fixture) map[string]any {
	m := map[string]any{
		"predicted":            ev.out.Violations,
		"predicted_ids":        ids(ev.out.Violations),
		"oracle":               ev.oracle,
		"oracle_ids":           ids(ev.oracle),
		"fixture_type":         fx.Type,
		"valid_json":           ev.out.JSON,
		"format_valid":         ev.out.SchemaValid,
		"confidence":           ev.out.Confidence,
		"precision":            ev.det.Precision,
		"recall":               ev.det.Recall,
		"f1":                   ev.det.F1,
		"precision_unweighted": ev.detUnw.Precision,
		"recall_unweighted":    ev.detUnw.Recall,
		"f1_unweighted":        ev.detUnw.F1,
		"patch_provided":       ev.patchGiven,
		"patch_applied":        ev.patchApplied,
		"patch_structure_ok":   ev.structOK,
		"fixed":                nonNil(ev.fixed),
		"fixed_ids":            ids(ev.fixed),
		"introduced":           nonNil(ev.introduced),
		"introduced_ids":       ids(ev.introduced),
		"fixable":              nonNil(ev.checkable),
		"fix_score":            ev.fixScore,
		"penalty":              ev.penalty,
		"changed_lines":        ev.changed,
		"suppressions_added":   len(ev.suppressions),
		"clean":                len(ev.oracle) == 0,
	}
	if ev.patchKind != "" {
		m["patch_kind"] = ev.patchKind
	}
	if ev.patchGiven {
		m["patch"] = clip.Bytes(ev.out.Patch, 8192, clip.Ellipsis)
	}
	if ev.patchDelta >= 0 {
		m["patch_delta"] = ev.patchDelta
	}
	if fx.Pack != nil {
		m["policy_pack"] = fx.Pack.ID()
		types := map[string]string{}
		for _, v := range append(append([]Violation(nil), ev.oracle...), ev.pred...) {
			if c, ok := fx.Pack.Clause(v.ID); ok {
				types[v.ID] = string(c.Type)
			}
		}
		m["clause_types"] = types
	}
	for k, s := range map[string]string{"patch_error": ev.patchError, "structure_error": ev.structError, "scan_error": ev.scanError} {
		if s != "" {
			m[k] = clip.Bytes(s, 500, clip.Ellipsis)
		}
	}
	if len(ev.out.Problems) > 0 {
		m["parse_problems"] = limitList(ev.out.Problems, 5)
	}
	if len(ev.rewordings) > 0 {
		m["rewordings"] = limitList(ev.rewordings, 8)
	}
	if len(ev.suppressions) > 0 {
		m["suppressions"] = limitList(ev.suppressions, 5)
	}
	if len(ev.capability) > 0 {
		m["capability"] = limitList(ev.capability, 5)
	}
	return m
}

func nonNil(vs []Violation) []Violation {
	if vs == nil {
		return []Violation{}
	}
	return vs
}
