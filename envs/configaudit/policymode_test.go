package configaudit

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/configaudit/policypack"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/runner"
)

var (
	policyOnce sync.Once
	policyE    *Env
	policyDS   *env.Dataset
	policyErr  error
)

// policyEnv is the policy condition on its embedded mini set, shared.
func policyEnv(t testing.TB) (*Env, *env.Dataset) {
	t.Helper()
	policyOnce.Do(func() {
		policyE, policyErr = NewEnv(env.Options{Params: map[string]string{"mode": ModePolicy}})
		if policyErr != nil {
			return
		}
		policyDS, policyErr = policyE.Load(context.Background(), "")
	})
	if policyErr != nil {
		t.Fatal(policyErr)
	}
	return policyE, policyDS
}

func playPolicy(t testing.TB, e *Env, ex env.Example, p env.Policy) (env.Score, *env.Rollout) {
	t.Helper()
	ro, err := runner.RunEpisode(context.Background(), llm.Builtin{Policy: p}, e, ex, runner.EpisodeConfig{})
	if err != nil {
		t.Fatalf("%s: %v", ex.ID, err)
	}
	s, err := e.Score(context.Background(), ex, ro, "")
	if err != nil {
		t.Fatalf("score %s: %v", ex.ID, err)
	}
	return s, ro
}

// nearestClause maps scanner ids to the clauses whose pack.json lists them:
// what a model that copies the scanners and renames their ids would do.
func nearestClause(pk *policypack.Pack, found []Violation) []Violation {
	var out []Violation
	for _, f := range found {
		for _, c := range pk.Clauses() {
			for _, sid := range c.ScannerIDs {
				if sid == f.ID {
					out = append(out, Violation{ID: c.ID, Severity: c.Severity})
				}
			}
		}
	}
	return nonNil(dedupViolations(out))
}

// retagScopes moves every Terraform resource into the scope the packs'
// exceptions cover (dev databases, public buckets, edge security groups,
// ephemeral keys) without fixing anything.
func retagScopes(content []byte) []byte {
	out := string(content)
	for _, r := range []struct{ re, to string }{
		{`(env\s*=\s*)"[^"]*"`, `${1}"dev"`},
		{`("?data-class"?\s*=\s*)"[^"]*"`, `${1}"public"`},
		{`(tier\s*=\s*)"[^"]*"`, `${1}"edge"`},
	} {
		out = regexp.MustCompile(r.re).ReplaceAllString(out, r.to)
	}
	return []byte(out)
}

