package configaudit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/svbench/svbench/base/clip"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/configaudit/policypack"
	"github.com/svbench/svbench/verify"
)

// The policy condition (mode=policy). With tools, the standard condition's
// detection is saturated: its ground truth is what the scanners report, so
// copying them is a perfect audit. Here the ground truth is an
// organisation's policy: a written document the model reads (policy.md)
// and Rego that decides each row by execution, which the model never sees.
// Exceptions in a policy make some scanner findings acceptable and clauses
// no scanner checks make others invisible to them, so an auditor has to
// apply the policy, not the tools. See README.md, "Policy condition".

// Modes.
const (
	ModeStandard = "standard"
	ModePolicy   = "policy"
)

// check_policy detail levels.
const (
	CheckDetailCount   = "count"
	CheckDetailClauses = "clauses"
)

// Defaults of the policy condition.
const (
	DefaultCheckPolicyBudget = 2
	// FnCheckPolicy asks the hidden Rego whether a candidate patch brings
	// the file into compliance.
	FnCheckPolicy = "check_policy"
	// PolicyOracle reads the Rego: an upper bound, not a model.
	PolicyOracle = "policy-oracle"
)

// SystemPromptPolicy replaces SystemPrompt in the policy condition; the
// pack's document is appended to it.
const SystemPromptPolicy = `You are a cloud security engineer auditing one configuration file (Kubernetes YAML or Terraform) against your organisation's policy, given below with numbered clauses such as [PAY-DIGEST].

Tools: run_kubelinter (Kubernetes), run_trivy (Terraform) and run_opa (svbench's public security policies) report generic scanner findings; they do not know this organisation's policy, its exceptions or its own requirements. check_policy tells you whether a candidate patch would make the file comply with the policy; it may be called only a few times.

Report every clause of the policy the file violates, then fix them. Respond with only a JSON object:
{"violations": [{"id": "<CLAUSE-ID>", "severity": "low|med|high"}], "patch": "<unified diff of the file, or empty>", "confidence": 0.0-1.0}

- "id" is a clause id from the policy, exactly as written in brackets; list each violated clause once and nothing the policy allows (an exception in the policy is not a violation).
- The patch must keep every object, container and resource (a patch that deletes, disables or hides them is rejected) and must not add scanner suppressions.
- An empty "violations" list means the file complies.`

// PolicySettings are the parameters of the policy condition.
type PolicySettings struct {
	Mode              string `param:"mode" enum:"standard,policy" doc:"standard: findings are the scanners'; policy: findings are clauses of an organisation policy pack decided by its hidden Rego"`
	CheckPolicyBudget int    `param:"check_policy_budget" min:"0" max:"100" doc:"mode=policy: check_policy calls allowed per episode (0 removes the tool)"`
	CheckPolicyDetail string `param:"check_policy_detail" enum:"count,clauses" doc:"mode=policy: check_policy answers compliant + how many clauses fail (count) or pass/fail per clause (clauses, a different condition: a dummy patch then reveals the ground truth)"`
	PolicyPacks       string `param:"policy_packs" doc:"mode=policy: directories of your own policy packs (policy.md + Rego), separated by the OS path-list separator; --policy-pack DIR sets it"`
	PolicyDirs        string `param:"policy_dirs" doc:"directories of extra Rego policies the OPA verifier runs beside the built-in ones, separated by the OS path-list separator; --policy DIR sets it"`
}

func defaultPolicySettings() PolicySettings {
	return PolicySettings{Mode: ModeStandard, CheckPolicyBudget: DefaultCheckPolicyBudget, CheckPolicyDetail: CheckDetailCount}
}

