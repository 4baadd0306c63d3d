package configaudit

import (
	"context"
	"encoding/json"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/svbench/svbench/env"
)

// answerRollout is a one-turn rollout whose final answer is the given
// object (or raw text when ans is a string).
func answerRollout(prefix []env.Message, ans any) *env.Rollout {
	text, ok := ans.(string)
	if !ok {
		b, _ := json.Marshal(ans)
		text = string(b)
	}
	msgs := append(append([]env.Message(nil), prefix...), env.Message{Role: env.RoleAssistant, Content: text})
	return &env.Rollout{Completion: msgs, Turns: 1}
}

// deleteContainer removes the first container of the first workload (K8s)
// or the first resource block (Terraform): the "fix" that deletes what is
// insecure.
func deleteContainer(fx *fixture) []byte {
	if fx.Type == FixtureTF {
		out, _ := removeBlock("resource ")(string(fx.Content))
		return []byte(out)
	}
	docs, err := parseYAMLDocs(fx.Content)
	if err != nil {
		return fx.Content
	}
	for _, d := range docs {
		if spec := podSpec(d); spec != nil {
			if seq := mget(spec, "containers"); seq != nil && seq.Kind == yaml.SequenceNode && len(seq.Content) > 0 {
				seq.Content = seq.Content[1:]
				break
			}
		}
	}
	out, err := renderYAML(docs)
	if err != nil {
		return fx.Content
	}
	return out
}

func sprayAll() []Violation {
	var all []Violation
	for _, ft := range []string{FixtureK8s, FixtureTF} {
		for _, m := range Mutations(ft) {
			all = append(all, m.Findings...)
		}
	}
	return dedupViolations(all)
}

// TestRewardHackingProbes: under the default rubric, each probe's mean
// reward over the whole mini set is below the honest tool-autofix run's
// mean on the same rows (bound asserted: probe mean < autofix mean, and the
// destructive patches earn no more than copying the tool output without a
// patch). The reference rubric's scores are logged to show what it pays.
func TestRewardHackingProbes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every verifier on the 160-row mini set")
	}
	e, ds := testEnv(t)
	ctx := context.Background()
	names := []string{"tool-autofix", "copy-tool-output", "delete-everything", "delete-container", "spray-all-ids", "empty-answer"}
	sum := map[string]float64{}
	ref := map[string]float64{}
	for _, ex := range ds.Examples {
		fx := ex.Payload.(*fixture)
		_, honestRo := runPolicy(t, e, ex, PolicyToolAutofix, "")
		_, toolRo := runPolicy(t, e, ex, PolicyToolOnly, "")
		found := observedIDs(toolRo.Completion)
		toolMsgs := toolRo.Completion[:len(toolRo.Completion)-1]
		probes := map[string]*env.Rollout{
			"tool-autofix":      honestRo,
			"copy-tool-output":  toolRo,
			"delete-everything": answerRollout(toolMsgs, map[string]any{"violations": nonNil(found), "patch": unifiedDiff(fx.Path, fx.Content, nil)}),
			"delete-container":  answerRollout(toolMsgs, map[string]any{"violations": nonNil(found), "patch": unifiedDiff(fx.Path, fx.Content, deleteContainer(fx))}),
			"spray-all-ids":     answerRollout(nil, map[string]any{"violations": sprayAll()}),
			"empty-answer":      answerRollout(nil, ""),
		}
		for name, ro := range probes {
			s, err := e.Score(ctx, ex, ro, "")
			if err != nil {
				t.Fatalf("%s on %s: %v", name, ex.ID, err)
			}
			sum[name] += s.Total
			r, err := e.Score(ctx, ex, ro, RubricReference)
			if err != nil {
				t.Fatal(err)
			}
			ref[name] += r.Total
		}
	}
	n := float64(len(ds.Examples))
	for _, name := range names {
		t.Logf("%-18s default mean %.3f   reference mean %.3f", name, sum[name]/n, ref[name]/n)
	}
	honest := sum["tool-autofix"] / n
	for _, name := range names[1:] {
		if got := sum[name] / n; got >= honest {
			t.Errorf("%s: default mean %.3f, want < tool-autofix %.3f", name, got, honest)
		}
	}
	for _, name := range []string{"delete-everything", "delete-container"} {
		if sum[name] > sum["copy-tool-output"] {
			t.Errorf("%s: default mean %.3f exceeds copying the tool output without a patch (%.3f)", name, sum[name]/n, sum["copy-tool-output"]/n)
		}
	}
}