// deleteOffenders removes every Kubernetes object / Terraform block the
// Rego names in a violation.
func deleteOffenders(t testing.TB, fx *fixture) []byte {
	_, raw, err := fx.policyTruth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string]bool{}
	for _, v := range raw {
		bad[v.Object] = true
	}
	if fx.Type == FixtureTF {
		out := string(fx.Content)
		for obj := range bad {
			typ, name, ok := strings.Cut(obj, ".")
			if !ok {
				continue
			}
			if s, ok := removeBlock("resource \"" + typ + "\" \"" + name + "\"")(out); ok {
				out = s
			}
		}
		return []byte(out)
	}
	docs, err := parseYAMLDocs(fx.Content)
	if err != nil {
		return fx.Content
	}
	var keep []*yaml.Node
	for _, d := range docs {
		if !bad[objectKey(d)] {
			keep = append(keep, d)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	out, err := renderYAML(keep)
	if err != nil {
		return fx.Content
	}
	return out
}

// TestPolicyConditionProbes: on the policy mini set, the Rego-reading
// oracle is the upper bound, and every shortcut a policy could take scores
// below 60% of it: copying the scanners (tool-only), copying them and
// renaming each finding to the clause that overlaps it, listing every
// clause, and deleting the offending objects.
func TestPolicyConditionProbes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every pack and scanner on the policy mini set")
	}
	e, ds := policyEnv(t)
	ctx := context.Background()
	oracle, _ := e.Policy(PolicyOracle)
	toolOnly, _ := e.Policy(PolicyToolOnly)
	sum := map[string]float64{}
	solved := 0
	// Retagging is compared on the rows it changes with the same answer
	// without a patch: re-scoping must gain nothing over not patching.
	var retagRows int
	var retagSum, noPatchSum float64
	for _, ex := range ds.Examples {
		fx := ex.Payload.(*fixture)
		os, _ := playPolicy(t, e, ex, oracle)
		sum["policy-oracle"] += os.Total
		if os.Solved {
			solved++
		}
		ts, tro := playPolicy(t, e, ex, toolOnly)
		sum["copy-scanners (tool-only)"] += ts.Total
		found := observedIDs(tro.Completion)
		truth, _, err := fx.policyTruth(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var every []Violation
		for _, c := range fx.Pack.Clauses() {
			every = append(every, Violation{ID: c.ID, Severity: c.Severity})
		}
		retagged := retagScopes(fx.Content)
		probes := map[string]any{
			"retag-scope":                 map[string]any{"violations": nonNil(truth), "patch": unifiedDiff(fx.Path, fx.Content, retagged)},
			"scanners-renamed-to-clauses": map[string]any{"violations": nearestClause(fx.Pack, found)},
			"every-clause":                map[string]any{"violations": every},
			"delete-offenders":            map[string]any{"violations": nonNil(truth), "patch": unifiedDiff(fx.Path, fx.Content, deleteOffenders(t, fx))},
		}
		for name, ans := range probes {
			s, err := e.Score(ctx, ex, answerRollout(nil, ans), "")
			if err != nil {
				t.Fatalf("%s on %s: %v", name, ex.ID, err)
			}
			sum[name] += s.Total
			if name == "retag-scope" && string(retagged) != string(fx.Content) {
				if fixed, _ := s.Parsed["fixed_ids"].([]string); len(fixed) > 0 {
					t.Errorf("retagging earned fix credit on %s: %v", ex.ID, fixed)
				}
				noPatch, err := e.Score(ctx, ex, answerRollout(nil, map[string]any{"violations": nonNil(truth)}), "")
				if err != nil {
					t.Fatal(err)
				}
				retagRows++
				retagSum += s.Total
				noPatchSum += noPatch.Total
			}
		}
	}
	n := float64(len(ds.Examples))
	best := sum["policy-oracle"] / n
	t.Logf("%-30s mean %.3f (solved %d/%d)", "policy-oracle", best, solved, len(ds.Examples))
	// The oracle's detection is exact and its patch is the row's compliant
	// counterpart, which the generator keeps structure-preserving (a
	// mutation that renames, moves or re-tags an object carries fix
	// edits): it is the upper bound, so it must solve every row.
	if solved != len(ds.Examples) {
		t.Errorf("policy-oracle solves %d/%d rows; a row it cannot solve has a compliant counterpart the rubric refuses (give the mutation fix edits in generator.json)", solved, len(ds.Examples))
	}
	t.Logf("%-30s mean %.3f on the %d rows it changes, vs %.3f for the same ids without a patch", "retag-scope", retagSum/float64(max(retagRows, 1)), retagRows, noPatchSum/float64(max(retagRows, 1)))
	if retagRows == 0 || retagSum >= noPatchSum {
		t.Errorf("retag-scope: %d rows, mean %.3f, want some rows and less than not patching (%.3f)", retagRows, retagSum/float64(max(retagRows, 1)), noPatchSum/float64(max(retagRows, 1)))
	}
	for _, name := range []string{"copy-scanners (tool-only)", "scanners-renamed-to-clauses", "every-clause", "delete-offenders"} {
		got := sum[name] / n
		t.Logf("%-30s mean %.3f (%.0f%% of the oracle)", name, got, 100*got/best)
		if got >= 0.6*best {
			t.Errorf("%s: mean %.3f, want < 60%% of policy-oracle's %.3f", name, got, best)
		}
	}
}

func TestPolicyRowsCheckedAgainstCondition(t *testing.T) {
	e, ds := policyEnv(t)
	std, _ := testEnv(t)
	row := map[string]any{"id": "x", "fixture_type": "k8s", "path": "a.yaml", "content": "kind: Pod\n", "labels": map[string]any{"expected": []any{}}}
	raw, _ := json.Marshal(row)
	if _, err := e.ParseExample(raw); err == nil || !strings.Contains(err.Error(), "policy_pack") {
		t.Errorf("policy mode, row without policy_pack: %v", err)
	}
	row["policy_pack"] = "payments-k8z"
	raw, _ = json.Marshal(row)
	if _, err := e.ParseExample(raw); err == nil || !strings.Contains(err.Error(), `did you mean "payments-k8s"`) {
		t.Errorf("unknown pack: %v", err)
	}
	path := t.TempDir() + "/rows.jsonl"
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := std.Load(context.Background(), path); err == nil || !strings.Contains(err.Error(), "mode=policy") {
		t.Errorf("standard mode, dataset of policy rows: %v", err)
	}
	// One row (svbench score, the reward server) is scored in the condition
	// it names.
	good, _ := json.Marshal(map[string]any{"id": "y", "fixture_type": "k8s", "path": "a.yaml", "content": "kind: Pod\n", "policy_pack": "payments-k8s", "labels": map[string]any{"expected": []any{}}})
	if ex, err := std.ParseExample(good); err != nil || ex.Payload.(*fixture).Pack == nil {
		t.Errorf("standard mode, one policy row: %v", err)
	}
	if _, err := NewEnv(env.Options{Params: map[string]string{"check_policy_budget": "3"}}); err == nil || !strings.Contains(err.Error(), "mode=policy") {
		t.Errorf("policy parameter without mode=policy: %v", err)
	}
	if _, err := NewEnv(env.Options{Params: map[string]string{"mode": ModePolicy, "policy_packs": t.TempDir()}}); err == nil {
		t.Error("an empty directory loads as a policy pack")
	}
	if _, err := e.Score(context.Background(), ds.Examples[0], answerRollout(nil, ""), RubricReference); err == nil {
		t.Error("reference rubric accepted in the policy condition")
	}
}