// validate refuses policy-condition settings outside the policy
// condition and extra policy directories that are not directories: a
// mistyped --policy must stop the run before any episode, not when the
// scanners are first built mid-run.
func (p PolicySettings) validate() error {
	for _, dir := range splitDirs(p.PolicyDirs) {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("--policy %s (param policy_dirs): not a directory of Rego policies", dir)
		}
	}
	if p.Mode == ModePolicy {
		return nil
	}
	d := defaultPolicySettings()
	for _, c := range []struct {
		name string
		set  bool
	}{{"policy_packs", p.PolicyPacks != ""}, {"check_policy_budget", p.CheckPolicyBudget != d.CheckPolicyBudget}, {"check_policy_detail", p.CheckPolicyDetail != d.CheckPolicyDetail}} {
		if c.set {
			return fmt.Errorf("%s applies to the policy condition; add --param mode=policy", c.name)
		}
	}
	return nil
}

// paramFlags are E2's command-line shorthands.
var paramFlags = []env.ParamFlag{
	{Name: "policy", Param: "policy_dirs", Path: true, Repeatable: true,
		Usage: "directory of extra Rego policies (E2; repeatable)"},
	{Name: "policy-pack", Param: "policy_packs", Path: true, Repeatable: true, Implies: map[string]string{"mode": ModePolicy},
		Usage: "directory of your own E2 policy pack (policy.md, pack.json, *.rego; repeatable); implies --param mode=policy"},
}

// splitDirs reads a path-list parameter, skipping empty entries.
func splitDirs(param string) []string {
	var out []string
	for _, d := range filepath.SplitList(param) {
		if strings.TrimSpace(d) != "" {
			out = append(out, d)
		}
	}
	return out
}

// packSet is the packs an environment knows: the embedded ones and the
// user's, by id.
type packSet map[string]*policypack.Pack

func loadPacks(param string) (packSet, error) {
	ps := packSet{}
	for _, p := range policypack.Embedded() {
		ps[p.ID()] = p
	}
	for _, dir := range splitDirs(param) {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("%w: --policy-pack %s: not a directory (a pack is a directory holding policy.md, pack.json and *.rego)", env.ErrBadParam, dir)
		}
		p, err := policypack.LoadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("policy pack %s: %w", dir, err)
		}
		if prev, ok := ps[p.ID()]; ok && prev.Source() != p.Source() {
			return nil, fmt.Errorf("policy pack %s: id %q is already used by %s; give your pack another id in pack.json", dir, p.ID(), prev.Source())
		}
		ps[p.ID()] = p
	}
	return ps, nil
}

