package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/analysis/leaderboard"
)

// TestLeaderboard ranks two real E1 runs of built-in policies: 30 examples
// each, one rollout, same budget — grade C, budget matched.
func TestLeaderboard(t *testing.T) {
	root := t.TempDir()
	for _, m := range []string{"builtin:features", "builtin:heuristic"} {
		if code, _, stderr := runCLI(t, "eval", "--env", "e1", "--model", m, "-n", "30", "--out", root, "--progress", "none"); code != 0 {
			t.Fatalf("eval %s: exit %d: %s", m, code, stderr)
		}
	}
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "leaderboard", "--root", root, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var lb leaderboard.Leaderboard
	b, err := os.ReadFile(filepath.Join(out, "leaderboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &lb); err != nil {
		t.Fatal(err)
	}
	if len(lb.Entries) != 2 {
		t.Fatalf("entries %+v", lb.Entries)
	}
	for _, e := range lb.Entries {
		if e.Grade != "C" || !e.BudgetMatched || e.Examples != 30 || e.Condition != "default reward_source=executable" {
			t.Errorf("%s: grade %s matched %v examples %d condition %q (%s)", e.Model, e.Grade, e.BudgetMatched, e.Examples, e.Condition, e.Why)
		}
	}
	if !strings.Contains(stdout, "## network-logs · default reward_source=executable") {
		t.Errorf("stdout:\n%s", stdout)
	}
	if code, _, stderr := runCLI(t, "leaderboard", "--root", root, filepath.Join(root, "x")); code != 2 || !strings.Contains(stderr, "not both") {
		t.Errorf("root and runs: exit %d %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "leaderboard", filepath.Join(root, "missing")); code != 2 || !strings.Contains(stderr, "not a directory") {
		t.Errorf("missing run: exit %d %s", code, stderr)
	}
}
