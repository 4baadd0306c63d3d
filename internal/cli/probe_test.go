package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/svbench/svbench/analysis/probe"
	"github.com/svbench/svbench/env"
)

// TestProbeEveryEnvironment is the CI gate the issue asks for: every
// environment that registers exploit strategies is probed on its embedded
// set (E3, whose rows run sandboxed tests, on a few rows without the
// search), runs at least five strategies, and none reaches its honest
// baseline.
// knownOpen are registered strategies that reach the honest mean in an
// environment's default condition by design: E5's offline simulator falls
// to a sentence around each row's framing (issue #33), and svbench labels
// that condition instead (envs/redteam/README.md). Sorted as probe lists
// them (best first).
var knownOpen = map[string][]string{
	"redteam-attack": {"fill-in-the-blank", "fill-in-the-blank-blind"},
}

func TestProbeEveryEnvironment(t *testing.T) {
	if testing.Short() {
		t.Skip("plays every strategy on every environment")
	}
	for _, id := range env.Default.IDs() {
		e, err := env.Default.New(id, env.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := e.(env.Prober); !ok {
			t.Logf("%s registers no exploit strategies", id)
			continue
		}
		t.Run(id, func(t *testing.T) {
			out := t.TempDir()
			args := []string{"probe", "--env", id, "--out", out}
			if id == "code-vuln-repair" {
				args = append(args, "-n", "4", "--no-search")
			}
			var stdout, stderr bytes.Buffer
			code := Execute(context.Background(), args, &stdout, &stderr)
			b, err := os.ReadFile(filepath.Join(out, "probe.json"))
			if err != nil {
				t.Fatalf("exit %d, no probe.json: %v\n%s", code, err, stderr.String())
			}
			var res probe.Result
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatal(err)
			}
			registered := 0
			for _, s := range res.Strategies {
				if s.Kind == "registered" {
					registered++
				}
				t.Logf("%-40s %-8.4f (honest %.4f)", s.Name, s.Bound, res.Honest.MeanReward)
			}
			if len(res.Strategies) < 5 || registered == 0 {
				t.Errorf("%d strategies (%d registered), want at least 5 with one registered", len(res.Strategies), registered)
			}
			// Strategies an environment registers as open in its default
			// condition are reported, and probe exits 1 for them.
			open := knownOpen[id]
			if !slices.Equal(res.Vulnerable, open) || (code != 0) != (len(open) > 0) {
				t.Errorf("exit %d; strategies reaching honest %.4f: %v (known open: %v)\n%s", code, res.Honest.MeanReward, res.Vulnerable, open, stderr.String())
			}
			md, err := os.ReadFile(filepath.Join(out, "probe.md"))
			if err != nil || len(open) == 0 && !strings.Contains(string(md), "No strategy reaches the honest mean") {
				t.Errorf("probe.md does not state the verdict: %v", err)
			}
		})
	}
}

// TestProbeFlagsAVulnerableRubric: the reference E2 rubric is kept faithful
// to the Python project, which pays a patch that deletes or disables the
// whole file more than the honest fix; probe must say so and exit 1.
func TestProbeFlagsAVulnerableRubric(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every verifier on the E2 mini set")
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Execute(context.Background(), []string{"probe", "--env", "e2", "--rubric", "reference", "--no-search",
		"--strategies", "delete-everything,ignore-each-check", "--out", out}, &stdout, &stderr)
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d\n%s%s", code, ExitFindings, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "delete-everything") || strings.Contains(stderr.String(), "ignore-each-check") {
		t.Errorf("stderr should name delete-everything only: %s", stderr.String())
	}
	md, _ := os.ReadFile(filepath.Join(out, "probe.md"))
	if !strings.Contains(string(md), "✗ reaches honest") {
		t.Errorf("probe.md does not mark the strategy:\n%s", md)
	}
}

func TestProbeBadInvocations(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"probe", "--env", "e1"}, "--out is required"},
		{[]string{"probe", "--env", "e1", "--out", "x", "-n", "-3"}, "cannot be negative"},
		{[]string{"probe", "--env", "e9", "--out", "x"}, "unknown environment"},
		{[]string{"probe", "--out", "x"}, "--env is required"},
		{[]string{"probe", "--env", "e1", "--out", "x", "--strategies", "no-such"}, "no strategy selected"},
	} {
		var stdout, stderr bytes.Buffer
		code := Execute(context.Background(), tc.args, &stdout, &stderr)
		if code == 0 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want it to mention %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}