func (ps packSet) ids() []string {
	out := make([]string, 0, len(ps))
	for id := range ps {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

func (ps packSet) lookup(id string) (*policypack.Pack, error) {
	if p, ok := ps[id]; ok {
		return p, nil
	}
	msg := fmt.Sprintf("policy_pack %q is not known (known: %s)", id, strings.Join(ps.ids(), ", "))
	if s := env.Suggest(id, ps.ids()); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return nil, errors.New(msg + "; load your own with --policy-pack DIR")
}

// policySystemPrompt is the instructions plus the pack's document. The pack
// id is not secret: it names the document the model is reading.
func policySystemPrompt(p *policypack.Pack, tools bool) string {
	return policyInstructions(tools) + "\n\n# Organisation policy (pack " + p.ID() + ")\n\n" + strings.TrimSpace(p.Document()) + "\n"
}

// policyInstructions is SystemPromptPolicy, without the tools paragraph
// when the episode offers none.
func policyInstructions(tools bool) string {
	s := SystemPromptPolicy
	if !tools {
		s = strings.Replace(s, s[strings.Index(s, "Tools:"):strings.Index(s, "Report every")], "You have no tools: audit by reading the file.\n\n", 1)
	}
	return s
}

// packFromPrompt finds the pack id in a conversation's system prompt.
func packFromPrompt(conv []env.Message) string {
	const marker = "# Organisation policy (pack "
	for _, m := range conv {
		if m.Role != env.RoleSystem {
			continue
		}
		if i := strings.Index(m.Content, marker); i >= 0 {
			rest := m.Content[i+len(marker):]
			if j := strings.IndexByte(rest, ')'); j > 0 {
				return rest[:j]
			}
		}
	}
	return ""
}

// policyTruth is the pack's verdict on the original file, computed once
// per example: the ground truth of the policy condition is what the Rego
// says, whatever the row's labels claim.
func (fx *fixture) policyTruth(ctx context.Context) ([]Violation, []policypack.Violation, error) {
	fx.polOnce.Do(func() {
		vs, err := fx.Pack.Evaluate(ctx, fx.Path, fx.Content)
		if err != nil {
			fx.polErr = fmt.Errorf("policy pack %s on the original file: %w", fx.Pack.ID(), err)
			return
		}
		fx.polRaw = vs
		fx.polTruth = clauseViolations(fx.Pack, vs)
	})
	return fx.polTruth, fx.polRaw, fx.polErr
}

// clauseViolations turns the Rego's violations into scored ids: one per
// clause, with the clause's severity.
func clauseViolations(p *policypack.Pack, vs []policypack.Violation) []Violation {
	out := []Violation{}
	for _, id := range policypack.ViolatedClauses(vs) {
		sev := verify.SeverityMed
		if c, ok := p.Clause(id); ok && c.Severity != "" {
			sev = c.Severity
		}
		out = append(out, Violation{ID: id, Severity: sev})
	}
	return out
}

// normaliseClauseIDs maps what the model wrote to the pack's clause ids:
// case-insensitive, a "policy/" or "<pack>/" prefix dropped. Anything that
// names no clause is kept as written (a false positive).
func normaliseClauseIDs(p *policypack.Pack, vs []Violation) []Violation {
	byLower := map[string]string{}
	for _, id := range p.ClauseIDs() {
		byLower[strings.ToLower(id)] = id
	}
	out := make([]Violation, 0, len(vs))
	for _, v := range vs {
		id := strings.TrimSpace(v.ID)
		key := strings.ToLower(strings.Trim(id, "[] "))
		if i := strings.LastIndexByte(key, '/'); i >= 0 {
			key = key[i+1:]
		}
		if c, ok := byLower[key]; ok {
			id = c
		}
		out = append(out, Violation{ID: id, Severity: v.Severity})
	}
	return dedupViolations(out)
}

// evaluatePolicy is the default rubric of the policy condition: the strict
// rubric with the pack's Rego as the verifier. Detection is weighted F1
// over clause ids (false positives count twice); the patch earns fix
// credit for clauses the Rego no longer reports, under the same structure,
// suppression and size rules as the standard condition, and pays for
// clauses it newly violates.
func evaluatePolicy(ctx context.Context, fx *fixture, text string) (evaluation, error) {
	ev := evaluation{out: ParseOutput(text), patchDelta: -1}
	truth, _, err := fx.policyTruth(ctx)
	if err != nil {
		return ev, err
	}
	ev.oracle = truth
	ev.pred = normaliseClauseIDs(fx.Pack, ev.out.Violations)
	ev.det = ScoreDetection(ev.pred, ev.oracle, strictFPFactor)
	ev.detUnw = unweighted(ev.pred, ev.oracle)
	if !ev.out.JSON {
		return ev, nil
	}
	detection := ev.det.F1
	if len(ev.oracle) == 0 {
		detection = b2f(len(ev.pred) == 0)
	}
	ev.checkable = ev.oracle
	ev.patchGiven = strings.TrimSpace(ev.out.Patch) != ""
	if ev.patchGiven {
		ev.patchAndReverify(fx, func(patchedFile verify.File) ([]Violation, error) {
			patched := patchedFile.Content
			if msg := scopeProblem(ctx, fx, patched); msg != "" {
				return nil, errors.New(msg)
			}
			vs, err := fx.Pack.Evaluate(ctx, fx.Path, patched)
			if err != nil {
				var ie *policypack.InputError
				if errors.As(err, &ie) {
					return nil, fmt.Errorf("the policy cannot judge the patched file: %w", err)
				}
				return nil, err
			}
			return clauseViolations(fx.Pack, vs), nil
		}, truth)
	}
	ev.auditing = math.Max(0, math.Min(2, detection+ev.fixScore-ev.penalty))
	return ev, nil
}

// policyStatus is check_policy's answer.
type policyStatus struct {
	Compliant      bool              `json:"compliant"`
	FailingClauses int               `json:"failing_clauses"`
	StructureOK    bool              `json:"structure_ok"`
	StructureError string            `json:"structure_error,omitempty"`
	Clauses        map[string]string `json:"clauses,omitempty"`
	CallsLeft      int               `json:"check_policy_calls_left"`
}

var checkPolicyParams = json.RawMessage(`{"type":"object","required":["patch"],"properties":{"patch":{"type":"string","description":"a unified diff of the file under audit (the patch you intend to answer with)"}}}`)

func checkPolicyTool(detail string) env.Tool {
	d := "Apply a candidate patch to the file under audit and ask the organisation's policy (its hidden Rego) whether the patched file complies. Returns {compliant, failing_clauses, structure_ok}"
	if detail == CheckDetailClauses {
		d += " and pass/fail for every clause"
	}
	return env.Tool{Name: FnCheckPolicy, Description: d + ". Limited calls per task.", Parameters: checkPolicyParams, OwnBudget: true}
}

// checkPolicy runs one check_policy call. It reveals no clause internals:
// overall compliance and the number of failing clauses (or, with
// check_policy_detail=clauses, pass/fail per clause), plus whether the
// structure check the rubric applies would accept the patch.
func (ep *episode) checkPolicy(ctx context.Context, tc env.ToolCall, rec env.ToolCallRecord, start time.Time) (string, env.ToolCallRecord) {
	fail := func(msg string) (string, env.ToolCallRecord) {
		rec.Error = msg
		rec.DurationMS = float64(time.Since(start).Microseconds()) / 1000
		return toolError("%s", msg), rec
	}
	if ep.fx.Pack == nil {
		return fail("check_policy is offered only in the policy condition")
	}
	if ep.checks >= ep.e.checkBudget {
		return fail(fmt.Sprintf("check_policy budget exhausted (%d calls); answer now with the JSON object", ep.e.checkBudget))
	}
	if len(tc.Arguments) > MaxPatchBytes+1024 {
		return fail(fmt.Sprintf("arguments are %d bytes; the limit is %d", len(tc.Arguments), MaxPatchBytes+1024))
	}
	var a struct {
		Patch *string `json:"patch"`
	}
	if err := json.Unmarshal([]byte(tc.Arguments), &a); err != nil || a.Patch == nil {
		return fail(`arguments must be a JSON object like {"patch": "<unified diff of the file>"}`)
	}
	ep.checks++
	patched, _, err := applyFixPatch(ep.fx, *a.Patch)
	if err != nil {
		return fail("the patch does not apply: " + err.Error())
	}
	st := policyStatus{StructureOK: true, CallsLeft: ep.e.checkBudget - ep.checks}
	if msg := structureProblem(ctx, ep.fx, patched); msg != "" {
		st.StructureOK, st.StructureError = false, msg
	}
	pass, err := ep.fx.Pack.CheckClauses(ctx, ep.fx.Path, patched)
	if err != nil {
		return fail("the policy cannot judge the patched file: " + clip.Bytes(err.Error(), 300, clip.Ellipsis))
	}
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range pass {
			if !yield(id) {
				return
			}
		}
	})
	if ep.e.checkDetail == CheckDetailClauses {
		st.Clauses = map[string]string{}
	}
	for _, id := range ids {
		if !pass[id] {
			st.FailingClauses++
		}
		if st.Clauses != nil {
			st.Clauses[id] = map[bool]string{true: "pass", false: "fail"}[pass[id]]
		}
	}
	st.Compliant = st.FailingClauses == 0
	b, _ := json.Marshal(st)
	rec.Findings = new(st.FailingClauses)
	rec.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	return string(b), rec
}