// TestCheckPolicyTool: the tool applies a candidate patch and answers
// compliance and the number of failing clauses only (ids only with
// check_policy_detail=clauses), reports structure problems the rubric
// would punish, and stops at its budget.
func TestCheckPolicyTool(t *testing.T) {
	e, ds := policyEnv(t)
	var ex env.Example
	for _, x := range ds.Examples {
		fx := x.Payload.(*fixture)
		if truth, _, _ := fx.policyTruth(context.Background()); len(truth) > 0 && e.compliant.get(fx.Content) != nil {
			ex = x
			break
		}
	}
	fx := ex.Payload.(*fixture)
	ep, err := e.Start(context.Background(), ex)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	var names []string
	for _, tl := range ep.Tools() {
		names = append(names, tl.Name)
	}
	if !strings.Contains(strings.Join(names, ","), FnCheckPolicy) {
		t.Fatalf("tools %v lack %s", names, FnCheckPolicy)
	}
	call := func(patch string) string {
		args, _ := json.Marshal(map[string]string{"patch": patch})
		res, err := ep.Step(context.Background(), env.Message{Role: env.RoleAssistant, ToolCalls: []env.ToolCall{{ID: "c", Name: FnCheckPolicy, Arguments: string(args)}}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Messages[0].Content
	}
	fixedDiff := unifiedDiff(fx.Path, fx.Content, e.compliant.get(fx.Content))
	got := call(fixedDiff)
	if !strings.Contains(got, `"compliant":true`) || !strings.Contains(got, `"structure_ok":true`) {
		t.Errorf("compliant patch: %s", got)
	}
	for _, c := range fx.Pack.ClauseIDs() {
		if strings.Contains(got, c) {
			t.Errorf("count detail leaks clause id %s: %s", c, got)
		}
	}
	got = call(unifiedDiff(fx.Path, fx.Content, commentOut(fx.Content)))
	if !strings.Contains(got, `"structure_ok":false`) && !strings.Contains(got, "error") {
		t.Errorf("commented-out file: %s", got)
	}
	if got = call(fixedDiff); !strings.Contains(got, "budget exhausted") {
		t.Errorf("third call with budget 2: %s", got)
	}
}

// TestUserPolicyPack: --policy-pack DIR loads a pack of the user's own
// (here a copy of an embedded one under a new id) and rows naming it are
// scored by its Rego; a broken pack is refused naming the file.
func TestUserPolicyPack(t *testing.T) {
	src := "policypack/packs/payments-k8s"
	dir := t.TempDir() + "/acme"
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	pj, err := os.ReadFile(dir + "/pack.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/pack.json", []byte(strings.Replace(string(pj), `"payments-k8s"`, `"acme-payments"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := NewEnv(env.Options{Params: map[string]string{"mode": ModePolicy, "policy_packs": dir}})
	if err != nil {
		t.Fatal(err)
	}
	_, ds := policyEnv(t)
	var row map[string]any
	for _, ex := range ds.Examples {
		if fx := ex.Payload.(*fixture); fx.Pack.ID() == "payments-k8s" {
			if truth, _, _ := fx.policyTruth(context.Background()); len(truth) > 0 {
				row = map[string]any{"id": "u1", "fixture_type": "k8s", "path": fx.Path, "content": string(fx.Content), "policy_pack": "acme-payments", "labels": map[string]any{"expected": []any{}}}
				break
			}
		}
	}
	raw, _ := json.Marshal(row)
	ex, err := e.ParseExample(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ex.Prompt[0].Content, "(pack acme-payments)") {
		t.Errorf("system prompt does not carry the user's pack: %.200s", ex.Prompt[0].Content)
	}
	oracle, _ := e.Policy(PolicyOracle)
	s, _ := playPolicy(t, e, ex, oracle)
	if f1, _ := s.Parsed["f1"].(float64); f1 != 1 {
		t.Errorf("oracle on the user pack: f1 %v, parsed %v", s.Parsed["f1"], s.Parsed)
	}
	// A pack whose Rego does not compile is refused naming the file.
	if err := os.WriteFile(dir+"/broken.rego", []byte("package svbench.policypack\nviolations contains x if {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = NewEnv(env.Options{Params: map[string]string{"mode": ModePolicy, "policy_packs": dir}})
	if err == nil || !strings.Contains(err.Error(), "broken.rego") {
		t.Errorf("broken pack: %v", err)
	}
}
