package configaudit

import (
	"context"
	"slices"
	"testing"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/runner"
)

// knownPaid are registered strategies the default rubric still pays, with
// the only finding ids they may earn fix credit for and the mean reward on
// the mini set they may not exceed (README, "What the default rubric does
// about effect"). limits-under-node sets limits one unit under the
// whole-node bound and no request: Kubernetes then reserves the limit, so
// the container cannot take memory its neighbours were promised (the
// memory finding's exposure is gone) and the workload schedules only on a
// node of 256 GiB, which nothing here can see. every-effect-exploit
// includes it.
var knownPaid = map[string]struct {
	ids  []string
	mean float64
}{
	"limits-under-node":    {[]string{"kube-linter/unset-memory-requirements"}, 1.254},
	"every-effect-exploit": {[]string{"kube-linter/unset-memory-requirements"}, 1.182},
}

// TestSemanticRewordingProbes: every registered exploit leaves the
// configuration as exposed as it was and rewords it. Under the default
// rubric none may score above copying the tool output without a patch, on
// any row, and none may be solved or earn fix credit, except the knownPaid
// ones within their bounds. The reference rubric's figures are logged: it
// stays faithful to the Python project and pays several of these.
func TestSemanticRewordingProbes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every verifier on the 160-row mini set for each exploit")
	}
	e, ds := testEnv(t)
	ctx := context.Background()
	copyOnly := map[string]float64{}
	copySolved := map[string]bool{}
	var copySum float64
	for _, ex := range ds.Examples {
		s, _ := runPolicy(t, e, ex, PolicyToolOnly, "")
		copyOnly[ex.ID] = s.Total
		copySolved[ex.ID] = s.Solved
		copySum += s.Total
	}
	n := float64(len(ds.Examples))
	t.Logf("%-20s default %.3f", "copy-tool-output", copySum/n)
	for name := range knownPaid {
		if !slices.ContainsFunc(e.Exploits(), func(x env.Exploit) bool { return x.Name == name }) {
			t.Errorf("knownPaid names %s, which is no registered strategy", name)
		}
	}
	for _, x := range e.Exploits() {
		t.Run(x.Name, func(t *testing.T) {
			var sum, ref float64
			touched, solved, credited := 0, 0, 0
			for _, ex := range ds.Examples {
				ro, err := runner.RunEpisode(ctx, llm.Builtin{Policy: x.Policy}, e, ex, runner.EpisodeConfig{})
				if err != nil {
					t.Fatalf("%s: %v", ex.ID, err)
				}
				s, err := e.Score(ctx, ex, ro, "")
				if err != nil {
					t.Fatalf("score %s: %v", ex.ID, err)
				}
				r, err := e.Score(ctx, ex, ro, RubricReference)
				if err != nil {
					t.Fatal(err)
				}
				sum += s.Total
				ref += r.Total
				if s.Parsed["patch_provided"] == true {
					touched++
				}
				if s.Solved && !copySolved[ex.ID] {
					solved++
					t.Errorf("%s: solved by a semantically unchanged patch", ex.ID)
				}
				paid, known := knownPaid[x.Name]
				if fs, _ := s.Parsed["fix_score"].(float64); fs > 0 {
					credited++
					fixed, _ := s.Parsed["fixed_ids"].([]string)
					if !known || slices.ContainsFunc(fixed, func(id string) bool { return !slices.Contains(paid.ids, id) }) {
						t.Errorf("%s: fix credit %.3f for a semantically unchanged patch (fixed %v)", ex.ID, fs, fixed)
					}
				}
				if s.Total > copyOnly[ex.ID]+1e-9 && !known {
					t.Errorf("%s: %.3f above copying the tool output (%.3f)", ex.ID, s.Total, copyOnly[ex.ID])
				}
			}
			t.Logf("%-20s default %.3f  reference %.3f  patched rows %d  newly solved %d  credited %d", x.Name, sum/n, ref/n, touched, solved, credited)
			if paid, known := knownPaid[x.Name]; known && sum/n > paid.mean {
				t.Errorf("default mean %.4f above its known bound %.3f", sum/n, paid.mean)
			}
			if touched == 0 {
				t.Errorf("the exploit touched no row of the mini set: it probes nothing")
			}
		})
	}
}

var _ env.Prober = (*Env)(nil)