// scopeProblem refuses a patch that changes what a resource is for the
// policy instead of making it comply: retagging a database env "prod" →
// "dev" or a bucket's data-class to "public" passes the Rego and fixes
// nothing. A scope tag may change only on a resource the original already
// violated a clause about that very tag on (the clause's text names the
// tag), where changing it is the fix.
func scopeProblem(ctx context.Context, fx *fixture, patched []byte) string {
	changes, err := fx.Pack.ScopeChanges(ctx, fx.Path, fx.Content, patched)
	if err != nil || len(changes) == 0 {
		return ""
	}
	_, raw, err := fx.policyTruth(ctx)
	if err != nil {
		return ""
	}
	var bad []string
	for _, c := range changes {
		allowed := false
		for _, v := range raw {
			if v.Object != c.Resource {
				continue
			}
			if cl, ok := fx.Pack.Clause(v.Clause); ok && strings.Contains(cl.Text, "`"+c.Tag+"`") {
				allowed = true
				break
			}
		}
		if !allowed {
			bad = append(bad, fmt.Sprintf("%s tag %s %q -> %q", c.Resource, c.Tag, c.Before, c.After))
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return "patch re-scopes resources instead of fixing them: " + strings.Join(limitList(bad, 3), ", ")
}

// structureProblem is the rubric's structure verdict on a patched file,
// for check_policy: suppressions added, objects or resources removed or
// disabled, a file that no longer parses.
func structureProblem(ctx context.Context, fx *fixture, patched []byte) string {
	cleaned, supp, err := neutraliseSuppressions(fx.Type, fx.Content, patched)
	if err != nil {
		return err.Error()
	}
	if len(supp) > 0 {
		return "adds scanner suppressions: " + strings.Join(limitList(supp, 3), "; ")
	}
	before, err := fx.inventory()
	if err != nil {
		return ""
	}
	after, err := takeInventory(fx.Type, cleaned)
	if err != nil {
		return "patched file does not parse: " + err.Error()
	}
	if miss := before.missing(after, true); len(miss) > 0 {
		return "removes or replaces " + strings.Join(limitList(miss, 5), ", ")
	}
	return scopeProblem(ctx, fx, cleaned)
}

// DemoConditions adds the policy condition to `svbench demo`.
func (e *Env) DemoConditions() []map[string]string {
	if e.mode == ModePolicy {
		return nil
	}
	return []map[string]string{{"mode": ModePolicy}}
}

// compliantIndex remembers each policy row's compliant counterpart by the
// hash of its content, for the policy-oracle baseline (which, like every
// policy, sees only the conversation).
type compliantIndex struct {
	mu sync.RWMutex
	m  map[string][]byte
}

func (c *compliantIndex) add(content, compliant []byte) {
	if len(compliant) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string][]byte{}
	}
	if len(c.m) < 1<<16 {
		c.m[contentHash(content)] = compliant
	}
}

func (c *compliantIndex) get(content []byte) []byte {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[contentHash(content)]
}

// actPolicyOracle is builtin:policy-oracle: it reads the pack's Rego (the
// upper bound on detection) and patches towards the row's compliant
// counterpart when the dataset carries one (svbench's generated rows do;
// without it the answer has no patch).
func (e *Env) actPolicyOracle(ctx context.Context, conv []env.Message) (env.Message, error) {
	p, content, err := fileUnderAudit(conv)
	if err != nil {
		return env.Message{}, err
	}
	packs, err := e.packSet()
	if err != nil {
		return env.Message{}, err
	}
	pk, err := packs.lookup(packFromPrompt(conv))
	if err != nil {
		return env.Message{}, fmt.Errorf("policy-oracle: %w", err)
	}
	vs, err := pk.Evaluate(ctx, p, []byte(content))
	if err != nil {
		return env.Message{}, fmt.Errorf("policy-oracle: %w", err)
	}
	ans := map[string]any{"violations": clauseViolations(pk, vs), "confidence": 1.0}
	if len(vs) > 0 {
		fx := &fixture{Type: fixtureTypeFor(p), Path: p, Content: []byte(content), Pack: pk}
		// The generator's compliant counterpart sometimes undoes a breaking
		// mutation by removing the object it added or by re-scoping a
		// resource; the rubric refuses such patches, so the oracle sends
		// none there rather than one it knows to be refused.
		if fixed := e.compliant.get([]byte(content)); fixed != nil && structureProblem(ctx, fx, fixed) == "" {
			if d := unifiedDiff(p, []byte(content), fixed); d != "" {
				ans["patch"] = d
			}
		}
	}
	return answerMessage(ans)
}
